"""The strict online mode (`strict_recheck: true`): a proof the fast path found VALID is re-checked by an external
kernel tool (`recheck_one`: comparator, lean4checker or SafeVerify) in a separate Lean process before it is paid.

Contract: `recheck_valid` never raises and only ever lowers a verdict. confirmed keeps VALID; rejected gives FORBIDDEN
with the tool's reason as feedback (score 0: the online check was fooled or the proof depends on something the
tool refuses); infra (tool missing, crashed, timed out, the trusted challenge failing in the project) gives INFRA:
masked, no feedback, never trained on, as for any infrastructure failure. A false positive of the fast path
therefore costs throughput (one tool run per paid proof), never a reward. Each job writes its files under the
project in paths named by a fresh key; its `ToolSetup` has `keep_files` off, so the tool's runner removes them when
it returns, whatever the outcome (see `lean_env.recheck.run`, Files).
"""
from __future__ import annotations

import asyncio
import uuid

from lean_env.feedback import render_feedback
from lean_env.judge import Judgement
from lean_env.options import RecheckOptions
from lean_env.recheck.common import RecheckJob, RecheckResult, ToolSetup
from lean_env.recheck.run import recheck_one
from lean_env.types import Verdict
from lean_env.verify import Task, VerifyResult

_slots: dict[tuple[int, int], asyncio.Semaphore] = {}   # (event loop, workers) -> tool runs at once


async def recheck_valid(task: Task, model_output: str, result: VerifyResult, options: RecheckOptions) -> VerifyResult:
    """`result` itself unless it is VALID and strict mode is on; then the verdict of the external re-check."""
    if result.verdict is not Verdict.VALID or not options.strict_recheck:
        return result
    try:
        cfg = ToolSetup.from_options(options, keep_files=False)   # a fresh key per paid proof: they'd pile up
        loop = asyncio.get_running_loop()
        slots = _slots.setdefault((id(loop), options.recheck_workers), asyncio.Semaphore(options.recheck_workers))
        job = RecheckJob(f"Strict{uuid.uuid4().hex}", task, model_output)
        async with slots:
            checked = await asyncio.to_thread(recheck_one, job, cfg)
    except Exception as e:  # a bug or a bad setting must neither pay nor fail a proof
        checked = RecheckResult("", "infra", f"strict re-check failed: {type(e).__name__}: {e}")
    if checked.status == "confirmed":
        return result
    if checked.status == "rejected":
        judgement = Judgement(Verdict.FORBIDDEN, f"an independent kernel re-check ({options.recheck_tool}) rejected "
                                                 f"the proof: {checked.message[:800]}")
        return VerifyResult(judgement.verdict, judgement.detail, render_feedback(judgement), result.lean_time_s,
                            result.attempts)
    return VerifyResult(Verdict.INFRA, f"strict re-check ({options.recheck_tool}) gave no verdict: "
                                       f"{checked.message[:800]}", "", result.lean_time_s, result.attempts)
