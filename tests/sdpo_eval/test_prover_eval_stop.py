"""A stopped `sdpo_eval.prover_eval` keeps every judged sample: a real SIGINT or SIGTERM, sent while Lean checks a
batch (the checks in flight finish and are logged) or while the model generates, ends with one line giving the exact
`--resume` command, exit 130 and no traceback; that command draws exactly the samples the attempt log lacks."""
from __future__ import annotations

import asyncio
import json
import os
import shlex
import signal

import pytest

import reward.lean.score
import sdpo_eval.prover_eval as prover_eval
from tests.sdpo_eval.test_prover_eval import FAKE_REPL, SCRIPT, SeedEngine, data, fake_verifier  # noqa: F401

LEAN = ["--reward-kwarg", "backend=repl", "--reward-kwarg", f"repl_command={FAKE_REPL}"]


class Escaped(Exception):
    """What the test's own SIGTERM handler raises: the tool let the signal through (its default would kill pytest)."""


@pytest.fixture
def sigterm_escapes():
    def escaped(signum, frame):
        raise Escaped("SIGTERM reached the default action")

    earlier = signal.signal(signal.SIGTERM, escaped)
    yield
    signal.signal(signal.SIGTERM, earlier)


class BatchedEngine(SeedEngine):
    """SeedEngine generating two samples a call; `stop_on_call` (number, signal) sends the signal to this process
    as that generate call starts."""

    batch_size = 2

    def __init__(self, script, stop_on_call=None):
        super().__init__(script)
        self.calls, self.stop_on_call = 0, stop_on_call

    def generate(self, prompts, params, seeds=None):
        self.calls += 1
        if self.stop_on_call and self.calls == self.stop_on_call[0]:
            os.kill(os.getpid(), self.stop_on_call[1])
        return super().generate(prompts, params, seeds)


def _main(argv) -> int:
    try:
        return prover_eval.main(argv)
    except (KeyboardInterrupt, Escaped) as e:
        pytest.fail(f"the stop escaped the tool: {type(e).__name__}")


def _resume_argv(err: str) -> list[str]:
    last = err.strip().splitlines()[-1]
    assert last.startswith("interrupted: ") and "continue with: " in last, err
    command = shlex.split(last.split("continue with: ", 1)[1])
    assert command[:3] == ["python", "-m", "sdpo_eval.prover_eval"] and command[-1] == "--resume"
    return command[3:]


def _log(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_passk_a_stop_while_lean_checks_keeps_the_checks_in_flight(data, monkeypatch, tmp_path, capsys):  # noqa: F811
    calls = []

    async def verify_many(items, on_result=None, **kwargs):
        calls.append(len(items))
        for index, item in enumerate(items):
            if len(calls) == 2 and index == 1:   # the second batch: a Ctrl-C between its two checks
                os.kill(os.getpid(), signal.SIGINT)
                await asyncio.sleep(0.05)
            on_result(index, {"score": float(item["solution_str"] == "GOOD"), "verdict": "valid", "infra": 0.0,
                              "feedback": ""})
        return []

    monkeypatch.setattr(reward.lean.score, "verify_many", verify_many)
    engine = BatchedEngine(SCRIPT)
    monkeypatch.setattr(prover_eval, "load_engine", lambda spec, options: engine)
    log = tmp_path / "attempts.jsonl"
    argv = ["passk", "--model", "fake", "--data", str(data), "--n", "4", "--no-recheck", *LEAN,
            "--attempt-log", str(log)]
    assert _main(argv) == 130
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(_log(log)) == 4   # both batches, the one in flight included
    assert _resume_argv(err) == argv + ["--resume"]
    first = {(r["problem"], r["sample_key"]) for r in _log(log)}
    engine.seen.clear()
    assert _main(_resume_argv(err)) == 0
    drawn = {(name, f"seed={seed}") for name, seed in engine.seen}
    every = {(name, f"seed={j}") for name in SCRIPT for j in range(4)}
    assert drawn == every - first and len(_log(log)) == 12


def test_passk_sigterm_while_generating_keeps_what_was_judged(data, fake_verifier, monkeypatch, tmp_path,  # noqa: F811
                                                            capsys, sigterm_escapes):
    engine = BatchedEngine(SCRIPT, stop_on_call=(3, signal.SIGTERM))
    monkeypatch.setattr(prover_eval, "load_engine", lambda spec, options: engine)
    log = tmp_path / "attempts.jsonl"
    argv = ["passk", "--model", "fake", "--data", str(data), "--n", "4", "--no-recheck", *LEAN,
            "--attempt-log", str(log)]
    assert _main(argv) == 130
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(_log(log)) == 4 and _resume_argv(err) == argv + ["--resume"]


def test_a_stop_without_an_attempt_log_says_nothing_was_kept():
    line = prover_eval.stopped_line(None, ["passk"])
    assert line.startswith("interrupted: this run had no --attempt-log") and "--resume" in line
