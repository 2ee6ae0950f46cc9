"""What a trained method learned from, per step, from its runs' metrics (verl's file logger, metrics.jsonl): the
numbers that say why SDPO did or did not beat GRPO, before any tuning.

Per method, the mean over every logged step of every run of (keys a method never logs are left out: GRPO has no
teacher, a sampler no metrics):
- `advantage_steps`: the share of steps with a nonzero GRPO advantage (`critic/advantages/{min,max}`). With a binary
  reward a group without a success has none, so GRPO, and SRPO's policy-gradient half, learn nothing from it; under
  the single protocol with stop-on-success that is every step of a problem but the one that solves it;
- `timing_s/step`; the share of samples distilled (`sdpo_lean/distilled_sample_fraction`,
  `actor/sdpo/active_sample_fraction`) and with a teacher context (`self_distillation/reprompt_sample_fraction`),
  with a sibling's solution in it (`demonstration_used_fraction`) or the checker's feedback
  (`feedback_used_fraction`); the share of prompts with a success (`success_group_fraction`);
- the mean token and distillation weights, the teacher-minus-student log-prob and the divergence on the distilled
  tokens, and the mean response length (distilled tokens a sample ~ active_sample_fraction x response length).
"""
from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sdpo_eval.curves import read_metrics

TEACHER_KEYS = (
    "timing_s/step", "sdpo_lean/distilled_sample_fraction",
    "self_distillation/reprompt_sample_fraction", "self_distillation/demonstration_used_fraction",
    "self_distillation/feedback_used_fraction", "self_distillation/success_group_fraction",
    "actor/sdpo/active_sample_fraction", "actor/sdpo/token_weight_mean", "actor/sdpo/distill_weight_mean",
    "actor/sdpo/teacher_minus_student_token_logp", "actor/sdpo/divergence_mean", "response_length/mean",
)
ADVANTAGE = ("critic/advantages/min", "critic/advantages/max")
METRICS_FILE = "metrics.jsonl"


def teacher_signal(run_dirs: Iterable[Path]) -> dict[str, Any] | None:
    """{steps, advantage_steps, <key>: mean over steps} over the metrics.jsonl of `run_dirs` (module docstring); None
    without any logged step."""
    steps = [data for folder in run_dirs if (folder / METRICS_FILE).exists()
             for data in read_metrics(folder / METRICS_FILE).values()]
    if not steps:
        return None
    out: dict[str, Any] = {"steps": len(steps)}
    judged = [data for data in steps if all(isinstance(data.get(key), (int, float)) for key in ADVANTAGE)]
    if judged:
        out["advantage_steps"] = round(sum(any(data[key] != 0 for key in ADVANTAGE) for data in judged)
                                       / len(judged), 4)
    for key in TEACHER_KEYS:
        values = [float(data[key]) for data in steps if isinstance(data.get(key), (int, float))]
        if values:
            out[key] = round(sum(values) / len(values), 4)
    return out
