"""The merge of discovery runs brought back by several device calls, cut runs included (issue 47 part 2).

    python -m sdpo_eval.discovery merge --chunk-dir A [--chunk-dir B ...] --out-dir DIR
        # DIR/runs/.../<method>/seed<s>/ (what `report --run-dir DIR/runs` reads) and DIR/coverage.json

A chunk is what one call brought back (its discovery_raw.tar.gz, unpacked): runs/[<task>/]<method>/seed<s>/ with
attempts.jsonl and, once the process ended, status.json; problems[_<task>].txt names the problems. A run cut by
the call's or the machine's end still counts: every attempt it judged is in its log, and the report reads each
problem's runs only as far as they got (`sdpo_eval.discovery.curves.discovery_report`: unsolved runs are censored
past the attempts they made, and `covered_k` says up to which k every compared method is known).

The merge takes, for each run, the copy that got furthest (finished before cut; then the most judged attempts), and
records in coverage.json how far each got: {"in": {run: {chunk, finished, returncode, attempts: {problem: judged},
solved}}, "problems": {task: [...]}}. Chunks whose task problem lists disagree are refused: their runs are not the
same experiment.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from sdpo_attempts.log import read_records
from sdpo_attempts.valid import valid_record


def progress(run_dir: Path) -> dict:
    """How far one run got: {finished, returncode, attempts: {problem: judged attempts}, solved: [problems]}."""
    status = run_dir / "status.json"
    rc = json.loads(status.read_text()).get("returncode") if status.exists() else None
    attempts: dict[str, int] = {}
    solved: set[str] = set()
    log = run_dir / "attempts.jsonl"
    for rec in read_records(log) if log.exists() else []:   # a cut run's half-written last line is left out
        if rec.get("infra"):
            continue
        attempts[rec["problem"]] = max(attempts.get(rec["problem"], 0), int(rec["attempt"]))
        if valid_record(rec):
            solved.add(rec["problem"])
    return {"finished": rc == 0, "returncode": rc, "attempts": dict(sorted(attempts.items())),
            "solved": sorted(solved)}


def _problems(chunk_dir: Path) -> dict[str, list[str]]:
    return {f.stem.removeprefix("problems").lstrip("_") or "-": [p for p in f.read_text().strip().split(",") if p]
            for f in sorted(chunk_dir.glob("problems*.txt"))}


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
        for log in sorted(p for p in (chunk_dir / "runs").rglob("attempts.jsonl") if p.parent.name.startswith("seed")):
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
