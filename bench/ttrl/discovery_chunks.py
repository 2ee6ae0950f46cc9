"""The merge of set-TTRL discovery runs brought back by several device calls, cut runs included (issue 47 part 2).

    python bench/ttrl/discovery_chunks.py merge --chunk-dir A [--chunk-dir B ...] --out DIR
        # DIR/runs/<task>/<method>/seed<s>/ (what ttrl_discovery.py report reads) and DIR/coverage.json

A chunk is what one call brought back (its ttrl_discovery_raw.tar.gz, unpacked): runs/<task>/<method>/seed<s>/ with
attempts.jsonl and, once the process ended, status.json; problems_<task>.txt names the task's problems. A run cut by
the call's or the machine's end still counts: every attempt it judged is in its log, and the report reads each
problem's runs only as far as they got (`sdpo_eval.discovery_curves.discovery_report`: unsolved runs are censored
past the attempts they made, and `covered_k` says up to which k every compared method is known).

The merge takes, for each run, the copy that got furthest (finished before cut; then the most judged attempts), and
records in coverage.json how far each got: {"in": {run: {chunk, finished, returncode, attempts: {problem: judged},
solved}}, "problems": {task: [...]}}. Chunks whose task problem lists disagree are refused: their runs are not the
same experiment.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from ttrl_discovery import read_log  # the tolerant attempt-log reader of the job


def progress(run_dir: Path) -> dict:
    """How far one run got: {finished, returncode, attempts: {problem: judged attempts}, solved: [problems]}."""
    status = run_dir / "status.json"
    rc = json.loads(status.read_text()).get("returncode") if status.exists() else None
    attempts: dict[str, int] = {}
    solved: set[str] = set()
    log = run_dir / "attempts.jsonl"
    for rec in read_log([log] if log.exists() else []):   # a cut run's half-written last line is left out
        if rec.get("infra"):
            continue
        attempts[rec["problem"]] = max(attempts.get(rec["problem"], 0), int(rec["attempt"]))
        if rec.get("score", 0.0) >= 1.0:
            solved.add(rec["problem"])
    return {"finished": rc == 0, "returncode": rc, "attempts": dict(sorted(attempts.items())),
            "solved": sorted(solved)}


def _problems(chunk_dir: Path) -> dict[str, list[str]]:
    return {f.stem.removeprefix("problems_"): [p for p in f.read_text().strip().split(",") if p]
            for f in sorted(chunk_dir.glob("problems_*.txt"))}


def _rank(p: dict) -> tuple[bool, int]:
    return p["finished"], sum(p["attempts"].values())


def merge(chunk_dirs: list[Path], out: Path) -> dict:
    """Copy each run's furthest copy from `chunk_dirs` into out/runs and write out/coverage.json."""
    problems: dict[str, list[str]] = {}
    for chunk_dir in chunk_dirs:
        for task, names in _problems(chunk_dir).items():
            if problems.setdefault(task, names) != names:
                raise ValueError(f"error: {chunk_dir} has other {task} problems than an earlier chunk "
                                 "(merge chunks of one problem choice)")
    best: dict[str, tuple[Path, dict, str]] = {}
    for chunk_dir in chunk_dirs:
        for log in sorted((chunk_dir / "runs").glob("*/*/seed*/attempts.jsonl")):
            run = str(log.parent.relative_to(chunk_dir / "runs"))
            got = progress(log.parent)
            if run not in best or _rank(got) > _rank(best[run][1]):
                best[run] = (log.parent, got, chunk_dir.name)
    coverage = {"problems": problems, "in": {}}
    for run, (src, got, chunk) in sorted(best.items()):
        target = out / "runs" / run
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(src, target, ignore=shutil.ignore_patterns("checkpoints", "stdout.log"))
        coverage["in"][run] = {"chunk": chunk, **got}
    out.mkdir(parents=True, exist_ok=True)
    (out / "coverage.json").write_text(json.dumps(coverage, indent=1))
    return coverage


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    m = sub.add_parser("merge")
    m.add_argument("--chunk-dir", type=Path, action="append", required=True, help="an unpacked chunk; repeatable")
    m.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    try:
        coverage = merge(args.chunk_dir, args.out)
    except (ValueError, FileNotFoundError) as e:
        parser.exit(2, f"{e}\n" if str(e).startswith("error:") else f"error: {e}\n")
    cut = [run for run, row in coverage["in"].items() if not row["finished"]]
    print(f"{len(coverage['in'])} runs in ({len(cut)} cut: {', '.join(cut) or 'none'}): {args.out / 'coverage.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
