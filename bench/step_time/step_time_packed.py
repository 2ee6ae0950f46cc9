"""Summarise a packed step-time job (`ATTENTION=fa4_varlen bench/step_time/run_step_phases.sh start`, issue 30)
into step_time_packed.{json,png}: the configuration users run (padding removed, dynamic batch size, several sequences
per micro-batch), each family's step at its fastest configuration, the ratios to the same job's GRPO, the phases and the
peak memory.

    python bench/step_time/step_time_packed.py --phases <unpacked folder> --call "<date, device, command>" \\
        [--phases <another call's folder> --call "..."] --out bench/step_time/results/step_time_packed

The step and its phases are bench/step_time/step_time_fair.py's (mean of steps 2..N, generation measured once per
length). Every phases file of the folder must come from a packed run (step_phases.py --attention), with one attention.
"""
from __future__ import annotations

import json
from pathlib import Path

from step_time_fair import FAMILIES, combine, jobs_arguments, plot, summarise

GOALS = {"sdpo": 1.08, "srpo": 1.05}  # issue 30: step time over GRPO's, at both lengths


def packed_config(folder: Path) -> dict:
    """The packed settings every phases file of `folder` shares (ValueError if one was not packed or they differ)."""
    headers = {p.name: json.loads(p.read_text()) for p in sorted(folder.glob("phases_*.json"))}
    if not headers:
        raise ValueError(f"{folder}: no phases_*.json")
    unpacked = [name for name, run in headers.items() if not run.get("attention")]
    if unpacked:
        raise ValueError(f"{folder}: {', '.join(unpacked)} did not run packed (step_phases.py --attention)")
    settings = {(run["attention"], run["packed_tokens"]) for run in headers.values()}
    if len(settings) > 1:
        raise ValueError(f"{folder}: the runs differ in attention or token cap: {sorted(settings)}")
    (attention, tokens), = settings
    model = next(o.split("=", 1)[1] for o in next(iter(headers.values()))["overrides"]
                 if o.startswith("actor_rollout_ref.model.path="))
    return {"use_remove_padding": True, "use_dynamic_bsz": True, "attn_implementation": attention,
            "model": model, "ppo_max_token_len_per_gpu": tokens, "log_prob_max_token_len_per_gpu": tokens}


def packed_summary(jobs: list[tuple[Path, str]]) -> tuple[dict, dict]:
    """(the issue-30 summary, step_time_fair's combined rows for its plot) of one or more packed jobs, (folder, call)
    each, oldest first. Per length, each family comes from the last job that measured it and its ratio is to that
    job's own GRPO (step_time_fair.combine): a job of one device call can hold one length, or a subset of methods."""
    configs = {folder.name: packed_config(folder) for folder, _ in jobs}
    if len({json.dumps(c, sort_keys=True) for c in configs.values()}) > 1:
        raise ValueError(f"the jobs differ in their packed configuration: {configs}")
    combined = combine({folder.name: summarise(folder) for folder, _ in jobs})
    lengths: dict = {}
    for length in combined["lengths"]:
        row = combined[length]
        families = [f for f in FAMILIES if f in row]
        entry = {f"ratio_{f}_over_grpo": row[f"ratio_{f}_over_grpo"] for f in FAMILIES[1:]
                 if f"ratio_{f}_over_grpo" in row}
        entry.update({
            "grpo_config": row["grpo"]["algo"],
            "job": {row[f]["algo"]: row[f]["job"] for f in families},
            "grpo_step_s_same_job": {row[f]["algo"]: row[f]["grpo_step_s_same_job"] for f in families if f != "grpo"},
            "step_s": {row[f]["algo"]: row[f]["phase_s"]["step"] for f in families},
            "phases": {row[f]["algo"]: row[f]["phase_s"] for f in families},
            "peak_gb": {row[f]["algo"]: {"allocated": row[f]["peak_allocated_gb"],
                                         "reserved": row[f]["peak_reserved_gb"]} for f in families},
            "steps_averaged": {row[f]["algo"]: row[f]["steps_averaged"] for f in families},
            "samples": row["grpo"]["samples"],
        })
        lengths[length] = entry
    # None: not measured at every length (nothing to say yet)
    goal_met = {f: (all(lengths[n][f"ratio_{f}_over_grpo"] <= goal for n in lengths)
                    if all(f"ratio_{f}_over_grpo" in lengths[n] for n in lengths) else None)
                for f, goal in GOALS.items()}
    summary = {"call": {folder.name: call for folder, call in jobs}, "config": next(iter(configs.values())),
               "lengths": lengths, "goals": GOALS, "goal_met": goal_met}
    return summary, combined


def main() -> None:
    parser, args = jobs_arguments(__doc__, "bench/step_time/results/step_time_packed")
    try:
        summary, rows = packed_summary(list(zip(args.phases, args.call)))
    except ValueError as e:
        parser.exit(2, f"error: {e} (summarise a job run with ATTENTION=... bench/step_time/run_step_phases.sh)\n")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    plot(rows, args.out.with_suffix(".png"))
    args.out.with_suffix(".json").write_text(json.dumps(summary, indent=1))
    for length, row in summary["lengths"].items():
        print(f"{length}: " + ", ".join(f"{k} {v}" for k, v in row.items() if k.startswith("ratio_")))
    print(f"goal met: {summary['goal_met']}")


if __name__ == "__main__":
    main()
