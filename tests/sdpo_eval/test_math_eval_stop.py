"""A stopped `sdpo_eval.math_eval` keeps every graded sample: a real SIGINT or SIGTERM sent to a running evaluation
(a slow stand-in engine, generating two samples a call) leaves each sample graded so far in `--sample-log`, ends with
one line giving the exact `--resume` command and no traceback, and that command draws exactly the samples left."""
from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import sdpo_eval.math_eval as math_eval
from sdpo_eval.engines import Completion, ModelSpec

PROBLEMS = [{"id": f"p{i}", "problem": f"What is ${i}+{i}$?", "answer": str(2 * i), "subject": "algebra"}
            for i in range(3)]
N = 8   # 24 samples, 0.2 s each, two a call: the stop comes well before the end

DRIVER = textwrap.dedent("""
    import sys, time
    import sdpo_eval.math_eval as m
    from reward.math.grader import Grade
    from sdpo_eval.engines import Completion, ModelSpec

    class Slow:
        spec, has_chat_template, batch_size = ModelSpec("slow"), True, 2

        def generate(self, prompts, params, seeds=None):
            time.sleep(0.2 * len(prompts))
            return [Completion("$\\\\boxed{2}$", 3, "stop") for _ in prompts]

    m.load_engine = lambda spec, options: Slow()
    m.grade = lambda reply, reference, options: Grade("valid" if reference == "2" else "wrong", "2", "2")
    sys.exit(m.main(sys.argv[1:]))
""")


class Recording:
    spec, has_chat_template = ModelSpec("slow"), True

    def __init__(self):
        self.seeds: list[int] = []

    def generate(self, prompts, params, seeds=None):
        self.seeds += list(seeds)
        return [Completion("$\\boxed{2}$", 3, "stop") for _ in prompts]


def _samples(log: Path) -> list[dict]:
    lines = log.read_text().splitlines()[1:] if log.exists() else []
    return [json.loads(line) for line in lines if line.endswith("}")]


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_a_stop_keeps_each_graded_sample_and_names_the_resume_command(tmp_path, monkeypatch, stop):
    src = tmp_path / "toy.jsonl"
    src.write_text("".join(json.dumps(p) + "\n" for p in PROBLEMS))
    log = tmp_path / "samples.jsonl"
    argv = ["--model", "slow", "--input", str(src), "--n", str(N), "--temperature", "0.7", "--sample-log", str(log)]
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    root = str(Path(__file__).parents[2])   # this checkout's packages, not another install's
    proc = subprocess.Popen([sys.executable, str(driver), *argv], cwd=root, env={**os.environ, "PYTHONPATH": root},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while len(_samples(log)) < 4 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)   # samples must reach the log while the evaluation still runs
    assert proc.poll() is None, "the evaluation ended before the stop: " + proc.stderr.read()[-2000:]
    assert len(_samples(log)) >= 4, "no sample reached the log while generating"
    proc.send_signal(stop)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err[-2000:]
    assert "Traceback" not in err
    last = err.strip().splitlines()[-1]
    kept = _samples(log)
    assert last.startswith(f"interrupted: {len(kept)} of {len(PROBLEMS) * N} samples are in {log}; continue with: ")
    assert 4 <= len(kept) < len(PROBLEMS) * N

    command = shlex.split(last.split("continue with: ", 1)[1])
    assert command[:3] == ["python", "-m", "sdpo_eval.math_eval"] and command[3:] == argv + ["--resume"]
    engine = Recording()
    monkeypatch.setattr(math_eval, "load_engine", lambda spec, options: engine)
    assert math_eval.main(command[3:]) == 0
    logged = {(r["id"], r["sample"]) for r in kept}
    missing = {(p["id"], j) for p in PROBLEMS for j in range(N)} - logged
    expected = sorted(math_eval.sample_seed(0, pid, j) for pid, j in missing)
    assert sorted(engine.seeds) == expected   # exactly the samples the log lacked
    final = _samples(log)
    assert sorted((r["id"], r["sample"]) for r in final) == sorted((p["id"], j) for p in PROBLEMS for j in range(N))


def test_a_stop_without_a_log_says_nothing_was_kept():
    line = math_eval.stopped_line(None, None, 0, 24, ["--model", "m"])
    assert line.startswith("interrupted: this run had no --sample-log") and "--resume" in line
