"""A discovery report (`sdpo_eval.discovery.curves.discovery_report`) as a plot (discovery@k with its bootstrap band),
a table of first successes, and the summary JSON the bench results keep (issue 32's schema):

    {"task", "call", "budget": B, "problems": [...],
     "methods": {<method>: {"seeds": [...], "discovery_at": {"<k>": {"value", "low", "high"}},
                            "first_success": {<problem>: [attempt or null, one per run, in seed order]},
                            "attempts_to_match_best_of_k": k or null}}}

`attempts_to_match_best_of_k` / `attempts_to_match_reprompt`: the least k at which the method's discovery@k reaches
the baseline's discovery@K, K the largest k both are known at on every problem (`match_<baseline>_within`; B unless a
run was cut); null when it never does within K, without that baseline's run, or when the baseline solved nothing.
`covered_k` and `covered_k_pairs` say which k each comparison covers. `difference_vs_<baseline>`: the method's
discovery@B minus the baseline's on the same problems, paired per problem, with its bootstrap interval over problems
and the share of bootstrap draws at or below 0 (`sdpo_eval.discovery.estimates.paired_discovery`); a cut run is left out
of its problem's fraction past the attempts it made, as on the curves.

`first_success` counts the problem's own judged attempts (the attempt log's `attempt`), also in a set-TTRL run where
the model meanwhile trained on the other problems' attempts too.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from sdpo_eval.discovery.methods import BASELINES

SUMMARY_KEYS = ("seeds", "discovery_at", "first_success")


def attempts_to_match(curve: list[float], target: float) -> int | None:
    """min{k : curve[k-1] >= target} for a target > 0, else None (1-based k; curve = discovery@1..B)."""
    if target <= 0:
        return None
    return next((k for k, value in enumerate(curve, start=1) if value >= target - 1e-12), None)


PAIRED_CURVE_KEYS = ("curve", "low_curve", "high_curve")   # the report's paired curves, which the summary leaves out


def covered(report: dict[str, Any], a: str, b: str) -> int:
    """The largest k at which methods a and b are both known on every problem (the report's covered_k_pairs)."""
    if a == b:
        return min(report["methods"][a]["reached"].values())
    return report["covered_k_pairs"][" vs ".join(sorted((a, b)))]


def summary(report: dict[str, Any], task: str, call: str) -> dict[str, Any]:
    """The report cut to the schema above (the full curves stay in the report). With cut runs every comparison stops
    where both methods are known: `attempts_to_match_<baseline>` is the least k at which the method reaches the
    baseline's discovery@K, K = the pair's covered k (`match_within`)."""
    methods = {m: {key: row[key] for key in SUMMARY_KEYS} for m, row in report["methods"].items()}
    for baseline in BASELINES:
        if baseline not in report["methods"]:
            continue
        for method, row in report["methods"].items():
            k = covered(report, method, baseline)
            target = report["methods"][baseline]["curve"][k - 1] if k >= 1 else 0.0
            match = attempts_to_match(row["curve"][:k], target) if k >= 1 else None
            methods[method][f"attempts_to_match_{baseline}"] = match
            methods[method][f"match_{baseline}_within"] = k
            if method != baseline:
                paired = report["paired"][f"{method} - {baseline}"]
                methods[method][f"difference_vs_{baseline}"] = paired and {key: value for key, value in paired.items()
                                                                           if key not in PAIRED_CURVE_KEYS}
    return {"task": task, "call": call, "budget": report["budget"], "problems": report["problems"],
            "covered_k": report["covered_k"], "covered_k_pairs": report["covered_k_pairs"], "methods": methods}


def paired_lines(report: dict[str, Any]) -> list[str]:
    """One line per baseline: each other method's paired discovery@B difference to it with its 95% interval, e.g.
    `paired @128 against best_of_k: grpo +0.03 [-0.13, +0.16], srpo +0.14 [+0.01, +0.25]`."""
    lines = []
    for baseline in (b for b in BASELINES if b in report["methods"]):
        cells = []
        for method in report["methods"]:
            paired = report["paired"].get(f"{method} - {baseline}")
            if paired:
                cells.append(f"{method} {paired['value']:+.2f} [{paired['low']:+.2f}, {paired['high']:+.2f}]")
        if cells:
            lines.append(f"paired @{report['budget']} against {baseline}: " + ", ".join(cells))
    return lines


def _cell(firsts: list[int | None]) -> str:
    return " / ".join("-" if f is None else str(f) for f in firsts)


def first_success_table(report: dict[str, Any]) -> str:
    """Markdown: one row per problem, one column per method; a cell lists each run's first valid attempt ("-": none
    within the budget), in seed order; the last row is discovery@B with its 95% bootstrap interval."""
    methods = list(report["methods"])
    budget = report["budget"]
    lines = ["| problem | " + " | ".join(methods) + " |", "|---|" + "---|" * len(methods)]
    for problem in report["problems"]:
        lines.append(f"| {problem} | " + " | ".join(_cell(report["methods"][m]["first_success"][problem])
                                                    for m in methods) + " |")
    at_budget = [report["methods"][m]["discovery_at"][str(budget)] for m in methods]
    lines.append(f"| discovery@{budget} [95% CI] | "
                 + " | ".join(f"{d['value']:.2f} [{d['low']:.2f}, {d['high']:.2f}]" for d in at_budget) + " |")
    seeds = [", ".join(str(s) for s in report["methods"][m]["seeds"]) for m in methods]
    lines.append("| seeds | " + " | ".join(seeds) + " |")
    return "\n".join(lines) + "\n"


def plot_report(report: dict[str, Any], path: Path) -> None:
    """Plot into `path` (PNG) discovery@k of every method with its bootstrap band and, beside it when a baseline ran,
    each other method's paired difference to the first baseline (`report["paired"]`) with its band."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ks = list(range(1, report["budget"] + 1))
    baseline = next((b for b in BASELINES if b in report["methods"]), None)
    fig, axes = plt.subplots(1, 2 if baseline else 1, figsize=(11 if baseline else 6, 4), squeeze=False)
    ax, colors = axes[0][0], {}
    for method, row in report["methods"].items():
        label = f"{method} ({row['solved_runs']}/{row['runs']} runs solved)"
        line, = ax.step(ks, row["curve"], where="post", label=label)
        colors[method] = line.get_color()
        ax.fill_between(ks, row["low"], row["high"], step="post", alpha=0.2, color=line.get_color())
    ax.set_xscale("log", base=2)
    ax.set_xlabel("attempts k")
    ax.set_ylabel("discovery@k (fraction of problems solved)")
    ax.set_ylim(0, 1)
    ax.set_title(f"{len(report['problems'])} problems, 95% bootstrap over problems")
    ax.legend(loc="upper left", fontsize=8)
    if baseline:
        _plot_paired(axes[0][1], report, baseline, ks, colors)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _plot_paired(ax: Any, report: dict[str, Any], baseline: str, ks: list[int], colors: dict[str, str]) -> None:
    for method in report["methods"]:
        paired = report.get("paired", {}).get(f"{method} - {baseline}")
        if not paired:
            continue
        ax.step(ks, paired["curve"], where="post", color=colors[method], label=method)
        ax.fill_between(ks, paired["low_curve"], paired["high_curve"], step="post", alpha=0.2, color=colors[method])
    ax.axhline(0.0, color="black", linewidth=0.8)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("attempts k")
    ax.set_ylabel(f"discovery@k minus {baseline}'s")
    ax.set_title(f"paired per problem, against {baseline} (95% bootstrap)")
    ax.legend(loc="upper left", fontsize=8)
