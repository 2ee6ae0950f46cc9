"""Summarise bench/step_time/run_step_phases.sh into step_time_fair.{json,png}: per response length, each algorithm's
step time at its fastest configuration, and the ratios over GRPO's.

    python bench/step_time/step_time_fair.py --phases <folder with rollouts.json and phases_<algo>.json> \\
        --call "<date, device, command>" [--phases <another job's folder> --call "..."] \\
        --out bench/step_time/results/step_time_fair

step = generation (measured once per length, the same work for every algorithm) + the algorithm's own phases, each the
mean of steps 2..N (step 1 is warm-up): driver sample preparation (SDPO: + teacher prompts), old log-probs, advantages,
actor update (SDPO: + teacher forward and EMA update, nested). tokens/s = prompt + response tokens of the step's samples
/ step seconds. Each algorithm counts at its fastest configuration that ran (`<algo>_fastest` and `<algo>_config` name
it): ratio_<algo>_over_grpo = its step / GRPO's. Not in the step: verl's weight sync to the rollout engine (0.5-0.7 s in
the full runs of bench/step_time/run_step_time.sh, the same for every algorithm), so the ratios are a little above the
full-run ones.

Several jobs (one --phases each, oldest first): per length, each family comes from the last job that measured it, and
its ratio is to the GRPO of that same job. A ratio never pairs two machines: the same GRPO step differed by up to 8 %
between two H200 machines on 2026-12-04 (37.9 vs 35.3 s at 2K).
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

CONFIGS = {
    "grpo": "GRPO as the recipes run it (padding removed, no fused kernels)",
    "grpo_fused": "GRPO with verl's fused log-prob kernels (use_fused_kernels=true, torch backend)",
    "grpo_fused_triton": "GRPO with verl's fused log-prob kernels (use_fused_kernels=true, triton backend)",
    "sdpo": "SDPO as the recipes run it (padding removed)",
    "sdpo_shared_prefix": "SDPO with each group's shared teacher-prompt prefix computed once "
                          "(sdpo.teacher.share_prompt_prefix=true)",
    "srpo": "SRPO as the recipes run it (padding removed)",
    "srpo_shared_prefix": "SRPO with each group's shared teacher-prompt prefix computed once "
                          "(sdpo.teacher.share_prompt_prefix=true)",
}
FAMILIES = ("grpo", "sdpo", "srpo")
PHASES = ("sdpo_prepare", "old_log_prob", "adv", "update_actor")
NESTED = ("sdpo_teacher_forward", "sdpo_ema_update")


def _mean(values: list[float]) -> float:
    return round(sum(values) / len(values), 3)


def summarise_algo(run: dict, length: str, gen_s: float) -> dict | None:
    """Mean of steps 2..N per phase; None when fewer than two steps finished."""
    row = run["lengths"].get(length)
    if row is None or len(row["iterations"]) < 2:
        return None
    measured = row["iterations"][1:]
    phase_s = {"gen": gen_s}
    for phase in (*PHASES, *NESTED):
        if any(phase in it for it in measured):
            phase_s[phase] = _mean([it.get(phase, 0.0) for it in measured])
    phase_s["step"] = round(gen_s + sum(phase_s[p] for p in PHASES if p in phase_s), 3)
    tokens = row["prompt_tokens"] + row["response_tokens"]
    metrics = row.get("metrics", {})
    return {
        "phase_s": phase_s,
        "steps_averaged": len(measured),
        "step_s_per_step": [round(gen_s + sum(it.get(p, 0.0) for p in PHASES), 3) for it in row["iterations"]],
        "tokens_per_s": round(tokens / phase_s["step"], 1),
        "peak_allocated_gb": max(it["peak_allocated_gb"] for it in measured),
        "peak_reserved_gb": max(it["peak_reserved_gb"] for it in measured),
        # allocator cache flushes per step (each a device sync); absent from runs before 2026-12-04 12:30 UTC
        "alloc_retries_per_step": [it["alloc_retries"] for it in measured if "alloc_retries" in it],
        "samples": row["samples"], "prompt_tokens": row["prompt_tokens"], "response_tokens": row["response_tokens"],
        "distilled_sample_fraction": metrics.get("sdpo_lean/distilled_sample_fraction"),
        "init_s": run["init_s"],
        "overrides": run["overrides"],
    }


def summarise(folder: Path) -> dict:
    rollouts = json.loads((folder / "rollouts.json").read_text())
    runs = {p.stem.removeprefix("phases_"): json.loads(p.read_text()) for p in sorted(folder.glob("phases_*.json"))}
    summary = {"lengths": list(rollouts["lengths"]), "rollout_engine_start_s": rollouts["engine_start_s"]}
    for length, gen in rollouts["lengths"].items():
        result = {"gen_tokens_per_s": gen["tokens_per_s"]}
        for algo, run in runs.items():
            row = summarise_algo(run, length, gen["gen_s"])
            if row is not None:
                result[algo] = row
        for family in FAMILIES:
            ran = [a for a in CONFIGS if a.split("_")[0] == family and a in result]
            if ran:
                fastest = min(ran, key=lambda a: result[a]["phase_s"]["step"])
                result[f"{family}_fastest"] = fastest
                result[f"{family}_config"] = CONFIGS[fastest]
        if "grpo_fastest" not in result:
            raise ValueError(f"{folder}: no GRPO configuration finished two steps at {length} tokens")
        grpo_step = result[result["grpo_fastest"]]["phase_s"]["step"]
        for family in FAMILIES[1:]:
            if f"{family}_fastest" in result:
                ratio = result[result[f"{family}_fastest"]]["phase_s"]["step"] / grpo_step
                result[f"ratio_{family}_over_grpo"] = round(ratio, 3)
        summary[length] = result
    return summary


def combine(jobs: dict[str, dict]) -> dict:
    """Per length, {family: its fastest configuration's row from the last job that measured it (+ "job", "algo",
    "config")}, ratio_<family>_over_grpo from that job, and "jobs": each job's own rows."""
    lengths = list(dict.fromkeys(length for job in jobs.values() for length in job["lengths"]))
    summary: dict = {"lengths": lengths}
    for length in lengths:
        measured = {name: job[length] for name, job in jobs.items() if length in job}
        result: dict = {"jobs": measured}
        for family in FAMILIES:
            ran = [name for name, row in measured.items() if f"{family}_fastest" in row]
            if not ran:
                continue
            name, row = ran[-1], measured[ran[-1]]
            algo = row[f"{family}_fastest"]
            result[family] = {**row[algo], "job": name, "algo": algo, "config": CONFIGS[algo]}
            if family != "grpo":
                result[family]["grpo_step_s_same_job"] = row[row["grpo_fastest"]]["phase_s"]["step"]
                result[f"ratio_{family}_over_grpo"] = row[f"ratio_{family}_over_grpo"]
        result["grpo_config"] = result["grpo"]["config"]
        summary[length] = result
    return summary


def plot(summary: dict, png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lengths = summary["lengths"]
    fig, axes = plt.subplots(1, len(lengths), figsize=(3.0 + 1.2 * max(_bars(summary, n) for n in lengths) * len(
        lengths), 4.2), squeeze=False)
    for ax, length in zip(axes[0], lengths):
        bars = [(job, algo, row) for job, row in summary[length]["jobs"].items() for algo in CONFIGS if algo in row]
        # a job's name on two lines at its date (packed_h100 / 2026-12-05_r2048): long names overlapped
        names = [f"{algo}\n{job.replace('_20', chr(10) + '20', 1)}" if len(summary[length]["jobs"]) > 1 else algo
                 for job, algo, _ in bars]
        bottom = [0.0] * len(bars)
        # the teacher forward is drawn apart (hatched) on top of the rest of the actor update that holds it
        nested = [row[algo]["phase_s"].get("sdpo_teacher_forward", 0.0) for _, algo, row in bars]
        for i, phase in enumerate((*("gen", *PHASES), "sdpo_teacher_forward")):
            heights = [row[algo]["phase_s"].get(phase, 0.0) for _, algo, row in bars]
            if phase == "update_actor":
                heights = [h - n for h, n in zip(heights, nested)]
            ax.bar(names, heights, bottom=bottom, color="C4" if phase == "sdpo_teacher_forward" else f"C{i}",
                   hatch="//" if phase == "sdpo_teacher_forward" else None,
                   label="update_actor: teacher forward" if phase == "sdpo_teacher_forward" else phase)
            bottom = [b + h for b, h in zip(bottom, heights)]
        for x, (_, _, row) in enumerate(bars):
            grpo_step = row[row["grpo_fastest"]]["phase_s"]["step"]   # the GRPO of the bar's own job
            ax.annotate(f"{bottom[x]:.1f} s\n{bottom[x] / grpo_step:.3f}x", (x, bottom[x]), ha="center",
                        va="bottom", fontsize=8)
        ax.set_title(f"{length}-token responses (ratios to the same job's {summary[length]['grpo']['algo']})",
                     fontsize=9)
        ax.set_ylabel("seconds per step (mean of steps 2..N)")
        ax.tick_params(axis="x", labelsize=7)
        ax.set_ylim(0, max(bottom) * 1.2)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=7, loc="lower center", ncol=len(labels), bbox_to_anchor=(0.5, -0.06))
    fig.suptitle("Step time by phase, Qwen3-1.7B shape, 8 prompts x n=8, one GPU a job", fontsize=10)
    fig.tight_layout()
    fig.savefig(png, dpi=120, bbox_inches="tight")
    plt.close(fig)


def _bars(summary: dict, length: str) -> int:
    return sum(algo in row for row in summary[length]["jobs"].values() for algo in CONFIGS)


def jobs_arguments(description: str, out: str,
                   previous: str | None = None) -> tuple[argparse.ArgumentParser, argparse.Namespace]:
    """The summarisers' command line: --phases/--call once per job, --out (default `out`), and with `previous` (its
    help) --previous; checked. `args.names`: each job's name, its folder's without the `step_phases_` prefix."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--phases", type=Path, action="append", required=True,
                        help="run_step_phases.sh's $OUT (unpacked); once per job, oldest first")
    parser.add_argument("--call", action="append", required=True,
                        help="what ran, when, where (stored in the JSON); once per --phases, in the same order")
    parser.add_argument("--out", type=Path, default=Path(out))
    if previous is not None:
        parser.add_argument("--previous", type=Path, help=previous)
    args = parser.parse_args()
    if len(args.call) != len(args.phases):
        parser.error(f"{len(args.phases)} --phases but {len(args.call)} --call: give one call per job")
    names = [folder.name.removeprefix("step_phases_") for folder in args.phases]
    if len(set(names)) != len(names):
        parser.error(f"two jobs share a folder name: {names}")
    args.names = names
    return parser, args


def main() -> None:
    _, args = jobs_arguments(__doc__, "bench/step_time/results/step_time_fair")
    names = args.names
    jobs = {name: summarise(folder) for name, folder in zip(names, args.phases)}
    summary = {"jobs": {name: {"call": call, "rollout_engine_start_s": jobs[name]["rollout_engine_start_s"]}
                        for name, call in zip(names, args.call)}, **combine(jobs)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(summary, indent=1))
    plot(summary, args.out.with_suffix(".png"))
    for length in summary["lengths"]:
        row = summary[length]
        picked = {f: f"{row[f]['algo']} ({row[f]['job']})" for f in FAMILIES if f in row}
        ratios = {k: v for k, v in row.items() if k.startswith("ratio_")}
        print(f"{length}: {picked}; {ratios}")


if __name__ == "__main__":
    main()
