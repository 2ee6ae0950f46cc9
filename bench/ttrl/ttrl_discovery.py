"""Helpers of bench/ttrl/run_ttrl_discovery.sh (issue 47: set-TTRL discovery against best-of-k and reprompt, one GPU).

    python bench/ttrl/ttrl_discovery.py candidates --task demo --data-dir /tmp/demo_data --count 96
    python bench/ttrl/ttrl_discovery.py select --log base/demo/best_of_k/seed0/attempts.jsonl --samples 64 \\
        --max-rate 0 --count 16 \\
        --out base/demo/base_rate.json                     # prints the chosen problems, comma-separated
    python bench/ttrl/ttrl_discovery.py command --task demo --method sdpo --seed 1 --problems a,b --budget 128 \\
        --run-dir DIR [-- overrides]                       # one set-TTRL run's command line, shell-quoted
    python bench/ttrl/ttrl_discovery.py relaunch --run-dir DIR   # before a run starts again: "resume" (verl resumes
        # its checkpoint and the attempt log's run id) or "fresh" (a first try's log moved aside, not counted twice)
    python bench/ttrl/ttrl_discovery.py report --run-dir DIR --budget 128 --base-rate F [--base-rate F] \\
        --call "..." --out bench/ttrl/results/ttrl_discovery    # .json (issue 32's schema) + .png + .md

Candidates: the hard end of the demo's addition task (largest operand sums of addition_train) and every toy Lean
theorem. Base rates come from the sampler (`sdpo_eval.discovery_sampler`, best_of_k with --keep-going: the recipe's
prompts, sampling settings and reward) with `--samples` attempts per problem; a problem is kept when its rate over
its first `--samples` judged attempts is at most `--max-rate`, lowest first. The report takes runs cut before their
budget as far as they got (`covered_k`).
"""
from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections import defaultdict
from pathlib import Path

TASKS = ("demo", "toy_lean")


def candidates(task: str, data_dir: Path, count: int) -> list[str]:
    """The `count` addition problems with the largest a + b (ties: larger max(a, b)), or every toy theorem."""
    if task == "toy_lean":
        from sdpo_data.toy_lean import THEOREMS

        return [name for name, _, _ in THEOREMS]
    import pandas as pd

    rows = pd.read_parquet(data_dir / "addition_train.parquet")["extra_info"]
    ranked = sorted(rows, key=lambda e: (-(e["operands"][0] + e["operands"][1]), -max(e["operands"]), e["name"]))
    return [e["name"] for e in ranked[:count]]


def base_rates(records: list[dict], samples: int) -> dict[str, dict]:
    """{problem: {valid, judged, rate}} over each problem's first `samples` judged attempts (INFRA excluded)."""
    counts: dict[str, dict] = defaultdict(lambda: {"valid": 0, "judged": 0})
    for rec in records:
        if rec.get("infra") or not 1 <= rec["attempt"] <= samples:
            continue
        counts[rec["problem"]]["judged"] += 1
        counts[rec["problem"]]["valid"] += rec.get("score", 0.0) >= 1.0
    return {p: {**c, "rate": c["valid"] / c["judged"]} for p, c in sorted(counts.items())}


def select(rates: dict[str, dict], samples: int, max_rate: float, count: int) -> list[str]:
    """Problems measured on all `samples` attempts with rate <= max_rate, rarest first, at most `count`."""
    measured = [p for p, r in rates.items() if r["judged"] >= samples and r["rate"] <= max_rate]
    return sorted(measured, key=lambda p: (rates[p]["rate"], p))[:count]


def read_log(paths) -> list[dict]:
    """Every record of the logs; a last line cut mid-write (a run killed by the call's end) is left out."""
    records = []
    for path in paths:
        lines = [line for line in Path(path).read_text().splitlines() if line.strip()]
        for i, line in enumerate(lines):
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                if i != len(lines) - 1:
                    raise ValueError(f"error: {path}, line {i + 1}: not JSON (only a log's last line may be cut)")
    return records


def report(run_dir: Path, budget: int, base_rate_files: list[Path], call: str, out: Path, n_boot: int,
           coverage: Path | None = None) -> dict:
    from sdpo_eval.discovery_curves import discovery_report
    from sdpo_eval.discovery_summary import first_success_table, plot_report, summary

    logs = sorted(run_dir.rglob("attempts.jsonl"))
    full = discovery_report(read_log(logs), budget, n_boot=n_boot)
    result = summary(full, task="set-TTRL discovery: demo addition (hard end) + toy Lean, SmolLM2-135M-Instruct",
                     call=call)
    result["base_rate"] = {p: r for f in base_rate_files for p, r in json.loads(Path(f).read_text()).items()
                           if p in full["problems"]}
    result["left_out"] = full["left_out"]
    result["tasks"] = {task.name: sorted({r["problem"] for r in read_log(task.rglob("attempts.jsonl"))})
                       for task in sorted(run_dir.iterdir()) if task.is_dir()}
    result["runs"] = {str(s.parent.relative_to(run_dir)): json.loads(s.read_text()).get("returncode")
                      for s in sorted(run_dir.rglob("status.json"))}
    if coverage is not None:
        result["coverage"] = json.loads(coverage.read_text())["in"]
    out.parent.mkdir(parents=True, exist_ok=True)
    Path(f"{out}.json").write_text(json.dumps(result, indent=2))
    plot_report(full, Path(f"{out}.png"))
    Path(f"{out}.md").write_text(first_success_table(full))
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("candidates")
    c.add_argument("--task", choices=TASKS, required=True)
    c.add_argument("--data-dir", type=Path, required=True)
    c.add_argument("--count", type=int, default=48)
    s = sub.add_parser("select")
    s.add_argument("--log", type=Path, required=True)
    s.add_argument("--samples", type=int, default=64)
    s.add_argument("--max-rate", type=float, default=0.1)
    s.add_argument("--count", type=int, default=16)
    s.add_argument("--out", type=Path, required=True)
    m = sub.add_parser("command")
    m.add_argument("--task", choices=TASKS, required=True)
    m.add_argument("--method", required=True)
    m.add_argument("--seed", type=int, required=True)
    m.add_argument("--problems", required=True)
    m.add_argument("--budget", type=int, required=True)
    m.add_argument("--run-dir", type=Path, required=True)
    m.add_argument("--keep-going", action="store_true", help="stop_on_success=false (base-rate runs)")
    m.add_argument("overrides", nargs="*")
    x = sub.add_parser("relaunch", help="before a run starts (again): resume from its checkpoint, or start fresh")
    x.add_argument("--run-dir", type=Path, required=True)
    r = sub.add_parser("report")
    r.add_argument("--run-dir", type=Path, required=True)
    r.add_argument("--budget", type=int, required=True)
    r.add_argument("--base-rate", type=Path, action="append", default=[])
    r.add_argument("--call", required=True)
    r.add_argument("--out", type=Path, required=True)
    r.add_argument("--n-boot", type=int, default=2000)
    r.add_argument("--coverage", type=Path, help="discovery_chunks.py merge's coverage.json: how far each run got")
    args = parser.parse_args(argv)
    if args.command == "candidates":
        print(",".join(candidates(args.task, args.data_dir, args.count)))
    elif args.command == "select":
        rates = base_rates(read_log([args.log]), args.samples)
        chosen = select(rates, args.samples, args.max_rate, args.count)
        args.out.write_text(json.dumps(rates, indent=2))
        print(",".join(chosen))
    elif args.command == "relaunch":
        from sdpo_eval.discovery_set import set_aside_unresumable_log

        print("resume" if set_aside_unresumable_log(args.run_dir) else "fresh")
    elif args.command == "command":
        from sdpo_eval.discovery_set import set_command

        problems = [p for p in args.problems.split(",") if p]
        argv_ = set_command(args.method, args.task, problems, args.budget, args.run_dir, args.seed, args.overrides,
                            stop_on_success=not args.keep_going, python="python3")
        print(shlex.join(argv_))
    else:
        result = report(args.run_dir, args.budget, args.base_rate, args.call, args.out, args.n_boot, args.coverage)
        for method, row in result["methods"].items():
            print(method, {k: round(v["value"], 3) for k, v in row["discovery_at"].items()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
