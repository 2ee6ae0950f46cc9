"""What each trained discovery method learned from, per step, from verl's metrics of its runs (the `file` logger's
metrics.jsonl in each run folder): the answer to "why does one method not beat another" before any tuning.

Per run (then the mean over a method's runs, with the runs counted):
- `steps`, `step_s`: training steps and verl's seconds per step (`timing_s/step`);
- `advantage_steps`: the share of steps with a nonzero GRPO advantage (`critic/advantages/{min,max}`): with a binary
  reward a group without a success has none, so GRPO (and SRPO's policy-gradient half) learns nothing from it;
- `distilled_sample_fraction`: samples the SDPO loss distils (`sdpo_lean/distilled_sample_fraction`);
- `demonstration_fraction` / `feedback_fraction`: teacher contexts that show a sibling's solution / the checker's
  feedback (`self_distillation/demonstration_used_fraction`, `.../feedback_used_fraction`);
- `teacher_minus_student_logp`: the mean per-token log p_T − log p_S on the distilled tokens, and `divergence`;
- `reset_s`: the single protocol's problem switches (`sdpo_lean/ttrl_reset_s`): {median, max, count}.
A metric a method does not log (GRPO has no teacher) is left out of its row.
"""
from __future__ import annotations

import json
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

MEAN_METRICS = {
    "step_s": "timing_s/step",
    "distilled_sample_fraction": "sdpo_lean/distilled_sample_fraction",
    "demonstration_fraction": "self_distillation/demonstration_used_fraction",
    "feedback_fraction": "self_distillation/feedback_used_fraction",
    "teacher_minus_student_logp": "actor/sdpo/teacher_minus_student_token_logp",
    "divergence": "actor/sdpo/divergence_mean",
}
RESET = "sdpo_lean/ttrl_reset_s"


def read_metrics(path: Path) -> list[dict[str, float]]:
    """The steps' metrics of one run's metrics.jsonl (verl's file logger: {"step", "data"} per line); a last line
    cut by a killed run is left out."""
    rows = []
    lines = path.read_text().splitlines()
    for i, line in enumerate(lines):
        try:
            rows.append(json.loads(line)["data"])
        except json.JSONDecodeError:
            if i != len(lines) - 1:
                raise ValueError(f"error: {path}, line {i + 1}: not JSON (only a log's last line may be cut)")
    return rows


def run_signal(rows: list[dict[str, float]]) -> dict[str, float]:
    """One run's row (module docstring), reset times aside."""
    row: dict[str, float] = {"steps": len(rows)}
    advantage = [r for r in rows if "critic/advantages/max" in r]
    if advantage:
        row["advantage_steps"] = sum(r["critic/advantages/max"] != 0 or r["critic/advantages/min"] != 0
                                     for r in advantage) / len(advantage)
    for name, key in MEAN_METRICS.items():
        values = [r[key] for r in rows if r.get(key) is not None]
        if values:
            row[name] = statistics.fmean(values)
    return row


def method_signals(run_dir: Path) -> dict[str, dict[str, Any]]:
    """{method: mean of its runs' rows, with `runs` and `reset_s`} over <run_dir>/<task>/<method>/<seed>/metrics.jsonl
    (sampler methods log no metrics and are absent)."""
    runs: dict[str, list[dict[str, float]]] = defaultdict(list)
    resets: dict[str, list[float]] = defaultdict(list)
    for path in sorted(run_dir.glob("*/*/*/metrics.jsonl")):
        rows = read_metrics(path)
        if rows:
            method = path.parent.parent.name
            runs[method].append(run_signal(rows))
            resets[method] += [r[RESET] for r in rows if r.get(RESET) is not None]
    table = {}
    for method, rows in runs.items():
        keys = sorted({key for row in rows for key in row})
        table[method] = {"runs": len(rows), **{k: round(statistics.fmean([r[k] for r in rows if k in r]), 4)
                                               for k in keys}}
        if resets[method]:
            table[method]["reset_s"] = {"median": round(statistics.median(resets[method]), 3),
                                        "max": round(max(resets[method]), 3), "count": len(resets[method])}
    return table
