"""End-to-end check of one model output: screen -> assemble -> Lean (with retries) -> judge -> feedback."""
from __future__ import annotations

import asyncio
import itertools
import time
from dataclasses import dataclass

from lean_env.assemble import DEFAULT_HEADER, build_check
from lean_env.feedback import render_feedback
from lean_env.judge import Judgement, judge
from lean_env.options import CheckOptions
from lean_env.screen import screen
from lean_env.types import LeanBackend, Outcome, RunResult, Verdict

INFRA_VERDICTS = frozenset({Verdict.INFRA, Verdict.TIMEOUT, Verdict.BAD_TASK})
_ids = itertools.count()


@dataclass(frozen=True)
class Task:
    """One problem: the theorem's `name`, the dataset's exact `formal_statement` and its trusted `header`."""

    name: str
    formal_statement: str
    header: str = DEFAULT_HEADER


@dataclass(frozen=True)
class VerifyResult:
    """One output's check: verdict, detail, the teacher's feedback, Lean's time and how many runs it took."""

    verdict: Verdict
    detail: str
    feedback: str
    lean_time_s: float
    attempts: int

    @property
    def infra(self) -> bool:
        """True when the sample says nothing about the proof and must be masked."""
        return self.verdict in INFRA_VERDICTS


async def run_with_retries(backend: LeanBackend, snippet, check: CheckOptions) -> tuple[RunResult, int]:
    """Run one snippet under `check.timeout_s`; re-run INFRA up to `check.infra_retries` and TIMEOUT up to
    `check.timeout_retries` times (not an INFRA result whose backend already spent its own retries on this snippet
    alone), waiting backoff_s·2^(attempt−1) before each re-run."""
    attempt, n_infra, n_timeout = 0, 0, 0
    while True:
        attempt += 1
        (result,) = await backend.run([snippet], timeout_s=check.timeout_s)
        infra_like = result.outcome is Outcome.INFRA or result.repl_error is not None
        if infra_like and n_infra < check.infra_retries and not result.retries_spent:
            n_infra += 1
        elif result.outcome is Outcome.TIMEOUT and n_timeout < check.timeout_retries:
            n_timeout += 1
        else:
            return result, attempt
        await asyncio.sleep(check.backoff_s * 2 ** (attempt - 1))


async def verify(task: Task, model_output: str, backend: LeanBackend, *, finish_reason: str | None = None,
                 check: CheckOptions | None = None) -> VerifyResult:
    """Never raises for any `model_output`; infrastructure problems give INFRA/TIMEOUT verdicts.
    `check`: limits and retries (None: `CheckOptions()`'s defaults)."""
    check = check or CheckOptions()
    screened = screen(task.formal_statement, model_output, finish_reason=finish_reason, header=task.header)
    if not screened.ok:
        assert screened.verdict is not None
        j = Judgement(screened.verdict, screened.reason)
        return VerifyResult(j.verdict, j.detail, render_feedback(j), 0.0, 0)
    plan = build_check(screened, task.header, snippet_id=f"{task.name}#{next(_ids)}",
                       statement_check=check.statement_check, max_heartbeats=check.max_heartbeats)
    t0 = time.perf_counter()
    try:
        result, attempts = await run_with_retries(backend, plan.snippet, check)
    except Exception as e:  # a backend bug must not turn into a score
        return VerifyResult(Verdict.INFRA, f"backend raised {type(e).__name__}: {e}"[:400], "",
                            time.perf_counter() - t0, 1)
    j = judge(result, plan)
    return VerifyResult(j.verdict, j.detail, render_feedback(j, plan), result.elapsed_s, attempts)
