"""Re-check stored rewarded proofs offline with a kernel-replay tool (comparator, lean4checker or SafeVerify).

    python -m sdpo_eval.recheck --log runs/sdpo/attempts.jsonl --data ~/data/sdpo_lean/minif2f_test.parquet \\
        --recheck-project ~/recheck-ws --recheck-tool comparator --out recheck.jsonl
    python -m sdpo_eval.recheck --log passk.verdicts.jsonl --recheck-project ~/recheck-ws --recheck-tool lean4checker

Inputs (`--log`, repeatable, JSONL, and every attempts.jsonl under `--run-dir`): attempt logs (`sdpo_attempts.log`:
`problem`, `verdict`, `score`, `infra`, `proof`), whose problems are looked up by id in `--data` (prepared parquet:
`extra_info.name`, `reward_model.ground_truth`), or `reward.lean.cli verify` outputs (rows carrying `formal_statement`
or `ground_truth`, `output`, `verdict`). A row is rewarded when its verdict is `valid` (or, without a verdict, its score
is 1) and it is not infra. Every rewarded row, and every line that cannot be read, gets one result: confirmed, rejected
or infra (see `lean_env.recheck`). Prints a progress bar and a summary table, writes one JSON line per result to
`--out`, and exits 0 only when every rewarded proof is confirmed (1 otherwise, 2 for a usage error).
The tool settings are the `--recheck-*` flags, built from `lean_env.options.RecheckOptions` (their one home, shared
with the strict mode and the reports; `--recheck-project` is required here); the files a job writes stay in the
project for inspection.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lean_env.options import RecheckOptions
from lean_env.recheck import RecheckJob, RecheckResult, ToolSetup, preflight, recheck
from reward.lean.score import parse_ground_truth
from sdpo_attempts.valid import valid_record
from sdpo_options import cli_checks
from sdpo_options.flags import add_flags, from_flags

STATUSES = ("confirmed", "rejected", "infra")


def is_rewarded(row: Mapping[str, Any]) -> bool:
    """Whether the reward paid for this row: `sdpo_attempts.valid.valid_record`."""
    return valid_record(row)


def _job(key: str, row: Mapping[str, Any], problems: Mapping[str, Any]) -> RecheckJob:
    """The job for a rewarded row; ValueError says why the row cannot be re-checked."""
    output = next((row[k] for k in ("proof", "output", "solution_str") if isinstance(row.get(k), str)), None)
    if output is None:
        raise ValueError("the row stores no proof (`proof`, `output` or `solution_str`)")
    if row.get("ground_truth") is not None or row.get("formal_statement") is not None:
        return RecheckJob(key, parse_ground_truth(row.get("ground_truth") or dict(row)), output)
    problem = row.get("problem")
    if problem not in problems:
        raise ValueError(f"problem {problem!r} is not in --data (pass the parquet the run trained on)")
    return RecheckJob(key, parse_ground_truth(problems[problem]), output)


def read_rows(logs: list[Path], problems: Mapping[str, Any]) -> tuple[list[dict], list[RecheckJob], int]:
    """(one record per rewarded or unreadable line, the jobs to run, the number of rows not rewarded).
    A record whose job could not be built already carries its infra result."""
    records, jobs, skipped = [], [], 0
    for log in logs:
        with open(log, encoding="utf-8", errors="replace") as handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                source = f"{log}:{number}"
                key = "P" + hashlib.sha1(source.encode()).hexdigest()[:12]
                try:
                    row = json.loads(line)
                    if not isinstance(row, dict):
                        raise ValueError(f"the line holds a {type(row).__name__}, not a JSON object")
                except ValueError as e:
                    records.append({"source": source, "key": key, "problem": None, "status": "infra",
                                    "message": f"unreadable line: {e}", "elapsed_s": 0.0})
                    continue
                if not is_rewarded(row):
                    skipped += 1
                    continue
                record = {"source": source, "key": key, "problem": row.get("problem") or row.get("name")}
                try:
                    jobs.append(_job(key, row, problems))
                except ValueError as e:
                    record.update(status="infra", message=f"cannot re-check this row: {e}", elapsed_s=0.0)
                records.append(record)
    return records, jobs, skipped


def summary(records: list[dict], skipped: int) -> str:
    """The status table and the rows that are not confirmed."""
    counts = Counter(r["status"] for r in records)
    lines = [f"{'status':<12}{'count':>7}{'share':>8}"]
    for status in STATUSES:
        lines.append(f"{status:<12}{counts[status]:>7}{counts[status] / max(1, len(records)):>8.1%}")
    lines.append(f"{'total':<12}{len(records):>7}   ({skipped} rows not rewarded, not re-checked)")
    bad = [r for r in records if r["status"] != "confirmed"]
    for r in bad[:20]:
        lines.append(f"  {r['status']:<9} {r['source']} {r['problem']}: {r['message'][:300]}")
    if len(bad) > 20:
        lines.append(f"  … {len(bad) - 20} more in the output file")
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m sdpo_eval.recheck", description=__doc__.split("\n\n")[0])
    ap.add_argument("--log", type=Path, action="append", default=[], help="attempts.jsonl or verdicts JSONL")
    ap.add_argument("--run-dir", type=Path, default=None, help="also read every attempts.jsonl below this folder")
    ap.add_argument("--data", type=Path, action="append", default=[], help="prepared parquet with the problems")
    add_flags(ap, RecheckOptions, skip=("strict_recheck",))
    ap.add_argument("--out", type=Path, default=None, help="result JSONL (default: <first log>.recheck.jsonl)")
    return ap


def main(argv: list[str] | None = None) -> int:
    """The CLI (module docstring); returns the exit code."""
    args = _parser().parse_args(argv)
    logs = list(args.log) + (sorted(args.run_dir.expanduser().rglob("attempts.jsonl")) if args.run_dir else [])
    try:
        if not logs:
            raise ValueError("no input: pass --log FILE (repeatable) or --run-dir DIR holding attempts.jsonl files")
        options = from_flags(RecheckOptions, args, skip=("strict_recheck",))
        if not options.recheck_project:
            raise ValueError("pass --recheck-project DIR (a Lean project with Mathlib at the dataset's toolchain; "
                             "docs/lean.md, offline re-check)")
        cfg = ToolSetup.from_options(options, keep_files=True)
        preflight(cfg)
        missing = [str(path) for path in [*logs, *(args.data or [])] if not Path(path).expanduser().is_file()]
        if missing:
            raise ValueError(f"no such file: {', '.join(missing)} (--log: a run's attempts.jsonl; --data: the "
                             "prepared parquet)")
        unwritable = cli_checks.output_problem(args.out or logs[0].with_suffix(".recheck.jsonl"), "--out")
        if unwritable:
            raise ValueError(unwritable)
        problems = {}
        if args.data:
            from sdpo_eval.prover_eval import load_problems

            problems = {p["name"]: p["ground_truth"] for p in load_problems(args.data)}
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    records, jobs, skipped = read_rows(logs, problems)
    results: dict[str, RecheckResult] = {r.key: r for r in recheck(jobs, cfg, workers=options.recheck_workers)}
    for record in records:
        if "status" not in record:
            result = results[record["key"]]
            record.update(status=result.status, message=result.message, elapsed_s=round(result.elapsed_s, 3))
    out = args.out or logs[0].with_suffix(".recheck.jsonl")
    with open(out, "w") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    print("\n" + summary(records, skipped) + f"\n-> {out}")
    if not records:
        print("no rewarded proofs found in the logs")
    return 0 if all(r["status"] == "confirmed" for r in records) else 1


if __name__ == "__main__":
    sys.exit(main())
