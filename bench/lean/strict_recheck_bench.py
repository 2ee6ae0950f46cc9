"""Cost of the strict online mode (`strict_recheck: true`) per rewarded proof, measured against the doubles.

The fast path is the REPL double (`lean_env.testing.fake_repl`, `--proof-delay` seconds per proof) and the re-check
tools are the fake `lake`/`lean`/`comparator`/`lean4checker`/`safe_verify` of `lean_env.testing.fake_lean_tools`, so
what this measures is the strict mode's own cost: screening the output again, writing the Lean files, starting the
tool's processes (lake -> lean -> tool, each a Python process here) and cleaning up, serialised by
`recheck_workers`. A real tool adds its Lean time on top (see docs/lean.md, Anti-cheat 8, for the estimate).

  python bench/lean/strict_recheck_bench.py [--proofs 24] [--proof-delay 0.05] [--workers 1]
First each tool re-checks every fast-path-valid output alone (`recheck_one`, its `elapsed_s`: the cost per rewarded
proof without any noise from the fast path). Then each setting runs end to end twice: one proof at a time
(`max_concurrency 1`: the wall-time difference is the latency the re-check adds to a rewarded proof) and 8 at a
time (the re-checks overlap with other proofs' fast path: throughput). Wall times on a shared 2-core machine move by
tenths of a second between runs; the re-check-alone figures are the cost figure.
Prints one line per run and writes bench/lean/results/strict_recheck_bench.json.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import reward.lean.score as rl  # noqa: E402
from lean_env.backends import factory  # noqa: E402
from lean_env.recheck import RecheckJob, ToolSetup, recheck_one  # noqa: E402
from lean_env.testing.fake_lean_tools import install  # noqa: E402

STATEMENT = "theorem t1 (x : ℝ) (h : x = 2) : x + 1 = 3 := by\n"
GT = json.dumps({"name": "t1", "formal_statement": STATEMENT, "header": "import Mathlib\n\nopen Real\n"})
RULES = json.dumps([{"match": "nlinarith", "outcome": "error", "message": "linarith failed"}])


def outputs(n: int) -> list[str]:
    """Half valid, half failing on the fast path (those are never re-checked)."""
    proofs = ["subst h\n  norm_num" if k % 2 == 0 else "nlinarith [h]" for k in range(n)]
    return [f"<think>p</think>\n```lean4\n{STATEMENT}  {p}\n```" for p in proofs]


async def run(items: list[str], config: dict) -> tuple[float, list[dict]]:
    """`verify_many` (at most `max_concurrency` samples in flight), timed."""
    t0 = time.perf_counter()
    try:
        scores = await rl.verify_many([{"ground_truth": GT, "output": o} for o in items], progress=False, **config)
    finally:
        await factory.aclose_backends()
    return time.perf_counter() - t0, scores


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--proofs", type=int, default=24)
    ap.add_argument("--proof-delay", type=float, default=0.05, help="simulated Lean seconds per proof (fast path)")
    ap.add_argument("--workers", type=int, default=1, help="recheck_workers (comparator always 1)")
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "strict_recheck_bench.json")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        paths = install(Path(tmp) / "bin")
        os.environ["PATH"] = f"{Path(tmp) / 'bin'}{os.pathsep}{os.environ['PATH']}"
        project = Path(tmp) / "project"
        project.mkdir()
        (project / "lakefile.toml").write_text('name = "ws"\n[[lean_lib]]\nname = "SdpoRecheck"\n'
                                               'globs = ["SdpoRecheck.+"]\n')
        base = dict(backend="repl", num_repls=2, timeout_s=30.0,
                    repl_command=f"{sys.executable} -m lean_env.testing.fake_repl --rules '{RULES}' "
                                 f"--proof-delay {args.proof_delay}")
        settings = {"off": {}}
        for tool in ("safeverify", "lean4checker", "comparator"):
            settings[tool] = dict(strict_recheck=True, recheck_tool=tool, recheck_project=str(project),
                                  recheck_command=str(paths["safe_verify" if tool == "safeverify" else tool]),
                                  recheck_workers=1 if tool == "comparator" else args.workers)
        items = outputs(args.proofs)
        task = rl.parse_ground_truth(GT)
        per_proof = {}
        for tool in ("safeverify", "lean4checker", "comparator"):
            cfg = ToolSetup.from_options(rl.resolve_config(**settings[tool]).recheck, keep_files=False)
            times = [recheck_one(RecheckJob(f"Bench{k}", task, o), cfg).elapsed_s
                     for k, o in enumerate(items) if "norm_num" in o]
            per_proof[tool] = {"mean_s": round(statistics.mean(times), 3), "max_s": round(max(times), 3),
                               "median_s": round(statistics.median(times), 3), "n": len(times)}
            print(f"{tool:<13} re-check alone: mean {per_proof[tool]['mean_s']:.3f} s, "
                  f"median {per_proof[tool]['median_s']:.3f} s, max {per_proof[tool]['max_s']:.3f} s per proof")
        rows = {}
        for concurrency in (1, 8):
            for label, extra in settings.items():
                wall, scores = asyncio.run(run(items, {**base, **extra, "max_concurrency": concurrency}))
                verdicts = [s["verdict"] for s in scores]
                rows[f"{label}@{concurrency}"] = {"wall_s": round(wall, 3),
                                                  "rewarded": int(sum(s["score"] for s in scores)),
                                                  "verdicts": {v: verdicts.count(v) for v in sorted(set(verdicts))}}
        for key, row in rows.items():
            off = rows["off@" + key.split("@")[1]]["wall_s"]
            row["extra_s_per_rewarded_proof"] = round((row["wall_s"] - off) / max(1, row["rewarded"]), 3)
            print(f"{key:<16} wall {row['wall_s']:7.2f} s  rewarded {row['rewarded']:3d}  "
                  f"extra per rewarded proof {row['extra_s_per_rewarded_proof']:6.3f} s  {row['verdicts']}")
    strict = {k.split("@")[0]: r["extra_s_per_rewarded_proof"] for k, r in rows.items()
              if k.endswith("@1") and k != "off@1"}
    summary = {"command": "python bench/lean/strict_recheck_bench.py " + " ".join(sys.argv[1:]),
               "proofs": args.proofs, "proof_delay_s": args.proof_delay, "recheck_workers": args.workers,
               "cpus": os.cpu_count(), "recheck_alone_per_rewarded_proof": per_proof, "settings": rows,
               "latency_s_per_rewarded_proof": strict,
               "median_latency_s_per_rewarded_proof": statistics.median(strict.values())}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(summary, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
