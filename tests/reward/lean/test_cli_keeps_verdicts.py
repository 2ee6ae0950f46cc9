"""`reward.lean.cli verify` never truncates or deletes an earlier verdict file on a run that fails: the backend is down,
rows end as infrastructure failures, or the run is stopped."""
from __future__ import annotations

import json
import socket
import subprocess
import sys

from lean_env.testing.fake_kimina import FakeKimina
from reward.lean import cli
from tests.reward.lean.test_cli_bad_rows import _run_in_thread, kimina_double  # noqa: F401 (fixture)
from tests.reward.lean.test_cli_verify_resume import lean, rows, verdicts, write_input  # noqa: F401 (fixture)

STATEMENT = "theorem t1 (x : ℝ) (h : x = 2) : x + 1 = 3 := by\n"


def _unused_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _three_verdicts(tmp_path, answer, kimina_double):  # noqa: F811
    """in.jsonl of three rows and out.jsonl with their verdicts from the Kimina double."""
    kimina_double(FakeKimina())
    inp, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    inp.write_text("".join(json.dumps({"formal_statement": STATEMENT, "output": answer(p)}) + "\n"
                           for p in ("norm_num", "sorry", "norm_num")))
    assert _run_in_thread(["verify", str(inp), "--out", str(out), "--backend", "kimina"]) == 0
    assert len(out.read_text().splitlines()) == 3
    return inp, out


def test_a_server_that_is_down_leaves_the_earlier_verdicts_as_they_were(tmp_path, answer, kimina_double):  # noqa: F811
    inp, out = _three_verdicts(tmp_path, answer, kimina_double)
    before = out.read_bytes()
    url = f"http://127.0.0.1:{_unused_port()}"
    for resume in ([], ["--resume"]):
        if resume:   # a new row, so that --resume has one to check
            inp.write_text(inp.read_text() + json.dumps({"formal_statement": STATEMENT, "output": "x"}) + "\n")
        proc = subprocess.run([sys.executable, "-m", "reward.lean.cli", "verify", str(inp), "--out", str(out),
                               "--backend", "kimina", "--url", url, *resume],
                              capture_output=True, text=True, timeout=120, check=False)
        assert proc.returncode == cli.EXIT_INFRA and "does not answer" in proc.stderr, proc.stderr[-2000:]
        assert out.read_bytes() == before
        assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl", "out.jsonl"]   # no partial file left


def test_rows_ending_as_infra_failures_leave_the_earlier_verdicts(tmp_path, answer, kimina_double, capsys):  # noqa: F811
    inp, out = _three_verdicts(tmp_path, answer, kimina_double)
    before = out.read_bytes()
    kimina_double(FakeKimina(faults=[500] * 100))
    argv = ["verify", str(inp), "--out", str(out), "--backend", "kimina", "--backoff-s", "0.01"]
    assert _run_in_thread(argv) == cli.EXIT_INFRA
    assert out.read_bytes() == before
    assert f"-> {out}.partial ({out}, from an earlier run, is unchanged)" in capsys.readouterr().out
    assert [v["verdict"] for v in verdicts(tmp_path / "out.jsonl.partial")] == ["infra", "sorry", "infra"]
    kimina_double(FakeKimina())
    assert _run_in_thread(argv + ["--resume"]) == 0   # the infra rows are checked again
    assert [v["verdict"] for v in verdicts(out)] == ["valid", "sorry", "valid"]
    assert not (tmp_path / "out.jsonl.partial").exists()


def test_a_stop_over_an_earlier_output_keeps_it_and_resume_reads_both(tmp_path, lean, capsys):  # noqa: F811
    src, out = write_input(tmp_path / "in.jsonl", rows(5)), tmp_path / "out.jsonl"
    argv = ["verify", src, "--out", str(out), "--backend", "repl", "--repl-command", "python3"]
    lean["infra_rows"] = {"proof 4"}
    assert cli.main(argv) == cli.EXIT_INFRA   # no earlier output: the verdicts are the output
    before = out.read_bytes()
    lean.update(infra_rows=set(), stop_after=2, seen=[])
    assert cli.main(argv) == cli.EXIT_INTERRUPTED
    assert out.read_bytes() == before
    assert f"2 of 5 rows have verdicts in {out}.partial" in capsys.readouterr().err
    lean.update(stop_after=None, seen=[])
    assert cli.main(argv + ["--resume"]) == 0
    assert lean["seen"] == ["proof 4"]   # rows 1-2 from the partial file, 3-4 from the earlier output
    assert [v["verdict"] for v in verdicts(out)] == ["valid"] * 5


def test_only_a_cut_last_line_is_asked_about_truncation(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text("not json\nnot json either\n")
    problems = [problem for _, _, problem in cli.read_rows(str(path))]
    assert all(p.startswith("not valid JSON") and "truncated" not in p for p in problems), problems
    path.write_text('not json\n{"formal_statement": "theorem t')
    first, last = [problem for _, _, problem in cli.read_rows(str(path))]
    assert "truncated" not in first and last.endswith("; a truncated last line?")
