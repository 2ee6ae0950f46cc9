"""Hard time limits: grading returns within seconds from any thread; a timeout is infra; workers are replaced."""
from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from reward.math_grader import Grade, GradingPool, grade

TOWERS = [r"\boxed{2^{2^{2^{2^{100}}}}}", r"\boxed{9^{9^{9^9}}}",
          r"\boxed{" + "+".join(f"x^{{{i}}}" for i in range(4000)) + "}"]


@pytest.fixture(scope="module")
def pool():
    pool = GradingPool(max_workers=2)
    assert grade(r"\boxed{1}", "1", pool=pool).correct  # start a worker outside the timed tests
    yield pool
    pool.close()


@pytest.mark.parametrize("reply", TOWERS, ids=["power-tower", "9^9^9^9", "huge-sum"])
def test_runaway_comparison_times_out_from_a_thread(pool, reply):
    with ThreadPoolExecutor(1) as executor:
        start = time.monotonic()
        result = executor.submit(grade, reply, "3", 1.5, pool).result()
        elapsed = time.monotonic() - start
    assert result.verdict == "timeout" and result.infra and not result.correct
    assert result.extracted is not None
    assert elapsed < 10, elapsed


def test_a_stuck_grading_does_not_hold_other_threads(pool):
    """The worker, not the caller, runs sympy: the caller waits with the GIL released."""
    stuck = threading.Thread(target=grade, args=(TOWERS[0], "3", 4.0, pool))
    stuck.start()
    time.sleep(0.2)
    start = time.monotonic()
    easy = grade(r"\boxed{\frac{1}{2}}", "0.5", 4.0, pool)
    assert easy.correct and time.monotonic() - start < 4.0  # includes starting a second worker
    stuck.join()


def test_worker_is_replaced_after_a_timeout(pool):
    assert grade(TOWERS[0], "3", 1.0, pool).verdict == "timeout"
    assert grade(r"\boxed{7}", "7", 5.0, pool) == Grade("valid", "7", "7")


def test_grading_from_an_event_loop(pool):
    async def main():
        loop = asyncio.get_running_loop()
        return await asyncio.gather(*(loop.run_in_executor(None, grade, f"\\boxed{{{i}}}", "2", 5.0, pool)
                                      for i in range(4)))

    verdicts = [g.verdict for g in asyncio.run(main())]
    assert verdicts == ["wrong", "wrong", "valid", "wrong"]


def test_verdicts_without_a_comparison():
    assert grade("no answer here", "3").verdict == "no_answer"
    assert grade(r"\boxed{3}", "  ").verdict == "bad_task" and Grade("bad_task").infra
    assert not Grade("no_answer").infra and not Grade("wrong").infra
    with pytest.raises(ValueError, match="max_workers"):
        GradingPool(max_workers=0)


def test_worker_crash_is_infra(pool, monkeypatch):
    """A worker that dies mid-comparison is infra (masked), not a wrong answer."""
    grade(r"\boxed{1}", "1", pool=pool)
    worker = pool._idle[-1]
    worker.process.kill()
    worker.process.wait()
    assert grade(r"\boxed{1}", "1", 5.0, pool).verdict == "infra"
    assert grade(r"\boxed{1}", "1", 5.0, pool).verdict == "valid"
