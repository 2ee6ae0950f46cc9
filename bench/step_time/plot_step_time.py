"""Summarise the SDPO-vs-GRPO step-time runs (bench/step_time/run_step_time.sh) into a JSON of measured figures and a
PNG.

    python bench/step_time/plot_step_time.py --runs <dir with {sdpo,grpo}_metrics.log> \\
        --out bench/step_time/results/step_time
    python bench/step_time/plot_step_time.py --sdpo-runs <dir> --grpo-runs <other dir> --steps 2 --out ...  # two calls

Per algorithm: the mean over the chosen steps (default 2..N: step 1 carries compilation and cache warm-up;
`--steps 1` compares the warm-up steps when a run got no further) of each phase of verl's
timing (`timing_s/*`), the SDPO-only phases nested in them (driver-side teacher prompts `sdpo_prepare` inside
`old_log_prob`, which also holds the attempt log and infra masking that both methods do; the teacher forward
`actor/timing_s/sdpo_teacher_forward` and the EMA update `sdpo_ema_update`
inside `update_actor`), the actor's peak memory over those steps, and the whole GPU's peak over the whole run
(vLLM's reserved pool included) from nvidia-smi samples (`<algo>_smi.csv`, MiB) when present.
Ratio = SDPO step time / GRPO step time.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

# verl's console step lines are read as the demo's summary reads them (bench/learning/plot_demo.py)
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "learning"))
from plot_demo import per_step_metrics  # noqa: E402

PHASES = {
    "generation (incl. Lean reward)": "timing_s/gen",
    "old log-prob": "timing_s/old_log_prob",
    "  of which driver sample prep (SDPO: + teacher prompts)": "timing_s/sdpo_prepare",
    "advantage": "timing_s/adv",
    "actor update": "timing_s/update_actor",
    "  of which SDPO teacher forward": "actor/timing_s/sdpo_teacher_forward",
    "  of which SDPO EMA teacher update": "timing_s/sdpo_ema_update",
    "weight sync": "timing_s/update_weights",
    "step": "timing_s/step",
}


def smi_peak_gib(path: Path) -> float | None:
    if not path.exists():
        return None
    values = [float(v) for v in path.read_text().split() if v.replace(".", "", 1).isdigit()]
    return round(max(values) / 1024, 2) if values else None


def summarise_algo(runs: Path, algo: str, steps: list[int] | None) -> dict:
    metrics = per_step_metrics(runs / f"{algo}_metrics.log")
    chosen = steps or list(range(2, len(metrics) + 1))
    missing = [k for k in chosen if not 1 <= k <= len(metrics)]
    if not chosen or missing:
        raise ValueError(f"{algo}: {len(metrics)} step(s) logged; cannot average steps {missing or chosen}")
    warm = [metrics[k - 1] for k in chosen]
    mean = lambda key: round(sum(m.get(key, 0.0) for m in warm) / len(warm), 3)  # noqa: E731
    peak = lambda suffix: round(max(v for m in warm for k, v in m.items() if k.endswith(suffix)), 2)  # noqa: E731
    command = runs / f"{algo}_command.txt"
    return {
        "steps_logged": len(metrics),
        "steps_averaged": chosen,
        "phase_s": {label: mean(key) for label, key in PHASES.items()},
        "step_s_per_step": [round(m.get("timing_s/step", 0.0), 3) for m in metrics],
        "actor_peak_memory_allocated_gb": peak("perf/max_memory_allocated_gb"),
        "actor_peak_memory_reserved_gb": peak("perf/max_memory_reserved_gb"),
        "gpu_peak_memory_used_gib_nvidia_smi": smi_peak_gib(runs / f"{algo}_smi.csv"),
        "response_length_mean": mean("response_length/mean"),
        "prompt_length_mean": mean("prompt_length/mean"),
        "command": command.read_text().strip() if command.exists() else None,
    }


def summarise(runs: dict[str, Path], steps: list[int] | None = None) -> dict:
    """`runs` maps sdpo and grpo to the folder holding that algorithm's files."""
    summary = {algo: {"runs": str(runs[algo]), **summarise_algo(runs[algo], algo, steps)} for algo in ("sdpo", "grpo")}
    step = {a: summary[a]["phase_s"]["step"] for a in ("sdpo", "grpo")}
    summary["step_time_ratio_sdpo_over_grpo"] = round(step["sdpo"] / step["grpo"], 3)
    summary["extra_seconds_per_step_sdpo"] = {
        label: round(summary["sdpo"]["phase_s"][label] - summary["grpo"]["phase_s"][label], 3) for label in PHASES
    }
    return summary


def plot(summary: dict, png: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(10, 3.6))
    colors = plt.get_cmap("tab10").colors
    algos = ["grpo", "sdpo"]
    for row, algo in enumerate(algos):
        p = summary[algo]["phase_s"]
        parts = [
            ("generation", p["generation (incl. Lean reward)"]),
            ("old log-prob", p["old log-prob"] - p["  of which driver sample prep (SDPO: + teacher prompts)"]),
            ("driver sample prep", p["  of which driver sample prep (SDPO: + teacher prompts)"]),
            ("actor update",
             p["actor update"] - p["  of which SDPO teacher forward"] - p["  of which SDPO EMA teacher update"]),
            ("SDPO teacher forward", p["  of which SDPO teacher forward"]),
            ("SDPO EMA update", p["  of which SDPO EMA teacher update"]),
            ("weight sync", p["weight sync"]),
        ]
        parts.append(("other", max(0.0, p["step"] - sum(v for _, v in parts))))
        left = 0.0
        for i, (label, value) in enumerate(parts):
            ax.barh(row, value, left=left, color=colors[i], label=label if row == 0 else None, edgecolor="white")
            left += value
        ax.text(left + 0.3, row, f"{p['step']:.1f} s", va="center")
    ax.set_yticks(range(len(algos)), [a.upper() for a in algos])
    averaged = summary["sdpo"]["steps_averaged"]
    ax.set_xlabel(f"seconds per training step (mean of steps {averaged})")
    ax.set_title(f"{title}\nSDPO/GRPO step time = {summary['step_time_ratio_sdpo_over_grpo']:.3f}")
    ax.legend(ncol=4, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.28))
    fig.tight_layout()
    fig.savefig(png, dpi=120, bbox_inches="tight")
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=Path, default=None, help="folder with both algorithms' files")
    parser.add_argument("--sdpo-runs", type=Path, default=None, help="SDPO's folder (default --runs)")
    parser.add_argument("--grpo-runs", type=Path, default=None, help="GRPO's folder (default --runs)")
    parser.add_argument("--out", type=Path, default=Path("bench/step_time/results/step_time"))
    parser.add_argument("--steps", default=None, help="comma-separated step numbers to average (default 2..N)")
    parser.add_argument("--title",
                        default="Qwen3-1.7B-shaped model, 1k-token prompts, 2k-token responses, n=8, 1x H200")
    args = parser.parse_args()
    runs = {"sdpo": args.sdpo_runs or args.runs, "grpo": args.grpo_runs or args.runs}
    if None in runs.values():
        parser.error("give --runs, or both --sdpo-runs and --grpo-runs")
    summary = summarise(runs, [int(k) for k in args.steps.split(",")] if args.steps else None)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(summary, indent=2))
    plot(summary, args.out.with_suffix(".png"), args.title)
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
