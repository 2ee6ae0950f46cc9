"""Summarise the step-time runs of bench/run_step_time.sh at several response lengths into step_time_fair.{json,png}.

    python bench/step_time_fair.py --runs <OUT of run_step_time.sh, holding r2048/, r8192/> \\
        --out bench/results/step_time_fair --call "<date, device, what ran>"

Per length and algorithm (grpo, grpo_fused, sdpo, srpo; whichever ran): `plot_step_time.summarise_algo` (mean of
steps 2..N per phase, actor and whole-GPU peak memory, the command) plus tokens/s = (prompt + response tokens per
sample) x samples per step / step seconds. GRPO's figure is its fastest configuration that ran (`grpo_config` names
it); ratio_<algo>_over_grpo = that algorithm's step time / GRPO's fastest.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from plot_step_time import summarise_algo

GRPO_CONFIGS = {"grpo": "the recipes' GRPO (verl's default log-prob path)",
                "grpo_fused": "GRPO with actor_rollout_ref.model.use_fused_kernels=true"}
SDPO_FAMILY = ("sdpo", "srpo")


def summarise_length(runs: Path, samples_per_step: int) -> dict:
    """One length's folder (<algo>_metrics.log, <algo>_command.txt, <algo>_smi.csv per algorithm)."""
    algos = sorted(p.name.removesuffix("_metrics.log") for p in runs.glob("*_metrics.log") if p.stat().st_size)
    result = {}
    for algo in algos:
        row = summarise_algo(runs, algo, None)
        tokens = row["prompt_length_mean"] + row["response_length_mean"]
        row["tokens_per_s"] = round(tokens * samples_per_step / row["phase_s"]["step"], 1)
        result[algo] = row
    grpo = [a for a in GRPO_CONFIGS if a in result]
    if not grpo:
        raise ValueError(f"{runs}: no GRPO run logged a step ({', '.join(algos) or 'none'} did)")
    fastest = min(grpo, key=lambda a: result[a]["phase_s"]["step"])
    result["grpo_config"] = GRPO_CONFIGS[fastest]
    result["grpo_fastest"] = fastest
    for algo in SDPO_FAMILY:
        if algo in result:
            step_s = result[algo]["phase_s"]["step"]
            result[f"ratio_{algo}_over_grpo"] = round(step_s / result[fastest]["phase_s"]["step"], 3)
    return result


def plot(summary: dict, png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lengths = summary["lengths"]
    fig, axes = plt.subplots(1, len(lengths), figsize=(5.5 * len(lengths), 3.6), squeeze=False)
    for ax, length in zip(axes[0], lengths):
        row = summary[length]
        algos = [a for a in (*GRPO_CONFIGS, *SDPO_FAMILY) if a in row]
        seconds = [row[a]["phase_s"]["step"] for a in algos]
        bars = ax.bar(algos, seconds, color=[f"C{i}" for i in range(len(algos))])
        for bar, algo in zip(bars, algos):
            ratio = row.get(f"ratio_{algo}_over_grpo")
            label = f"{bar.get_height():.1f} s" + (f"\n{ratio:.3f}x" if ratio is not None else "")
            ax.annotate(label, (bar.get_x() + bar.get_width() / 2, bar.get_height()), ha="center", va="bottom",
                        fontsize=8)
        ax.set_title(f"{length}-token responses")
        ax.set_ylabel("seconds per step (mean of steps 2..N)")
    fig.suptitle("Step time, Qwen3-1.7B shape, 8 prompts x n=8 (ratios over GRPO's fastest)", fontsize=10)
    fig.tight_layout()
    fig.savefig(png, dpi=120, bbox_inches="tight")
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=Path, required=True, help="folder holding r<length>/ sub-folders")
    parser.add_argument("--out", type=Path, default=Path("bench/results/step_time_fair"))
    parser.add_argument("--call", required=True, help="what ran, when, where (stored in the JSON)")
    parser.add_argument("--samples-per-step", type=int, default=64, help="prompts x rollouts per step")
    args = parser.parse_args()
    folders = sorted((p for p in args.runs.glob("r*") if p.is_dir() and p.name[1:].isdigit()),
                     key=lambda p: int(p.name[1:]))
    if not folders:
        raise SystemExit(f"no r<length>/ folders in {args.runs}")
    summary = {"call": args.call, "lengths": [p.name[1:] for p in folders]}
    for folder in folders:
        summary[folder.name[1:]] = summarise_length(folder, args.samples_per_step)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(summary, indent=1))
    plot(summary, args.out.with_suffix(".png"))
    for length in summary["lengths"]:
        row = summary[length]
        ratios = {k: v for k, v in row.items() if k.startswith("ratio_")}
        print(f"{length}: GRPO fastest = {row['grpo_fastest']}; {ratios}")


if __name__ == "__main__":
    main()
