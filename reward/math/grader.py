"""Time-limited MATH grading: extraction in the caller, equivalence in worker processes that can be killed.

Contract: `grade(reply, reference, options)` returns within about `options.timeout_s` seconds (plus waiting for a
free worker and a worker's start-up, which are not counted) from any thread, event loop or process, whatever the
reply holds. A comparison that runs past its limit kills its worker process and comes back as verdict
"grader_timeout": a wrong answer, not infra. The reference is fixed and the extraction is linear, so what runs
past the limit is the policy's own answer (a power tower such as 9^{9^{9^9}}); masking it would neither penalise
it in RL nor count it in evaluation. Only a grader that fails by itself is infra, masked: a worker that dies or does not
start, an empty reference ("bad_task"), or a worker starved of CPU (it ran past the wall-clock limit having used
less than `STARVED_SHARE` of it as CPU time, read from /proc: the machine was busy, the reply may be fine).

Why processes: sympy can run for hours on `9^{9^{9^9}}` while holding the GIL, and math-verify's own limit is
SIGALRM, which only works on the main thread (verl 0.9.1's reward loop calls a synchronous `compute_score` from a
thread pool, where math-verify's limits are off). A worker process is killed with SIGKILL, so no limit depends on the
caller's thread. verl's `reward_score/math_verify.py` also grades in spawned processes; it leaves a timed-out worker
running (its pool fills up after four) and scores a timeout 0, as we do.
"""
from __future__ import annotations

import atexit
import json
import logging
import os
import select
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from reward.math.answer import final_answer, reference_answer
from reward.math.options import MathGradingOptions

log = logging.getLogger(__name__)

STARTUP_TIMEOUT_S = 120.0           # a worker's imports (sympy, latex2sympy) are not part of any grading limit
INFRA_VERDICTS = frozenset({"infra", "bad_task"})
# A comparison past its limit that got less CPU time than this share of it was starved (a normal comparison needs
# milliseconds, so it only runs out of time when starved; a runaway one on a loaded 2-core box still gets ~0.5).
STARVED_SHARE = 0.25
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


@dataclass(frozen=True)
class Grade:
    """verdict: valid | wrong | no_answer | grader_timeout (genuine results; only valid is correct) | infra | bad_task
    (masked).
    `extracted` is the reply's final answer; `key` its normalised form (the vote key of maj@k; the answer as written
    for grader_timeout)."""

    verdict: str
    extracted: str | None = None
    key: str | None = None

    @property
    def correct(self) -> bool:
        """Whether the answer is equivalent to the reference."""
        return self.verdict == "valid"

    @property
    def infra(self) -> bool:
        """Whether the grading failed for a reason that is no verdict on the answer (timeout, crash)."""
        return self.verdict in INFRA_VERDICTS


class _Worker:
    """One `python -m reward.math.worker` process: no fork, no multiprocessing bootstrap, so it starts the same
    from any caller (a script without a __main__ guard, a daemon process, a Ray actor)."""

    def __init__(self):
        package_root = str(Path(__file__).resolve().parents[2])  # the folder that holds `reward`
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))}
        self.process = subprocess.Popen([sys.executable, "-m", "reward.math.worker"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, env=env)
        self._buffer = b""
        if self.read_line(STARTUP_TIMEOUT_S) != "ready":
            self.kill()
            raise RuntimeError(f"math grading worker did not start within {STARTUP_TIMEOUT_S:.0f} s")

    def send(self, request: dict) -> None:
        self.process.stdin.write(json.dumps(request).encode() + b"\n")
        self.process.stdin.flush()

    def read_line(self, timeout_s: float) -> str | None:
        """The next output line, or None if none is complete within `timeout_s` (or the worker died)."""
        deadline = time.monotonic() + timeout_s
        fd = self.process.stdout.fileno()
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return None
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line.decode()

    def cpu_seconds(self) -> float | None:
        """User + system CPU time of the worker so far (Linux /proc), or None where it cannot be read."""
        try:
            with open(f"/proc/{self.process.pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS   # utime, stime: fields 14, 15 of stat(5)
        except (OSError, IndexError, ValueError):
            return None

    def kill(self) -> None:
        self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            try:
                stream.close()
            except OSError:  # stdin's buffered bytes cannot be flushed into a dead process
                pass


class GradingPool:
    """Up to `max_workers` worker processes (started on demand, reused); thread-safe."""

    def __init__(self, max_workers: int = 4):
        if max_workers < 1:
            raise ValueError(f"max_workers must be >= 1, got {max_workers}")
        self._idle: list[_Worker] = []
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(max_workers)

    def compare(self, prediction: str, reference: str, timeout_s: float, *,
                rounded_irrationals: bool = False) -> tuple[str, bool, str | None]:
        """("ok", equal, canonical prediction), ("timeout", False, None) or ("infra", False, None); a comparison past
        `timeout_s` of wall time is "timeout" unless its worker got less than `STARVED_SHARE` of it as CPU time.
        `rounded_irrationals` is `answers_equal`'s."""
        with self._slots:
            with self._lock:
                worker = self._idle.pop() if self._idle else None
            try:
                worker = worker or _Worker()
                cpu_before = worker.cpu_seconds()
                worker.send({"prediction": prediction, "reference": reference,
                             "rounded_irrationals": rounded_irrationals})
                line = worker.read_line(timeout_s)
            except (OSError, RuntimeError) as e:  # a worker that died or never started
                log.warning("math grading worker failed (masked as infra): %s", e)
                if worker is not None:
                    worker.kill()
                return "infra", False, None
            if line is None:
                alive = worker.process.poll() is None
                cpu_after = worker.cpu_seconds()
                worker.kill()
                if alive and cpu_before is not None and cpu_after is not None and \
                        cpu_after - cpu_before < STARVED_SHARE * timeout_s:
                    log.warning("math grading worker starved of CPU (%.2f s in %.1f s; masked as infra)",
                                cpu_after - cpu_before, timeout_s)
                    return "infra", False, None
                if alive:
                    return "timeout", False, None
                log.warning("math grading worker died (masked as infra)")
                return "infra", False, None
            with self._lock:
                self._idle.append(worker)
        try:
            reply = json.loads(line)
        except ValueError:
            reply = {"error": f"unreadable worker reply {line[:200]!r}"}
        if "error" in reply:
            log.warning("math grading failed (masked as infra): %s", reply["error"])
            return "infra", False, None
        return "ok", bool(reply["equal"]), reply["key"]

    def close(self) -> None:
        """Kill the idle worker processes."""
        with self._lock:
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.kill()


_pool: GradingPool | None = None
_pool_lock = threading.Lock()


def shared_pool() -> GradingPool:
    """The process-wide pool (one per process; `min(4, cpus)` workers)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = GradingPool(max_workers=max(1, min(4, os.cpu_count() or 1)))
            atexit.register(_pool.close)
        return _pool


def grade(reply: str | None, reference: str, options: MathGradingOptions | None = None,
          pool: GradingPool | None = None) -> Grade:
    """Grade one reply against a reference answer (a worked solution gives its final box group)."""
    options = options or MathGradingOptions()
    if not isinstance(reference, str) or not reference.strip():
        return Grade("bad_task")
    extracted = final_answer(reply if isinstance(reply, str) else None, options.prompt_opens_think)
    if extracted is None:
        return Grade("no_answer")
    status, equal, key = (pool or shared_pool()).compare(extracted, reference_answer(reference), options.timeout_s,
                                                         rounded_irrationals=options.rounded_irrationals)
    if status == "timeout":  # the answer still votes in maj@k, keyed as written (its normal form was not reached)
        return Grade("grader_timeout", extracted, extracted)
    if status != "ok":
        return Grade(status, extracted)
    return Grade("valid" if equal else "wrong", extracted, key)
