"""Summarise the SDPO vs GRPO demo runs (bench/learning/run_demo.sh) into a JSON of measured figures and a PNG.

    python bench/learning/plot_demo.py --runs bench/learning/raw/demo --out bench/learning/results/demo_sdpo_vs_grpo

Reads <algo>_attempts.jsonl (every judged sample) and <algo>_metrics.log (verl's per-step console metrics).
Reward per step is the mean score of that step's samples; the x-axis "generated samples" is cumulative.
"""
from __future__ import annotations

import argparse
import json
import re
from collections import defaultdict
from pathlib import Path

METRIC = re.compile(r"([\w/@.\-]+):(-?[\d.]+(?:e-?\d+)?)")
PHASES = ("gen", "old_log_prob", "adv", "update_actor", "update_weights", "step")


def per_step_rewards(path: Path) -> list[tuple[int, float, int]]:
    by_step = defaultdict(list)
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        if not rec["infra"]:
            by_step[rec["step"]].append(rec["score"])
    return [(step, sum(v) / len(v), len(v)) for step, v in sorted(by_step.items())]


def per_step_metrics(path: Path) -> list[dict[str, float]]:
    rows = []
    for line in path.read_text().splitlines():
        rows.append({k: float(v) for k, v in METRIC.findall(line)})
    return rows


def summarise(runs: Path) -> dict:
    summary = {}
    for log in sorted(runs.glob("*_attempts.jsonl")):
        algo = log.name.split("_")[0]
        rewards = per_step_rewards(log)
        metrics = per_step_metrics(runs / f"{algo}_metrics.log")
        warm = metrics[1:]  # step 1 includes compilation / cache warm-up
        summary[algo] = {
            "steps": len(rewards),
            "reward_per_step": [round(r, 4) for _, r, _ in rewards],
            "samples_per_step": [n for _, _, n in rewards],
            "mean_reward_all_steps": round(sum(r for _, r, _ in rewards) / len(rewards), 4),
            "timing_s_mean_after_step1": {
                p: round(sum(m.get(f"timing_s/{p}", 0.0) for m in warm) / max(1, len(warm)), 3) for p in PHASES
            },
            "peak_gpu_memory_gb": round(
                max(v for m in metrics for k, v in m.items() if k.endswith("perf/max_memory_allocated_gb")), 2
            ),
            "sdpo_divergence_mean_per_step": [round(v, 5) for m in metrics for k, v in m.items()
                                              if k.endswith("sdpo/divergence_mean")],
        }
    common = min(s["steps"] for s in summary.values()) if summary else 0
    for s in summary.values():
        s[f"mean_reward_first_{common}_steps"] = round(sum(s["reward_per_step"][:common]) / max(1, common), 4)
    if {"sdpo", "grpo"} <= summary.keys():
        t = {a: summary[a]["timing_s_mean_after_step1"]["step"] for a in ("sdpo", "grpo")}
        summary["step_time_ratio_sdpo_over_grpo"] = round(t["sdpo"] / t["grpo"], 3)
    return summary


def plot(summary: dict, png: Path, setting: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for algo, s in summary.items():
        if not isinstance(s, dict) or "steps" not in s:
            continue
        steps = list(range(1, s["steps"] + 1))
        samples, total = [], 0
        for n in s["samples_per_step"]:
            total += n
            samples.append(total)
        axes[0].plot(steps, s["reward_per_step"], marker="o", label=algo.upper())
        axes[1].plot(samples, s["reward_per_step"], marker="o", label=algo.upper())
    axes[0].set_xlabel("training step")
    axes[1].set_xlabel("generated samples")
    for ax in axes:
        ax.set_ylabel("mean reward of the step's samples")
        ax.grid(alpha=0.3)
        ax.legend()
    steps = ", ".join(f"{a.upper()} {s['steps']} steps"
                      for a, s in summary.items() if isinstance(s, dict) and "steps" in s)
    fig.suptitle(f"SmolLM2-135M-Instruct, addition task with feedback\n({setting}; {steps})", fontsize=10)
    fig.tight_layout()
    fig.savefig(png, dpi=120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=Path, default=Path("bench/learning/raw/demo"))
    parser.add_argument("--out", type=Path, default=Path("bench/learning/results/demo_sdpo_vs_grpo"))
    parser.add_argument("--command", required=True, help="the exact command that produced the runs (kept in the JSON)")
    parser.add_argument("--setting", default="1x H200, same data seed", help="hardware and conditions, for the title")
    args = parser.parse_args()
    summary = summarise(args.runs)
    summary["command"] = args.command
    summary["setting"] = args.setting
    args.out.with_suffix(".json").write_text(json.dumps(summary, indent=2))
    plot(summary, args.out.with_suffix(".png"), args.setting)
    print(json.dumps({k: v for k, v in summary.items() if k != "command"}, indent=1)[:3000])


if __name__ == "__main__":
    main()
