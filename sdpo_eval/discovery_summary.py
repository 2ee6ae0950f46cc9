"""A discovery report (`sdpo_eval.discovery.discovery_report`) as a plot (discovery@k with its bootstrap band), a table
of first successes, and the summary JSON the bench results keep (issue 32's schema):

    {"task", "call", "budget": B, "problems": [...],
     "methods": {<method>: {"seeds": [...], "discovery_at": {"<k>": {"value", "low", "high"}},
                            "first_success": {<problem>: [attempt or null, one per run, in seed order]},
                            "attempts_to_match_best_of_k": k or null}}}

`attempts_to_match_best_of_k`: the least k at which the method's discovery@k reaches best-of-k's discovery@B (the
issue's "same discovery rate with fewer attempts"); null when it never does within B, or without a best-of-k run or
a problem best-of-k solved.

`first_success` counts the problem's own judged attempts (the attempt log's `attempt`), also in a set-TTRL run where
the model meanwhile trained on the other problems' attempts too.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

SUMMARY_KEYS = ("seeds", "discovery_at", "first_success")


def attempts_to_match(curve: list[float], target: float) -> int | None:
    """min{k : curve[k-1] >= target} for a target > 0, else None (1-based k; curve = discovery@1..B)."""
    if target <= 0:
        return None
    return next((k for k, value in enumerate(curve, start=1) if value >= target - 1e-12), None)


def summary(report: dict[str, Any], task: str, call: str) -> dict[str, Any]:
    """The report cut to the schema above (the full curves stay in the report)."""
    methods = {m: {key: row[key] for key in SUMMARY_KEYS} for m, row in report["methods"].items()}
    if "best_of_k" in report["methods"]:
        target = report["methods"]["best_of_k"]["curve"][-1]
        for method, row in report["methods"].items():
            methods[method]["attempts_to_match_best_of_k"] = attempts_to_match(row["curve"], target)
    return {"task": task, "call": call, "budget": report["budget"], "problems": report["problems"],
            "methods": methods}


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
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ks = list(range(1, report["budget"] + 1))
    fig, ax = plt.subplots(figsize=(6, 4))
    for method, row in report["methods"].items():
        label = f"{method} ({row['solved_runs']}/{row['runs']} runs solved)"
        line, = ax.step(ks, row["curve"], where="post", label=label)
        ax.fill_between(ks, row["low"], row["high"], step="post", alpha=0.2, color=line.get_color())
    ax.set_xscale("log", base=2)
    ax.set_xlabel("attempts k")
    ax.set_ylabel("discovery@k (fraction of problems solved)")
    ax.set_ylim(0, 1)
    ax.set_title(f"{len(report['problems'])} problems, 95% bootstrap over problems")
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
