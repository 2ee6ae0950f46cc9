r"""verl `compute_score` for MATH-style answers (the grader of `sdpo_eval.math_eval` too).

Return contract (same keys and types for every call and every input; verl stacks them across the batch):
  score      1.0 the final answer equals the reference, else 0.0 (0.0 placeholder for infra, which is masked)
  verdict    valid | wrong | no_answer | grader_timeout | infra | bad_task (`reward.math.grader.Grade`)
  infra      1.0 when the sample must be masked out of training: the grading worker failed or the ground truth is
             empty (a data error). The trainer masks these samples. A comparison that ran past `timeout_s` is the
             reply's doing: verdict grader_timeout, score 0.0, infra 0.0.
  feedback   text for the SDPO teacher ("" when correct and for infra); it never contains the reference
  extracted  the reply's final answer ("" when it has none)
  pred       the normalised final answer: verl's maj@N vote key
`ground_truth` is the reference answer string (a `\boxed{..}` around it is accepted). Options, through verl's
`reward.custom_reward_function.reward_kwargs`: the fields of `reward.math.options.MathGradingOptions` (`timeout_s`,
`prompt_opens_think`, `rounded_irrationals`). Model output is never evaluated as code.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reward.call_kwargs import own_options
from reward.math.grader import grade
from reward.math.options import MathGradingOptions

_FEEDBACK = {
    "no_answer": "Your reply does not state a final answer. End with the final answer in a box, \\boxed{...}.",
    "wrong": "Your final answer {} is incorrect.",
    "grader_timeout": "Your final answer {} could not be checked in time; state it in simplest form.",
}


def preflight(reward_kwargs: Mapping[str, Any], generation_prompt: str | None = None) -> list[str]:
    """What is wrong with the recipe's `reward_kwargs`, found before training starts (`sdpo_ext.startup.checks` calls
    this), instead of in the first reward call; [] when the options are valid. `generation_prompt` is the model's
    chat template rendered for one user message, when the start-up checks could render it: `prompt_opens_think`
    must match it, or every reply is graded from the wrong place."""
    try:
        options = MathGradingOptions.from_kwargs(own_options(reward_kwargs))
    except ValueError as e:
        return [f"{e} (fix reward.custom_reward_function.reward_kwargs)"]
    if generation_prompt is None:
        return []
    problem = options.template_problem(generation_prompt, "reward.custom_reward_function.reward_kwargs."
                                                          "prompt_opens_think")
    return [problem] if problem else []


def compute_score(data_source: str, solution_str: str, ground_truth: Any, extra_info: Mapping | None = None,
                  **kwargs: Any) -> dict[str, Any]:
    """verl's reward function for MATH: grade the reply's final answer against `ground_truth` with the options
    in `kwargs` -> {score, verdict, infra, feedback, ...}."""
    options = MathGradingOptions.from_kwargs(own_options(kwargs))
    reference = ground_truth if isinstance(ground_truth, str) else ("" if ground_truth is None else str(ground_truth))
    result = grade(solution_str if isinstance(solution_str, str) else None, reference, options)
    feedback = _FEEDBACK.get(result.verdict, "").replace("{}", result.extracted or "")
    return {"score": 1.0 if result.correct else 0.0, "verdict": result.verdict, "infra": 1.0 if result.infra else 0.0,
            "feedback": feedback, "extracted": result.extracted or "", "pred": result.key or result.extracted or ""}
