"""Summarise packed step-time jobs (`ATTENTION=fa4_varlen bench/step_time/run_step_phases.sh call`, issues 30 and 49)
into step_time_packed.{json,png}: the configuration users run (padding removed, dynamic batch size, several sequences
per micro-batch), each family's step at its fastest configuration, the ratios to the same job's GRPO, the phases and the
peak memory, per sibling-solution case.

    python bench/step_time/step_time_packed.py --phases <unpacked folder> --call "<date, device, command>" \\
        [--phases <another call's folder> --call "..."] [--previous bench/step_time/results/step_time_packed.json] \\
        --out bench/step_time/results/step_time_packed

The step and its phases are bench/step_time/step_time_fair.py's (mean of steps 2..N, generation measured once per
length). Every phases file of the folder must come from a packed run (step_phases.py --attention), with one attention.
A job's case is the sibling solution its rollouts state (synthetic_rollouts.py: `whole`, `prover`); a job whose
rollouts state none ran before issue 49, on replies two thirds of which its tokenizer could not decode: its case is
`shortened`. Each job records its stated and measured sibling-solution tokens per length, and a job that measured
fewer than it states is refused. `--previous` keeps an earlier summary's cases that these jobs do not measure again
(the figures of 2026-12-05 are the `shortened` case). The plot is step_time_packed_<case>.png per case measured here.
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


SHORTENED = {"case": "shortened",
             "note": "shortened by tokenizer mismatch: reply ids drawn over the model's 151,936 ids, of which the "
                     "saved tokenizer decodes 49,152; a 2,048-token reply came back as 697 tokens, so the sibling "
                     "solution in a teacher prompt was about a third of the reply (issue 49)"}


def job_solution(folder: Path) -> dict:
    """The sibling solution a job assumed: its rollouts' case and stated tokens per length, and per length the fewest
    tokens each algorithm's run found in a solved sample after think-strip; SHORTENED for a job from before issue 49.
    ValueError if a run found fewer tokens than the job states."""
    rollouts = json.loads((folder / "rollouts.json").read_text())
    stated = {n: row["sibling_solution"] for n, row in rollouts["lengths"].items() if row.get("sibling_solution")}
    if not stated:
        return dict(SHORTENED)
    cases = {row["case"] for row in stated.values()}
    if len(cases) > 1:
        raise ValueError(f"{folder}: the rollouts mix sibling-solution cases {sorted(cases)}")
    measured: dict = {}
    for path in sorted(folder.glob("phases_*.json")):
        run = json.loads(path.read_text())
        for n, row in run["lengths"].items():
            tokens = row.get("sibling_solution_tokens")
            if tokens is not None and n in stated and tokens < stated[n]["tokens"]:
                raise ValueError(f"{path}: a teacher prompt showed a sibling solution of {tokens} tokens at {n}, "
                                 f"under the {stated[n]['tokens']} the job states")
            if tokens is not None:
                measured.setdefault(n, {})[run["algo"]] = tokens
    return {"case": cases.pop(), "stated_tokens": {n: row["tokens"] for n, row in stated.items()},
            "measured_tokens": measured}


def case_summary(jobs: list[tuple[Path, str]]) -> tuple[dict, dict]:
    """(one case's summary, step_time_fair's combined rows for its plot) of its jobs, (folder, call) each, oldest
    first. Per length, each family comes from the last job that measured it and its ratio is to that job's own GRPO
    (step_time_fair.combine): a job of one device call can hold one length, or a subset of methods."""
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
    return {"lengths": lengths, "goal_met": goal_met}, combined


def previous_cases(previous: dict) -> tuple[dict, dict]:
    """(cases, jobs) of an earlier summary; one from before issue 49 (no `cases`) is the `shortened` case."""
    if "cases" in previous:
        return previous["cases"], previous["jobs"]
    jobs = {name: {"call": call, "sibling_solution": dict(SHORTENED)} for name, call in previous["call"].items()}
    return {"shortened": {"lengths": previous["lengths"], "goal_met": previous["goal_met"]}}, jobs


def packed_summary(jobs: list[tuple[Path, str]], previous: dict | None = None) -> tuple[dict, dict]:
    """(the summary: config, goals, per case its lengths and goal_met, per job its call and sibling solution; each
    case's combined rows for its plot). The cases these jobs measure replace those of `previous`; its others stay."""
    configs = {folder.name: packed_config(folder) for folder, _ in jobs}
    if previous is not None:
        configs["--previous"] = previous["config"]
    if len({json.dumps(c, sort_keys=True) for c in configs.values()}) > 1:
        raise ValueError(f"the jobs differ in their packed configuration: {configs}")
    solutions = {folder.name: job_solution(folder) for folder, _ in jobs}
    by_case: dict[str, list[tuple[Path, str]]] = {}
    for folder, call in jobs:
        by_case.setdefault(solutions[folder.name]["case"], []).append((folder, call))
    cases, all_jobs = previous_cases(previous) if previous is not None else ({}, {})
    cases, rows = dict(cases), {}
    for case, group in by_case.items():
        cases[case], rows[case] = case_summary(group)
    all_jobs = {**all_jobs, **{folder.name: {"call": call, "sibling_solution": solutions[folder.name]}
                               for folder, call in jobs}}
    summary = {"config": next(iter(configs.values())), "goals": GOALS, "cases": cases, "jobs": all_jobs}
    return summary, rows


def main() -> None:
    parser, args = jobs_arguments(__doc__, "bench/step_time/results/step_time_packed",
                                  previous="an earlier step_time_packed.json whose other cases to keep")
    try:
        previous = json.loads(args.previous.read_text()) if args.previous else None
        summary, rows = packed_summary(list(zip(args.phases, args.call)), previous)
    except ValueError as e:
        parser.exit(2, f"error: {e} (summarise a job run with ATTENTION=... bench/step_time/run_step_phases.sh)\n")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    for case, case_rows in rows.items():
        plot(case_rows, args.out.with_name(f"{args.out.name}_{case}.png"))
    args.out.with_suffix(".json").write_text(json.dumps(summary, indent=1))
    for case, entry in summary["cases"].items():
        for length, row in entry["lengths"].items():
            print(f"{case} {length}: " + ", ".join(f"{k} {v}" for k, v in row.items() if k.startswith("ratio_")))
        print(f"{case} goal met: {entry['goal_met']}")

if __name__ == "__main__":
    main()
