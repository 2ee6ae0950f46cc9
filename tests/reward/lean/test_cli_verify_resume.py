"""`reward.lean.cli verify` keeps what it checked: verdicts are written as they arrive (Ctrl-C keeps them), and
`--resume` checks only rows without a final verdict (new, changed, or infrastructure failures)."""
from __future__ import annotations

import json

import pytest

from reward.lean import cli

STATEMENT = "theorem t{i} : {i} = {i} := by\n"


def rows(n: int, changed: int | None = None) -> list[dict]:
    return [{"formal_statement": STATEMENT.format(i=i), "output": f"proof {i}" + (" v2" if i == changed else "")}
            for i in range(n)]


def write_input(path, items, bad_line: bool = False) -> str:
    lines = [json.dumps(r) for r in items] + (["{not json"] if bad_line else [])
    path.write_text("\n".join(lines) + "\n")
    return str(path)


@pytest.fixture
def lean(monkeypatch):
    """A stand-in verify_many (the backend is not the subject here): row i is valid, except `infra_rows`; records
    which rows it was asked to check; `stop_after` raises KeyboardInterrupt after that many results."""
    state = {"seen": [], "infra_rows": set(), "stop_after": None}

    async def verify_many(items, *, on_result, **config):
        for index, item in enumerate(items):
            if state["stop_after"] is not None and index == state["stop_after"]:
                raise KeyboardInterrupt
            state["seen"].append(item["output"])
            infra = item["output"] in state["infra_rows"]
            on_result(index, {"score": 0.0 if infra else 1.0, "verdict": "infra" if infra else "valid",
                              "feedback": "", "infra": 1.0 if infra else 0.0, "lean_time_s": 0.1})
        return []

    async def no_problems(options, backend=None):
        return []

    async def nothing():
        return None

    monkeypatch.setattr(cli, "verify_many", verify_many)
    monkeypatch.setattr(cli, "backend_problems", no_problems)
    monkeypatch.setattr(cli, "get_backend", lambda options: object())
    monkeypatch.setattr(cli, "aclose_backends", nothing)
    return state


def verdicts(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_ctrl_c_keeps_the_verdicts_so_far_and_resume_checks_only_the_rest(tmp_path, lean, capsys):
    src, out = write_input(tmp_path / "in.jsonl", rows(5), bad_line=True), tmp_path / "out.jsonl"
    argv = ["verify", src, "--out", str(out), "--backend", "repl", "--repl-command", "python3"]
    lean["stop_after"] = 3
    assert cli.main(argv) == cli.EXIT_INTERRUPTED
    assert "interrupted: 4 of 6 rows have verdicts" in capsys.readouterr().err   # 3 checked + the bad row
    assert [v["line"] for v in verdicts(out)] == [1, 2, 3, 6]
    lean.update(stop_after=None, seen=[])
    assert cli.main(argv + ["--resume"]) == cli.EXIT_BAD_ROWS   # the bad row is still bad
    assert lean["seen"] == ["proof 3", "proof 4"]
    final = verdicts(out)
    assert [v["line"] for v in final] == [1, 2, 3, 4, 5, 6] and final[-1]["verdict"] == cli.BAD_ROW
    assert all(v["verdict"] == "valid" for v in final[:5])


def test_resume_checks_infrastructure_failures_and_changed_rows_again(tmp_path, lean):
    out = tmp_path / "out.jsonl"
    argv = ["verify", "", "--out", str(out), "--backend", "repl", "--repl-command", "python3"]
    argv[1] = write_input(tmp_path / "in.jsonl", rows(4))
    lean["infra_rows"] = {"proof 1"}
    assert cli.main(argv) == cli.EXIT_INFRA
    lean.update(infra_rows=set(), seen=[])
    argv[1] = write_input(tmp_path / "in.jsonl", rows(4, changed=2))
    assert cli.main(argv + ["--resume"]) == 0
    assert lean["seen"] == ["proof 1", "proof 2 v2"]
    assert [v["output"] for v in verdicts(out)] == ["proof 0", "proof 1", "proof 2 v2", "proof 3"]


def test_without_resume_every_row_is_checked_again(tmp_path, lean):
    src, out = write_input(tmp_path / "in.jsonl", rows(3)), tmp_path / "out.jsonl"
    argv = ["verify", src, "--out", str(out), "--backend", "repl", "--repl-command", "python3"]
    assert cli.main(argv) == 0 and cli.main(argv) == 0
    assert len(lean["seen"]) == 6 and len(verdicts(out)) == 3


def test_resume_refuses_the_verdicts_of_another_input_and_says_how_to_start_anew(tmp_path, lean, capsys):
    out = tmp_path / "out.jsonl"
    argv = ["verify", write_input(tmp_path / "a.jsonl", rows(3)), "--out", str(out), "--backend", "repl",
            "--repl-command", "python3"]
    assert cli.main(argv) == 0
    before = out.read_text()
    capsys.readouterr()
    other = [{"formal_statement": "theorem u : 1 = 1 := by\n", "output": f"other {i}"} for i in range(3)]
    argv[1] = write_input(tmp_path / "b.jsonl", other)
    lean["seen"] = []
    assert cli.main(argv + ["--resume"]) == cli.EXIT_BAD_ROWS
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: --resume:") and "another input" in err[0]
    assert "without --resume" in err[0] and "another --out" in err[0]
    assert lean["seen"] == [] and out.read_text() == before   # nothing checked, the earlier verdicts untouched


def test_sigterm_keeps_the_verdicts_and_names_the_exact_resume_command(tmp_path, lean, monkeypatch, capsys):
    """A scheduler's SIGTERM, sent for real mid-run, is a stop like Ctrl-C: verdicts kept, one line with the command."""
    import os
    import shlex
    import signal

    class Escaped(Exception):
        pass

    def escaped(signum, frame):   # stands for SIGTERM's default action, which would end pytest
        raise Escaped

    real = cli.verify_many

    async def verify_then_stop(items, *, on_result, **config):
        def result(index, value):
            on_result(index, value)
            if index == 1:
                os.kill(os.getpid(), signal.SIGTERM)
        return await real(items, on_result=result, **config)

    monkeypatch.setattr(cli, "verify_many", verify_then_stop)
    src, out = write_input(tmp_path / "in.jsonl", rows(4)), tmp_path / "out.jsonl"
    argv = ["verify", src, "--out", str(out), "--backend", "repl", "--repl-command", "python3"]
    earlier = signal.signal(signal.SIGTERM, escaped)
    try:
        assert cli.main(argv) == cli.EXIT_INTERRUPTED
    finally:
        signal.signal(signal.SIGTERM, earlier)
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith("interrupted: 2 of 4 rows have verdicts in") and [v["line"] for v in verdicts(out)] == [1, 2]
    command = shlex.split(last.split("continue with: ", 1)[1])
    assert command == ["python", "-m", "reward.lean.cli", *argv, "--resume"]
    monkeypatch.setattr(cli, "verify_many", real)
    lean["seen"] = []
    assert cli.main(command[3:]) == 0 and lean["seen"] == ["proof 2", "proof 3"]
