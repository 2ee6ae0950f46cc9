"""Benchmark of the REPL pool against the REPL double (not a test; run by hand).

  python bench/lean/lean_backend_bench.py [--import-delay 5] [--proof-delay 0.2] [--n 32]
Figures: (1) header reuse vs a fresh process per proof, both from a cold start, n proofs;
(2) 1 vs 2 REPLs on warm pools, n proofs; (3) orchestration overhead per proof with a
zero-delay double: the pool alone, and the whole reward path (screen, assemble, judge).
Writes bench/lean/results/lean_backend_bench.json with the command line.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sys
import time

from tqdm import tqdm

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from lean_env import Snippet  # noqa: E402
from lean_env.backends.repl import ReplPool  # noqa: E402

FAKE = [sys.executable, "-m", "lean_env.testing.fake_repl"]
HEADER = "import Mathlib\nimport Aesop\n"


def snippets(n: int) -> list[Snippet]:
    return [Snippet(str(i), HEADER, f"theorem t{i} : True := by\n  trivial\n\n#print axioms t{i}\n") for i in range(n)]


async def timed_run(pool: ReplPool, snips: list[Snippet], desc: str) -> float:
    bar = tqdm(total=len(snips), desc=desc, leave=False)

    async def one(s):
        (r,) = await pool.run([s], timeout_s=120)
        assert r.outcome.value == "ok", r
        bar.update(1)

    t0 = time.perf_counter()
    await asyncio.gather(*(one(s) for s in snips))
    bar.close()
    return time.perf_counter() - t0


async def bench(args) -> dict:
    delays = ["--import-delay", str(args.import_delay), "--proof-delay", str(args.proof_delay)]
    out: dict = {}
    reuse = ReplPool([*FAKE, *delays], num_repls=1)
    out["reuse_cold_s"] = await timed_run(reuse, snippets(args.n), "header reuse")
    await reuse.aclose()
    fresh = ReplPool([*FAKE, *delays], num_repls=1, max_uses=1)
    out["fresh_per_proof_s"] = await timed_run(fresh, snippets(args.n), "fresh process per proof")
    await fresh.aclose()
    out["reuse_speedup"] = out["fresh_per_proof_s"] / out["reuse_cold_s"]

    for k in (1, 2):
        pool = ReplPool([*FAKE, *delays], num_repls=k)
        await pool.run(snippets(k), timeout_s=120)          # warm: every REPL has imported
        out[f"warm_{k}_repl_s"] = await timed_run(pool, snippets(args.n), f"{k} warm REPL(s)")
        await pool.aclose()
    out["two_repl_speedup_warm"] = out["warm_1_repl_s"] / out["warm_2_repl_s"]
    for k in (1, 2):
        pool = ReplPool([*FAKE, *delays], num_repls=k)
        out[f"cold_{k}_repl_s"] = await timed_run(pool, snippets(args.n), f"{k} cold REPL(s)")
        await pool.aclose()
    out["two_repl_speedup_cold"] = out["cold_1_repl_s"] / out["cold_2_repl_s"]

    zero = ReplPool(FAKE, num_repls=1)
    await zero.run(snippets(1), timeout_s=60)
    t = await timed_run(zero, snippets(args.overhead_n), "overhead (pool)")
    out["overhead_pool_ms_per_proof"] = 1000 * t / args.overhead_n
    await zero.aclose()

    import reward.lean.score as rl
    from lean_env.backends import factory

    stmt = "theorem t1 (x : ℝ) (h : x = 2) : x + 1 = 3 := by\n"
    output = ("<think>x</think>\n```lean4\nimport Mathlib\n\n"
              "theorem t1 (x : ℝ) (h : x = 2) : x + 1 = 3 := by\n  subst h\n  norm_num\n```")
    items = [{"formal_statement": stmt, "output": output}] * args.overhead_n
    cfg = dict(backend="repl", repl_command=" ".join(FAKE), num_repls=1, max_concurrency=1)
    await rl.verify_many(items[:1], progress=False, **cfg)
    t0 = time.perf_counter()
    res = await rl.verify_many(items, progress=False, **cfg)
    out["overhead_reward_ms_per_proof"] = 1000 * (time.perf_counter() - t0) / args.overhead_n
    assert all(r["verdict"] == "valid" for r in res)
    await factory.aclose_backends()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--import-delay", type=float, default=5.0)
    ap.add_argument("--proof-delay", type=float, default=0.2)
    ap.add_argument("--n", type=int, default=32)
    ap.add_argument("--overhead-n", type=int, default=500)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "lean", "results", "lean_backend_bench.json"))
    args = ap.parse_args()
    figures = asyncio.run(bench(args))
    goals = {"reuse_speedup": (">=", 10.0), "two_repl_speedup_warm": (">=", 1.8),
             "overhead_pool_ms_per_proof": ("<=", 2.0)}
    for key, value in figures.items():
        goal = goals.get(key)
        met = goal is not None and (value >= goal[1] if goal[0] == ">=" else value <= goal[1])
        mark = "" if goal is None else "  goal %s %g: %s" % (goal[0], goal[1], "met" if met else "MISSED")
        print(f"{key:<32}{value:10.3f}{mark}")
    record = {"command": " ".join([sys.executable, *sys.argv]), "args": vars(args), "figures": figures,
              "goals": {k: f"{op} {v}" for k, (op, v) in goals.items()},
              "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()}}
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(record, f, indent=2)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
