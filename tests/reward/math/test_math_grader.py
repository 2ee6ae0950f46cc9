"""Hard time limits: grading returns within seconds from any thread; a timeout is the reply's grader_timeout (scored
0, not infra); a grader failure is infra; workers are replaced."""
from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from reward.math.grader import Grade, GradingPool, grade
from reward.math.options import MathGradingOptions


def limit(seconds: float) -> MathGradingOptions:
    return MathGradingOptions(timeout_s=seconds)

TOWERS = [r"\boxed{2^{2^{2^{2^{100}}}}}", r"\boxed{9^{9^{9^9}}}", r"\boxed{10^{10^{10}}}"]
HUGE_SUM = r"\boxed{" + "+".join(f"x^{{{i}}}" for i in range(4000)) + "}"  # 30,000 characters


@pytest.fixture(scope="module")
def pool():
    pool = GradingPool(max_workers=2)
    assert grade(r"\boxed{1}", "1", pool=pool).correct  # start a worker outside the timed tests
    yield pool
    pool.close()


@pytest.mark.parametrize("reply", TOWERS, ids=["power-tower", "9^9^9^9", "10^10^10"])
def test_runaway_comparison_times_out_from_a_thread(pool, reply):
    with ThreadPoolExecutor(1) as executor:
        start = time.monotonic()
        result = executor.submit(grade, reply, "3", limit(1.5), pool).result()
        elapsed = time.monotonic() - start
    assert result.verdict == "grader_timeout" and not result.infra and not result.correct
    assert result.extracted is not None
    assert elapsed < 10, elapsed


def test_a_stuck_grading_does_not_hold_other_threads(pool):
    """The worker, not the caller, runs sympy: the caller waits with the GIL released."""
    stuck = threading.Thread(target=grade, args=(TOWERS[0], "3", limit(4.0), pool))
    stuck.start()
    time.sleep(0.2)
    start = time.monotonic()
    easy = grade(r"\boxed{\frac{1}{2}}", "0.5", limit(4.0), pool)
    assert easy.correct and time.monotonic() - start < 4.0  # includes starting a second worker
    stuck.join()


def test_worker_is_replaced_after_a_timeout(pool):
    tower = TOWERS[0][7:-1]
    assert grade(TOWERS[0], "3", limit(1.0), pool) == Grade("grader_timeout", tower, tower)  # still a maj@k vote
    assert grade(r"\boxed{7}", "7", limit(5.0), pool) == Grade("valid", "7", "7")


def test_grading_from_an_event_loop(pool):
    async def main():
        loop = asyncio.get_running_loop()
        return await asyncio.gather(*(loop.run_in_executor(None, grade, f"\\boxed{{{i}}}", "2", limit(5.0), pool)
                                      for i in range(4)))

    verdicts = [g.verdict for g in asyncio.run(main())]
    assert verdicts == ["wrong", "wrong", "valid", "wrong"]


def test_verdicts_without_a_comparison():
    assert grade("no answer here", "3").verdict == "no_answer"
    assert grade(r"\boxed{3}", "  ").verdict == "bad_task" and Grade("bad_task").infra
    assert not Grade("no_answer").infra and not Grade("wrong").infra and not Grade("grader_timeout").infra
    assert Grade("infra").infra and not Grade("grader_timeout").correct
    with pytest.raises(ValueError, match="max_workers"):
        GradingPool(max_workers=0)


def test_worker_crash_is_infra(pool, monkeypatch):
    """A worker that dies mid-comparison is infra (masked), not a wrong answer."""
    grade(r"\boxed{1}", "1", pool=pool)
    worker = pool._idle[-1]
    worker.process.kill()
    worker.process.wait()
    assert grade(r"\boxed{1}", "1", limit(5.0), pool).verdict == "infra"
    assert grade(r"\boxed{1}", "1", limit(5.0), pool).verdict == "valid"


@pytest.mark.parametrize("literal", ["9" * 100_000, "9" * 20_000, HUGE_SUM[7:-1]], ids=["1e5-digits", "2e4-digits",
                                                                                      "4000-term-sum"])
def test_a_huge_answer_is_bounded_before_sympy_from_a_thread(pool, literal):
    """The issue's speed class: a 100,000-digit literal used the whole 5 s limit (a quadratic repeating-decimal regex,
    then sympy), as did a 4000-term sum. Now the work is bounded before sympy sees it (an answer over
    `MAX_CHARS` compares as text): a verdict well inside the limit, from a thread."""
    with ThreadPoolExecutor(1) as executor:
        start = time.monotonic()
        result = executor.submit(grade, f"\\boxed{{{literal}}}", "3", limit(5.0), pool).result()
        same = executor.submit(grade, f"So it is $\\boxed{{{literal}}}$.", literal, limit(5.0), pool).result()
        elapsed = time.monotonic() - start
    assert result.verdict == "wrong" and same.verdict == "valid"
    assert elapsed < 2.0, elapsed


def test_prompt_opens_think_is_passed_to_the_extractor(pool):
    """With the prompt ending inside <think>, a reply with no </think> was cut off while thinking."""
    cut = "Let me think. 10 + 32 = 42, so the answer is \\boxed{42}"
    assert grade(cut, "42", limit(5.0), pool).verdict == "valid"
    opened = MathGradingOptions(timeout_s=5.0, prompt_opens_think=True)
    assert grade(cut, "42", opened, pool).verdict == "no_answer"
    assert grade("reasoning</think>The answer is \\boxed{42}.", "42", opened, pool).verdict == "valid"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="CPU time is read from /proc")
def test_a_worker_starved_of_cpu_is_infra_not_the_replys_timeout(pool):
    """A comparison that ran past the limit without using the CPU (a busy machine, here a stopped worker) says nothing
    about the reply: masked as infra, within the same wall-clock limit."""
    grade(r"\boxed{1}", "1", limit(5.0), pool)
    worker = pool._idle[-1]
    os.kill(worker.process.pid, signal.SIGSTOP)
    start = time.monotonic()
    assert grade(r"\boxed{\frac{1}{2}}", "0.5", limit(1.0), pool).verdict == "infra"
    assert time.monotonic() - start < 3.0
    assert grade(r"\boxed{\frac{1}{2}}", "0.5", limit(5.0), pool).verdict == "valid"


def test_a_worker_starts_without_a_runpy_warning():
    """The worker runs as `python -m reward.math.worker`, a module its package does not import, so runpy does not
    warn that it was in sys.modules before it ran (issue 50; it did when the worker was `reward.math.grader`)."""
    code = "from reward.math.grader import grade; assert grade(r'\\boxed{1}', '1').correct"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          cwd=Path(__file__).resolve().parents[3])
    assert done.returncode == 0, done.stderr[-2000:]
    assert "RuntimeWarning" not in done.stderr, done.stderr[-2000:]
