"""verl `compute_score` for MATH-style answers (same extraction and grader as `sdpo_eval.math_eval`).

Returns {"score": 1.0 | 0.0, "extracted": the model's final answer or ""}. `ground_truth` is the
reference answer string (a `\\boxed{...}` around it is also accepted). Grading is symbolic
(math-verify); model output is never evaluated as code.
"""
from __future__ import annotations

from typing import Any, Mapping

from sdpo_eval.answers import grade, last_boxed


def compute_score(data_source: str, solution_str: str, ground_truth: Any, extra_info: Mapping | None = None,
                  **kwargs: Any) -> dict[str, Any]:
    reference = str(ground_truth)
    reference = last_boxed(reference) or reference
    correct, extracted = grade(solution_str if isinstance(solution_str, str) else "", reference)
    return {"score": 1.0 if correct else 0.0, "extracted": extracted or ""}
