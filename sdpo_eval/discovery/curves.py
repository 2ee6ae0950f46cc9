"""The discovery report's numbers from attempt logs: discovery@k per method with bootstrap bands, how far cut runs
are known (`reached`, `covered_k`, `covered_k_pairs`), and each method's paired difference to each baseline.

A run is one run_id: a per-problem run, or one problem's attempts in a set run's log (each record carries that
problem's own attempt count). Only problems present for every method enter the curves (the others are listed in
`left_out`). An unsolved run that stopped before k attempts is censored at k (`estimates.discovery_matrix`).
A record is valid by `sdpo_attempts.valid.valid_record`, the rule training uses.
"""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any, Iterable, Sequence

from sdpo_attempts.log import read_records, within_budget
from sdpo_attempts.valid import valid_record
from sdpo_eval.discovery.methods import BASELINES


def read_attempts(paths: Iterable[Path]) -> list[dict[str, Any]]:
    """Every record of the attempt logs `paths`, in order (a log's cut last line left out with a warning)."""
    return [record for path in paths for record in read_records(path)]


def runs_by_method(records: Iterable[dict[str, Any]], budget: int) -> dict[str, dict[str, list[tuple]]]:
    """{method: {problem: [(first valid attempt or None, judged attempts), one per run_id, in (seed, run_id)
    order]}}, capped at budget."""
    runs: dict[tuple[str, str, int, str], dict[str, Any]] = {}
    for rec in records:
        key = (rec["method"], rec["problem"], int(rec.get("seed") or 0), rec["run_id"])
        state = runs.setdefault(key, {"first": None, "made": 0})
        if rec.get("infra") or not within_budget(rec["attempt"], budget):
            continue
        state["made"] = max(state["made"], rec["attempt"])
        if valid_record(rec) and (state["first"] is None or rec["attempt"] < state["first"]):
            state["first"] = rec["attempt"]
    out: dict[str, dict[str, list[tuple]]] = defaultdict(lambda: defaultdict(list))
    for (method, problem, _, _), state in sorted(runs.items()):
        out[method][problem].append((state["first"], state["made"]))
    return {m: dict(p) for m, p in out.items()}


def discovery_report(
    records: Sequence[dict[str, Any]], budget: int, n_boot: int = 2000, seed: int = 0
) -> dict[str, Any]:
    """discovery@k curves (k = 1..budget) with bootstrap bands for each method, on the common problems."""
    from sdpo_eval.discovery.estimates import bootstrap_discovery, discovery_curve

    by_method = runs_by_method(records, budget)
    if not by_method:
        raise ValueError("no attempt records")
    common = sorted(set.intersection(*(set(p) for p in by_method.values())))
    if not common:
        raise ValueError("no problem was attempted by every method")
    ks = list(range(1, budget + 1))
    reach = {m: {p: reached(problems[p], budget) for p in common} for m, problems in by_method.items()}
    report: dict[str, Any] = {"budget": budget, "problems": common, "methods": {},
                              "left_out": {m: sorted(set(p) - set(common)) for m, p in by_method.items()},
                              "covered_k": min(min(r.values()) for r in reach.values()),
                              "covered_k_pairs": covered_pairs(reach)}
    for method, problems in sorted(by_method.items()):
        runs = [problems[p] for p in common]
        curve = discovery_curve(runs, ks)
        low, high = bootstrap_discovery(runs, ks, n_boot=n_boot, seed=seed)
        marks = sorted({k for k in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024) if k <= budget} | {budget})
        report["methods"][method] = {
            "seeds": sorted({int(r.get("seed") or 0) for r in records if r["method"] == method}),
            "runs": sum(len(r) for r in runs),
            "solved_runs": sum(f is not None for r in runs for f, _ in r),
            "censored_runs": sum(f is None and n < budget for r in runs for f, n in r),
            "discovery_at": {str(k): {"value": curve[k - 1], "low": low[k - 1], "high": high[k - 1]} for k in marks},
            "curve": curve, "low": low, "high": high,
            "first_success": {p: [f for f, _ in problems[p]] for p in common},
            "reached": reach[method],
        }
    report["paired"] = paired_differences(by_method, common, budget, n_boot, seed)
    return report


def paired_differences(by_method: dict[str, dict[str, list[tuple]]], common: Sequence[str], budget: int,
                       n_boot: int, seed: int) -> dict[str, dict[str, Any] | None]:
    """{"<method> - <baseline>": the paired difference (`estimates.paired_discovery`) at the budget ("k", "value",
    "low", "high", "share_at_or_below_0", "problems") with its curve over k = 1..budget ("curve", "low_curve",
    "high_curve"); None when no problem is known to both} for every method against each baseline it ran beside. As
    on the curves, a run cut before the budget without a success is left out of its problem's fraction."""
    from sdpo_eval.discovery.estimates import paired_discovery

    out: dict[str, dict[str, Any] | None] = {}
    for baseline in (b for b in BASELINES if b in by_method):
        for method in sorted(m for m in by_method if m != baseline):
            runs = [[by_method[m][p] for p in common] for m in (method, baseline)]
            paired = paired_discovery(*runs, range(1, budget + 1), n_boot=n_boot, seed=seed)
            at_budget = {key: values[-1] for key, values in paired.items()}
            out[f"{method} - {baseline}"] = None if not at_budget["problems"] else {
                "k": budget, **at_budget, "curve": paired["value"], "low_curve": paired["low"],
                "high_curve": paired["high"]}
    return out


def reached(runs: Sequence[tuple], budget: int) -> int:
    """Up to which k a problem's runs are all known: a solved run is known at every k, an unsolved one (finished or
    cut) only up to the attempts it judged; the least over the runs."""
    return min(budget if first is not None else made for first, made in runs)


def covered_pairs(reach: dict[str, dict[str, int]]) -> dict[str, int]:
    """{"a vs b": the largest k at which both methods are known on every common problem}: discovery@k compares a
    and b only up to it (a cut run stops where it got)."""
    methods = sorted(reach)
    return {f"{a} vs {b}": min(min(reach[a][p], reach[b][p]) for p in reach[a])
            for i, a in enumerate(methods) for b in methods[i + 1:]}
