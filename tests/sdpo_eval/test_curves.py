"""`python -m sdpo_eval.curves` on files written by verl's own FileLogger; the Lean recipes log to that file."""
from __future__ import annotations

import numpy as np

from sdpo_eval.curves import CURVES, main, read_metrics, series


def _log_run(path, monkeypatch, steps: int, sdpo: bool) -> None:
    from verl.utils.tracking import FileLogger

    monkeypatch.setenv("VERL_FILE_LOGGER_PATH", str(path))
    logger = FileLogger("sdpo-lean", path.stem)
    for step in range(1, steps + 1):
        data = {"critic/score/mean": 0.1 * step, "response_length/mean": np.float32(100 + step),
                "actor/entropy": 2.0 - 0.1 * step, "sdpo_lean/infra_fraction": 0.25 if step == 2 else 0.0}
        if sdpo:
            data["actor/sdpo/loss"] = 0.5 / step
        logger.log(data, step)
        if step % 2 == 0:
            logger.log({"val-core/minif2f/reward/mean@1": 0.1}, step)   # validation lines come separately
    logger.finish()


def test_curves_from_verl_file_logger_runs(tmp_path, monkeypatch, capsys):
    sdpo, grpo = tmp_path / "sdpo_toy.jsonl", tmp_path / "grpo_toy.jsonl"
    _log_run(sdpo, monkeypatch, steps=4, sdpo=True)
    _log_run(grpo, monkeypatch, steps=3, sdpo=False)
    with sdpo.open("a") as f:
        f.write('{"step": 5, "da')   # a run killed mid-write
    metrics = read_metrics(sdpo)
    assert series(metrics, "sdpo_lean/infra_fraction") == ([1, 2, 3, 4], [0.0, 0.25, 0.0, 0.0])
    assert metrics[2]["val-core/minif2f/reward/mean@1"] == 0.1 and metrics[2]["critic/score/mean"] == 0.2
    out = tmp_path / "plots" / "curves.png"
    assert main([str(sdpo), str(grpo), "--out", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    printed = capsys.readouterr().out
    assert "sdpo_toy: 4 steps" in printed and "sdpo_loss=0.125" in printed
    (grpo_line,) = [line for line in printed.splitlines() if line.startswith("grpo_toy:")]
    assert "3 steps" in grpo_line and "sdpo_loss" not in grpo_line


def test_a_file_without_training_metrics_is_an_error(tmp_path, capsys):
    other = tmp_path / "attempts.jsonl"
    other.write_text('{"step": 1, "data": {"verdict": "valid"}}\n')
    assert main([str(other), "--out", str(tmp_path / "c.png")]) == 2
    assert "none of" in capsys.readouterr().err and not (tmp_path / "c.png").exists()
    assert main([str(tmp_path / "absent.jsonl"), "--out", str(tmp_path / "c.png")]) == 2
    assert "VERL_FILE_LOGGER_PATH" in capsys.readouterr().err


def test_the_plotted_keys_are_the_ones_the_plugin_and_verl_log():
    from pathlib import Path

    plugin = "".join(p.read_text() for p in (Path(__file__).resolve().parents[2] / "sdpo_ext").rglob("*.py"))
    assert f'"{CURVES["infra_share"][0]}"' in plugin
    assert '"sdpo/loss"' in plugin and CURVES["sdpo_loss"][0] == "actor/sdpo/loss"   # verl prefixes actor metrics


def test_a_jsonl_that_is_not_a_logger_file_is_one_error_line(tmp_path, capsys):
    """An attempt log or any other JSONL (no "step"/"data"): exit 2 naming the line, no KeyError."""
    other = tmp_path / "attempts.jsonl"
    other.write_text('{"problem": "p", "verdict": "valid"}\n')
    assert main([str(other), "--out", str(tmp_path / "c.png")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {other}:1: not a verl file-logger record") and not (tmp_path / "c.png").exists()


def test_an_out_it_cannot_write_is_one_error_line_before_any_run_is_read(tmp_path, capsys):
    blocker = tmp_path / "a_file"
    blocker.write_text("kept")
    out = blocker / "curves.png"
    assert main([str(tmp_path / "absent.jsonl"), "--out", str(out)]) == 2
    assert capsys.readouterr().err == (f"error: --out {out}: {blocker} is a file, so no folder can be made there "
                                       "(choose another path)\n")
    assert blocker.read_text() == "kept"
