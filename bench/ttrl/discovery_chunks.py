"""Set-TTRL discovery cut into chunks of one device call each (issue 43 part 3), and their merge.

    python bench/ttrl/discovery_chunks.py plan --chunk 1            # the chunk's runs, one "task method seed" a line
    python bench/ttrl/discovery_chunks.py merge --chunk-dir A [--chunk-dir B ...] --out DIR
        # DIR/runs/<task>/<method>/seed<s>/ (what ttrl_discovery.py report reads) and DIR/coverage.json

A device call lasts at most 10 minutes and the machine can be gone before the next one, so the job is cut into
chunks that each need nothing from an earlier call (`run_ttrl_discovery.sh chunk`):
- chunk 0 measures the base rates and picks the problems (PROBLEMS_FILE, committed once it ran); every later chunk
  reads that committed list, so chunks from any call, session or machine run the same set with the same budget;
- chunk k >= 1 runs CHUNKS[k - 1] on every task: whole set-TTRL runs side by side, one per (task, method, seed).
  The first two chunks give best-of-k against GRPO and against the SDPO family on seed 1; later ones add seeds, then
  methods.

A chunk's folder (its ttrl_discovery_raw.tar.gz, unpacked) holds chunk.json ({chunk, budget, problems, call}) and
runs/<task>/<method>/seed<s>/{attempts.jsonl, status.json}. The merge takes a run when its status.json says
returncode 0 (a run cut by the call's end or failed is missing, with its returncode); a run finished in two chunks
keeps the first given. Chunks that disagree on the budget or a task's problems are refused: their runs are not the
same experiment.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

TASKS = ("demo", "toy_lean")
PROBLEMS_FILE = Path(__file__).with_name("problems.json")  # chunk 0's selection: {"budget", "problems": {task: [...]}}
CHUNKS: tuple[tuple[tuple[str, int], ...], ...] = (
    (("best_of_k", 1), ("grpo", 1)),
    (("sdpo_confident", 1), ("srpo", 1)),
    (("best_of_k", 2), ("grpo", 2)),
    (("sdpo_confident", 2), ("srpo", 2)),
    (("sdpo", 1), ("sc_sdpo", 1)),
    (("sdpo", 2), ("sc_sdpo", 2)),
)


def plan(chunk: int) -> list[tuple[str, str, int]]:
    """(task, method, seed) of every run of chunk `chunk` >= 1."""
    if not 1 <= chunk <= len(CHUNKS):
        raise ValueError(f"error: chunk {chunk} does not exist (chunks 1..{len(CHUNKS)}; chunk 0 is the base rates)")
    return [(task, method, seed) for method, seed in CHUNKS[chunk - 1] for task in TASKS]


def planned_runs() -> list[str]:
    """Every run of every chunk, as its path under runs/."""
    return [f"{task}/{method}/seed{seed}" for k in range(1, len(CHUNKS) + 1) for task, method, seed in plan(k)]


def _returncode(run_dir: Path) -> int | None:
    status = run_dir / "status.json"
    return json.loads(status.read_text()).get("returncode") if status.exists() else None


def merge(chunk_dirs: list[Path], out: Path) -> dict:
    """Copy each finished run of `chunk_dirs` (first one wins) into out/runs and write out/coverage.json."""
    headers = {d: json.loads((d / "chunk.json").read_text()) for d in chunk_dirs}
    experiments = {json.dumps([h["budget"], h["problems"]], sort_keys=True) for h in headers.values()}
    if len(experiments) > 1:
        raise ValueError("error: the chunks differ in budget or problems: "
                         + "; ".join(f"{d}: budget {h['budget']}, {sum(map(len, h['problems'].values()))} problems"
                                     for d, h in headers.items()) + " (merge chunks of one problems.json)")
    taken: dict[str, str] = {}
    missing: dict[str, str] = {}
    for chunk_dir, header in headers.items():
        for status in sorted((chunk_dir / "runs").glob("*/*/seed*/status.json")):
            run = str(status.parent.relative_to(chunk_dir / "runs"))
            rc = _returncode(status.parent)
            if run in taken:
                continue
            if rc != 0:
                missing[run] = f"returncode {rc} in chunk {header['chunk']} ({chunk_dir.name})"
                continue
            target = out / "runs" / run
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(status.parent, target)
            taken[run] = f"chunk {header['chunk']} ({chunk_dir.name}): {header.get('call', '')}"
            missing.pop(run, None)
    runs = sorted(set(planned_runs()) | set(taken))
    coverage = {
        "budget": next(iter(headers.values()))["budget"],
        "problems": next(iter(headers.values()))["problems"],
        "in": {run: taken[run] for run in runs if run in taken},
        "missing": {run: missing.get(run, "not run yet") for run in runs if run not in taken},
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "coverage.json").write_text(json.dumps(coverage, indent=1))
    return coverage


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("plan")
    p.add_argument("--chunk", type=int, required=True)
    m = sub.add_parser("merge")
    m.add_argument("--chunk-dir", type=Path, action="append", required=True, help="an unpacked chunk; repeatable")
    m.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    try:
        if args.command == "plan":
            print("\n".join(f"{task} {method} {seed}" for task, method, seed in plan(args.chunk)))
            return 0
        coverage = merge(args.chunk_dir, args.out)
    except (ValueError, FileNotFoundError) as e:
        parser.exit(2, f"{e}\n" if str(e).startswith("error:") else f"error: {e}\n")
    print(f"{len(coverage['in'])} runs in, {len(coverage['missing'])} missing: {args.out / 'coverage.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
