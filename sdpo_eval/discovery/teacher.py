"""What the teacher gave a trained method, per step, from its runs' metrics (verl's file logger, metrics.jsonl): the
numbers that say why SDPO did or did not beat GRPO.

Per method, the mean over every logged step of every run of: the share of samples with a teacher signal
(`self_distillation/reprompt_sample_fraction`), with a sibling's solution in the teacher context
(`demonstration_used_fraction`), with the environment's feedback (`feedback_used_fraction`), the share of prompts
with a success (`success_group_fraction`), the share of samples distilled (`sdpo/active_sample_fraction`), the mean
token and distillation weights, the teacher-minus-student log-prob on the distilled tokens, and the mean response
length (`response_length/mean`; distilled tokens a sample ~ active_sample_fraction x response length).
"""
from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sdpo_eval.curves import read_metrics

TEACHER_KEYS = (
    "self_distillation/reprompt_sample_fraction", "self_distillation/demonstration_used_fraction",
    "self_distillation/feedback_used_fraction", "self_distillation/success_group_fraction",
    "sdpo/active_sample_fraction", "sdpo/token_weight_mean", "sdpo/distill_weight_mean",
    "sdpo/teacher_minus_student_token_logp", "response_length/mean",
)
METRICS_FILE = "metrics.jsonl"


def teacher_signal(run_dirs: Iterable[Path]) -> dict[str, Any] | None:
    """{steps, <key>: mean over steps} over the metrics.jsonl of `run_dirs` (keys no step logged are left out); None
    without any logged step."""
    steps = [data for folder in run_dirs if (folder / METRICS_FILE).exists()
             for data in read_metrics(folder / METRICS_FILE).values()]
    if not steps:
        return None
    out: dict[str, Any] = {"steps": len(steps)}
    for key in TEACHER_KEYS:
        values = [float(data[key]) for data in steps if isinstance(data.get(key), (int, float))]
        if values:
            out[key] = round(sum(values) / len(values), 4)
    return out
