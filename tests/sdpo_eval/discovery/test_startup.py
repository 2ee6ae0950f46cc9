"""sdpo_eval.discovery.startup: the start-up table of launched runs, phase by phase, from their stdout."""
from __future__ import annotations

import json

import pytest

from sdpo_eval.discovery import cli, startup
from sdpo_ext.startup import timeline


def run(folder, launched_at: float, config: str, marks: dict[str, float], extra: str = ""):
    folder.mkdir(parents=True)
    (folder / "launch.json").write_text(json.dumps({"launched_at": launched_at, "config": config}))
    lines = [f"(TaskRunner pid=7) {timeline.MARK} {phase} {t:.3f} pid=7" for phase, t in marks.items()]
    (folder / "stdout.log").write_text("noise\n" + "\n".join(lines) + "\n" + extra)


def test_the_table_gives_seconds_since_launch_per_phase_and_config(tmp_path):
    runs = tmp_path / "runs"
    run(runs / "demo/grpo/seed1", 1000.0, "before", {"trainer_init": 1040.0, "init_done": 1200.5,
                                                    "first_step_done": 1300.0},
        "(vLLMHttpServer pid=9) INFO 12-06 init engine (profile, create kv cache, warmup model) took 12.50 seconds\n")
    run(runs / "demo/grpo/seed3", 1000.0, "before", {"trainer_init": 1060.0, "init_done": 1180.0})
    run(runs / "demo/grpo/seed2", 2000.0, "cut", {"trainer_init": 2020.0, "trainer_init_again": 1.0})
    assert cli.main(["startup", "--run-dir", str(runs), "--out-prefix", str(tmp_path / "startup")]) == 0
    data = json.loads((tmp_path / "startup.json").read_text())
    assert data["runs"]["demo/grpo/seed1"]["phases"] == {"trainer_init": 40.0, "init_done": 200.5,
                                                         "first_step_done": 300.0}
    assert data["runs"]["demo/grpo/seed1"]["vllm"] == {"vllm_engine_init_s": 12.5}
    before = data["configs"]["before"]["phases"]
    assert before["trainer_init"] == {"median": 50.0, "min": 40.0, "max": 60.0, "reached": 2}
    assert before["first_step_done"]["reached"] == 1
    assert data["configs"]["cut"]["phases"]["trainer_init"]["median"] == 20
    table = (tmp_path / "startup.md").read_text().splitlines()
    assert table[0] == "| phase (s since launch) | before (2 runs) | cut (1 runs) |"
    assert "| trainer_init | 50.0 [40.0-60.0] (2) | 20.0 [20.0-20.0] (1) |" in table


def test_no_launched_run_is_a_clear_error(tmp_path, capsys):
    assert cli.main(["startup", "--run-dir", str(tmp_path), "--out-prefix", str(tmp_path / "s")]) == 2
    assert "no launch.json" in capsys.readouterr().err
    assert startup.STARTUP_LINE.search("INFO Graph capturing finished in 3.5 sec")


def test_startup_without_its_prefix_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(["startup", "--run-dir", "r"])
    assert stop.value.code == 2 and "required: --out-prefix" in capsys.readouterr().err
