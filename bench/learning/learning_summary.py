"""Summarise the demo learning runs of bench/learning/run_learning.sh: learning.json and learning.png.

Reads verl's per-step metrics (FileLogger JSON lines, one file per run named <algo>_s<seed>.jsonl). Validation
(every trainer.test_freq steps and before training) samples 8 replies per held-out prompt at T 1.0:
val_reward = mean@8 of the score, content_accuracy = mean@8 of reward.addition's length-independent content check,
val_majority = maj@8 (majority vote over the 8 answers, a stand-in for the greedy answer). Training-side series
(reply length, cap rate, entropies, SDPO terms) are per training step.

    python bench/learning/learning_summary.py --dir /tmp/learning --out bench/learning/results \\
        --call "2026-12-04, H200, ..."
"""
from __future__ import annotations

import argparse
import json
import re
from collections import defaultdict
from pathlib import Path

from sdpo_eval.curves import read_metrics

SOURCE = "sdpo_demo_addition"
VAL = {
    "val_reward": f"val-core/{SOURCE}/reward/mean@8",
    "content_accuracy": f"val-aux/{SOURCE}/content_correct/mean@8",
    "val_majority": f"val-core/{SOURCE}/reward/maj@8/mean",
}
TRAIN = {
    "train_reward": "critic/score/mean",
    "response_length": "response_length/mean",
    "cap_rate": "response_length/clip_ratio",
    "entropy": "actor/entropy",
    "sdpo_loss": "actor/sdpo/loss",
    "teacher_entropy": "actor/sdpo/teacher_entropy",
    "student_entropy": "actor/sdpo/student_entropy",
    "teacher_flatter_fraction": "actor/sdpo/teacher_flatter_fraction",
    "teacher_minus_student_token_logp": "actor/sdpo/teacher_minus_student_token_logp",
    "teacher_minus_student_final_token_logp": "actor/sdpo/teacher_minus_student_final_token_logp",
    "token_weight_mean": "actor/sdpo/token_weight_mean",
    "distilled_sample_fraction": "sdpo_lean/distilled_sample_fraction",
}
RUN_NAME = re.compile(r"^(?P<algo>.+)_s(?P<seed>\d+)$")


def read_run(path: Path) -> dict:
    """One run's validation and training series (values are None where a step did not log the metric)."""
    by_step = defaultdict(dict, read_metrics(path))
    name = RUN_NAME.match(path.stem)
    val_steps = sorted(s for s, d in by_step.items() if VAL["val_reward"] in d)
    train_steps = sorted(s for s, d in by_step.items() if TRAIN["response_length"] in d)
    run = {"algo": name["algo"], "seed": int(name["seed"]), "steps": val_steps}
    run.update({k: [by_step[s].get(key) for s in val_steps] for k, key in VAL.items()})
    run["response_length"] = [by_step[s].get(TRAIN["response_length"]) for s in val_steps]
    run["train"] = {"steps": train_steps, **{k: [by_step[s].get(key) for s in train_steps] for k, key in TRAIN.items()}}
    return run


def rise(run: dict) -> float | None:
    """Mean of the last three validation points minus the first."""
    values = [v for v in run["val_reward"] if v is not None]
    return sum(values[-3:]) / len(values[-3:]) - values[0] if len(values) >= 4 else None


def by_algo(runs: list[dict]) -> dict[str, list[dict]]:
    groups: dict[str, list[dict]] = defaultdict(list)
    for run in runs:
        groups[run["algo"]].append(run)
    return dict(groups)


def table(runs: list[dict]) -> list[dict]:
    """Per algorithm: validation at step 0 over all seeds; the last three points, their rise over step 0 and the last
    content accuracy over the seeds that reached the final validation step (runs cut short are listed, not averaged)."""
    final = max((r["steps"][-1] for r in runs if r["steps"]), default=0)
    def mean(values: list) -> float | None:
        present = [v for v in values if v is not None]
        return sum(present) / len(present) if present else None

    rows = []
    for algo, group in sorted(by_algo(runs).items()):
        complete = [g for g in group if g["steps"] and g["steps"][-1] == final]
        rows.append({
            "algo": algo,
            "seeds_complete": sorted(g["seed"] for g in complete),
            "seeds_cut_short": {g["seed"]: (g["train"]["steps"] or [0])[-1] for g in group if g not in complete},
            "val_step0": mean([g["val_reward"][0] for g in group if g["val_reward"]]),
            "val_last3": mean([sum(g["val_reward"][-3:]) / 3 for g in complete]),
            "rise": mean([r for r in map(rise, complete) if r is not None]),
            "content_last": mean([g["content_accuracy"][-1] for g in complete]),
            "majority_last": mean([g["val_majority"][-1] for g in complete]),
        })
    return rows


def plot(runs: list[dict], path: Path, title: str, rows_by_algo: dict[str, dict], final: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [("val_reward", "validation reward (mean@8, T=1)", False),
              ("content_accuracy", "content accuracy (val)", False),
              ("val_majority", "majority vote @8 (val)", False), ("response_length", "reply tokens (train)", True),
              ("entropy", "policy entropy (train)", True),
              ("teacher_flatter_fraction", "teacher flatter than student", True)]
    fig, axes = plt.subplots(2, 3, figsize=(15, 8))
    for ax, (key, label, train) in zip(axes.flat, panels):
        for i, (algo, group) in enumerate(sorted(by_algo(runs).items())):
            series = [(g["train"]["steps"], g["train"][key]) if train else (g["steps"], g[key]) for g in group]
            steps = sorted(set().union(*[set(s) for s, _ in series]))
            rows = [[dict(zip(s, v)).get(t) for t in steps] for s, v in series]
            mean, low, high, xs = [], [], [], []
            for j, t in enumerate(steps):
                vals = [r[j] for r in rows if r[j] is not None]
                if vals:
                    xs.append(t)
                    mean.append(sum(vals) / len(vals))
                    low.append(min(vals))
                    high.append(max(vals))
            if xs:
                done = len(rows_by_algo[algo]["seeds_complete"])
                legend = f"{algo} ({done} of {len(group)} seeds to step {final})"
                ax.plot(xs, mean, marker="o", ms=3, color=f"C{i}", label=legend)
                ax.fill_between(xs, low, high, color=f"C{i}", alpha=0.2)
        ax.set_title(label)
        ax.set_xlabel("step")
    axes.flat[0].legend(fontsize=8)
    fig.suptitle(title + "\n(line: mean over the seeds at each step; band: min-max over seeds)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", type=Path, required=True, help="folder with <algo>_s<seed>.jsonl files")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--call", required=True, help="what ran, when, where (stored in the JSON)")
    parser.add_argument("--name", default="learning")
    parser.add_argument("--title", default="demo (SmolLM2-135M, addition)", help="the plot's title")
    parser.add_argument("--note", action="append", default=[], help="a caveat to store with the results (repeatable)")
    parser.add_argument("--steps", type=int, help="training steps each run was launched for (recorded; the plot says "
                        "when no run got that far)")
    args = parser.parse_args()
    files = sorted(p for p in args.dir.glob("*.jsonl") if RUN_NAME.match(p.stem))
    if not files:
        raise SystemExit(f"no <algo>_s<seed>.jsonl files in {args.dir}")
    runs = [read_run(p) for p in files]
    args.out.mkdir(parents=True, exist_ok=True)
    final = max((r["steps"][-1] for r in runs if r["steps"]), default=0)
    summary = {"task": "demo", "call": args.call, "planned_steps": args.steps, "final_step": final, "notes": args.note,
               "table": table(runs), "runs": runs}
    (args.out / f"{args.name}.json").write_text(json.dumps(summary, indent=1))
    title = args.title
    if args.steps is not None and final < args.steps:
        title += f"; every run stopped by step {final} of the {args.steps} planned"
        print(f"WARNING: no run reached the planned step {args.steps}; the table ends at step {final}")
    plot(runs, args.out / f"{args.name}.png", title, {row["algo"]: row for row in summary["table"]}, final)
    for row in summary["table"]:
        print(json.dumps(row))


if __name__ == "__main__":
    main()
