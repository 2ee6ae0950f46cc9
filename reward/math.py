r"""verl `compute_score` for MATH-style answers (the grader of `sdpo_eval.math_eval` too).

Return contract (same keys and types for every call and every input; verl stacks them across the batch):
  score      1.0 the final answer equals the reference, else 0.0 (0.0 placeholder for infra, which is masked)
  verdict    valid | wrong | no_answer | timeout | infra | bad_task (`reward.math_grader.Grade`)
  infra      1.0 when the sample must be masked out of training: the comparison ran past `timeout_s`, the grading
             worker failed, or the ground truth is empty (a data error). The trainer masks these samples.
  feedback   text for the SDPO teacher ("" when correct and for infra); it never contains the reference
  extracted  the reply's final answer ("" when it has none)
  pred       the normalised final answer: verl's maj@N vote key
`ground_truth` is the reference answer string (a `\boxed{..}` around it is accepted). Options, through verl's
`reward.custom_reward_function.reward_kwargs`: `timeout_s` (the hard limit per comparison). Model output is never
evaluated as code.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reward.math_grader import DEFAULT_TIMEOUT_S, grade

_VERL_KWARGS = {"reward_router_address", "reward_model_tokenizer", "finish_reason"}
_FEEDBACK = {
    "no_answer": "Your reply does not state a final answer. End with the final answer in a box, \\boxed{...}.",
    "wrong": "Your final answer {} is incorrect.",
}


def compute_score(data_source: str, solution_str: str, ground_truth: Any, extra_info: Mapping | None = None,
                  timeout_s: float = DEFAULT_TIMEOUT_S, **kwargs: Any) -> dict[str, Any]:
    unknown = set(kwargs) - _VERL_KWARGS
    if unknown:
        raise ValueError(f"unknown MATH reward option(s) {sorted(unknown)}; known: ['timeout_s']")
    if isinstance(timeout_s, bool) or not isinstance(timeout_s, (int, float)) or timeout_s <= 0:
        raise ValueError(f"MATH reward option timeout_s must be a positive number, got {timeout_s!r}")
    reference = ground_truth if isinstance(ground_truth, str) else ("" if ground_truth is None else str(ground_truth))
    result = grade(solution_str if isinstance(solution_str, str) else None, reference, float(timeout_s))
    feedback = _FEEDBACK.get(result.verdict, "").replace("{}", result.extracted or "")
    return {"score": 1.0 if result.correct else 0.0, "verdict": result.verdict, "infra": 1.0 if result.infra else 0.0,
            "feedback": feedback, "extracted": result.extracted or "", "pred": result.key or result.extracted or ""}
