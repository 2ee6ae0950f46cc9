"""MATH scores from graded samples: accuracy with an interval, pass@k, maj@k, and a paired comparison of two models.

A sample record has at least {model, id, subject, sample, verdict, correct, infra, key}. Infra samples (a grading
worker that failed; a grading timeout is the reply's own wrong answer, verdict grader_timeout) are left out of every
count; a problem with no judged sample is left out and counted as `infra_problems`.
- accuracy: mean over problems of (correct samples / judged samples). Interval: Wilson when every problem has one
  judged sample (a binomial count), else a percentile bootstrap over problems.
- pass@k: mean over problems with at least k judged samples of the unbiased estimate 1 - C(n-c, k) / C(n, k).
- maj@k: mean over problems with at least k judged samples of [the most frequent final answer among the first k
  judged samples is correct]; `key` (the normalised answer) is the vote, ties go to the answer seen first, samples
  without an answer do not vote (Minerva's maj1@k).
"""
from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

from sdpo_attempts.pass_at_k import pass_at_k
from sdpo_eval.stats import bootstrap_mean_interval, paired_difference_interval, wilson_interval

OVERALL = "overall"


def judged_by_problem(records: Sequence[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """{problem id: its judged (non-infra) samples in sample order}; problems with none are absent."""
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in sorted(records, key=lambda r: (r["id"], r["sample"])):
        if not record["infra"]:
            groups[record["id"]].append(record)
    return dict(groups)


def majority_correct(samples: Sequence[dict[str, Any]]) -> bool:
    """Whether the most frequent answer (ties: the one seen first) among `samples` is correct."""
    votes = Counter(s["key"] for s in samples if s["key"])
    if not votes:
        return False
    top = max(votes.values())
    winner = next(s for s in samples if s["key"] and votes[s["key"]] == top)
    return bool(winner["correct"])


def _row(problems: list[list[dict[str, Any]]], ks: Sequence[int], confidence: float) -> dict[str, Any]:
    rates = [sum(s["correct"] for s in samples) / len(samples) for samples in problems]
    if all(len(samples) == 1 for samples in problems):
        low, high = wilson_interval(int(sum(rates)), len(rates), confidence)
    else:
        low, high = bootstrap_mean_interval(rates, confidence)
    row = {"problems": len(problems), "samples": sum(map(len, problems)),
           "accuracy": sum(rates) / len(rates) if rates else 0.0, "low": low, "high": high}
    for k in ks:
        eligible = [samples for samples in problems if len(samples) >= k]
        row[f"pass@{k}"] = (sum(pass_at_k(len(s), sum(x["correct"] for x in s), k) for s in eligible) / len(eligible)
                            if eligible else None)
        row[f"maj@{k}"] = sum(majority_correct(s[:k]) for s in eligible) / len(eligible) if eligible else None
        row[f"n@{k}"] = len(eligible)
    return row


def score_table(records: Sequence[dict[str, Any]], ks: Sequence[int] = (1,),
                confidence: float = 0.95) -> dict[str, dict[str, Any]]:
    """{subject | "overall": row} for one model's records (see the module docstring)."""
    judged = judged_by_problem(records)
    subject_of = {r["id"]: r["subject"] for r in records}
    groups: dict[str, list[list[dict[str, Any]]]] = defaultdict(list)
    for problem_id, samples in judged.items():
        groups[subject_of[problem_id]].append(samples)
        groups[OVERALL].append(samples)
    table = {subject: _row(problems, ks, confidence) for subject, problems in sorted(groups.items())}
    table.setdefault(OVERALL, _row([], ks, confidence))
    table[OVERALL]["infra_samples"] = sum(1 for r in records if r["infra"])
    table[OVERALL]["infra_problems"] = len(subject_of) - len(judged)
    return table


def compare(records_a: Sequence[dict[str, Any]], records_b: Sequence[dict[str, Any]],
            confidence: float = 0.95) -> dict[str, dict[str, float]]:
    """Paired difference A - B of sample-0 correctness per subject and overall (Newcombe interval), over the
    problems whose sample 0 both models had judged."""
    first_a = {r["id"]: r for r in records_a if r["sample"] == 0 and not r["infra"]}
    first_b = {r["id"]: r for r in records_b if r["sample"] == 0 and not r["infra"]}
    if {r["id"] for r in records_a} != {r["id"] for r in records_b}:
        raise ValueError("paired comparison needs both models evaluated on the same problems")
    groups: dict[str, tuple[list[bool], list[bool]]] = defaultdict(lambda: ([], []))
    for problem_id in sorted(first_a.keys() & first_b.keys()):
        for key in (first_a[problem_id]["subject"], OVERALL):
            groups[key][0].append(bool(first_a[problem_id]["correct"]))
            groups[key][1].append(bool(first_b[problem_id]["correct"]))
    out = {}
    for subject, (a, b) in sorted(groups.items()):
        diff, low, high = paired_difference_interval(a, b, confidence)
        out[subject] = {"difference": diff, "low": low, "high": high, "n": len(a)}
    return out


def format_table(tables: dict[str, dict[str, dict[str, Any]]], comparison: dict | None, ks: Sequence[int]) -> str:
    """A text table: one row per subject, one accuracy column per model, pass@k / maj@k for k > 1."""
    labels = list(tables)
    subjects = sorted({s for t in tables.values() for s in t if s != OVERALL}) + [OVERALL]
    extra = [f"{m}@{k}" for k in ks if k > 1 for m in ("pass", "maj")]
    header = ["subject", "problems"] + [f"M{i + 1} acc [95%]" for i in range(len(labels))]
    header += [f"M{i + 1} {name}" for i in range(len(labels)) for name in extra]
    header += ["M1-M2 [paired 95%]"] if comparison else []
    lines = [f"M{i + 1} = {label}" for i, label in enumerate(labels)] + [" | ".join(header)]
    for subject in subjects:
        rows = [tables[label].get(subject) for label in labels]
        cells = [subject, str(rows[0]["problems"] if rows[0] else 0)]
        cells += [f"{r['accuracy']:.3f} [{r['low']:.3f},{r['high']:.3f}]" if r else "-" for r in rows]
        cells += ["-" if not r or r[name] is None else f"{r[name]:.3f}" for r in rows for name in extra]
        if comparison:
            c = comparison.get(subject)
            cells.append(f"{c['difference']:+.3f} [{c['low']:+.3f},{c['high']:+.3f}]" if c else "-")
        lines.append(" | ".join(cells))
    return "\n".join(lines)
