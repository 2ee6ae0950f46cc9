"""The driver's teacher prompts, built beside the old-log-prob pass (issue 49).

Building a step's teacher prompts (`sdpo_ext.teacher_fields`: chat template and tokenizer over each prompt plus a
sibling's solution or Lean's feedback) is CPU work on the driver, about a second per step at 2K and more at 8K
(measured in bench/step_time/README.md). Nothing in the old-log-prob pass reads those fields, and the driver only waits
for that pass (a Ray call into the worker processes), so `SDPOTrainer._compute_old_log_prob` starts the build with
`in_background` before the pass and takes its result after it, before anything reads the fields.

Contract: `in_background(build).result()` is `build()` itself (the same fields and metrics as the call made in line);
an exception raised by `build` is raised again by `result()`. `build` must not touch what the caller's thread uses
meanwhile: the trainer hands it the step's fields already read from TransferQueue and a metrics dict of its own.
"""
from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")


def in_background(build: Callable[[], T]) -> Future[T]:
    """`build()` started on a thread of its own; `.result()` waits for it and returns its value or raises its error."""
    executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sdpo-teacher-prep")
    try:
        return executor.submit(build)
    finally:
        executor.shutdown(wait=False)  # the thread ends with `build`; nothing else is ever submitted
