"""Throughput and verdict loss of the Kimina client against the faithful Kimina double (not a test; run by hand).

  python bench/lean/kimina_bench.py [--repls 2,4,8] [--in-flight 64,256] [--crash 0.01,0.05] [--time-scale 0.002]
Each cell submits `in_flight` proofs at once as single-proof `run` calls (as the reward function does) to a
double with `repls` REPLs; a share `crash` of the proofs crashes its REPL (the server then answers 500 for the
whole request), 40 % have a Lean error, the rest are valid. Simulated Lean costs: 10 s header import per fresh
REPL, body 0.5-5 s (mean 2.75 s), per-proof limit 60 s, the server's MAX_WAIT 60 s. Two client settings:
`sized` (server_repls = repls, the documented setting) and `oversized` (server_repls = 64, the old default of
64 snippets in flight: snippets queue on the server and may hit 429).
Reports per cell: proofs per simulated second, infra share (goal: = crash share), correct proofs lost (goal: 0:
a valid or erroneous proof that did not get its verdict), HTTP requests and 429/500 answers.
Writes bench/lean/results/kimina_bench.json with the command line.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import sys
import time

from tqdm import tqdm

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from lean_env import Outcome, Snippet  # noqa: E402
from lean_env.backends.kimina import KiminaBackend  # noqa: E402
from lean_env.testing.fake_kimina import FakeKimina  # noqa: E402
from lean_env.testing.semantics import load_rules  # noqa: E402

HEADER = "import Mathlib\nimport Aesop\n"
RULES = load_rules([{"match": "CRASH", "outcome": "crash"}]
                   + [{"match": f"BAD{k}\\b", "outcome": "error", "message": "linarith failed", "delay_s": k * 0.5}
                      for k in range(10)]
                   + [{"match": f"OK{k}\\b", "outcome": "valid", "delay_s": k * 0.5} for k in range(10)])


def workload(n: int, crash: float, rng: random.Random) -> list[tuple[Snippet, str]]:
    """n proofs with their expected verdict: valid | error | infra (crash)."""
    out = []
    n_crash = round(n * crash)
    kinds = ["infra"] * n_crash + ["error" if rng.random() < 0.4 else "valid" for _ in range(n - n_crash)]
    rng.shuffle(kinds)
    for i, kind in enumerate(kinds):
        tactic = "CRASH" if kind == "infra" else f"{'BAD' if kind == 'error' else 'OK'}{rng.randrange(10)}"
        out.append((Snippet(str(i), HEADER, f"theorem t{i} : True := by\n  {tactic}\n\n#print axioms t{i}\n"), kind))
    return out


def got(r) -> str:
    if r.outcome is not Outcome.OK:
        return "infra" if r.outcome is Outcome.INFRA else "timeout"
    return "error" if any(m.severity == "error" for m in r.messages) else "valid"


async def cell(repls: int, in_flight: int, crash: float, server_repls: int, scale: float, seed: int) -> dict:
    server = FakeKimina(rules=RULES, max_repls=repls, import_s=10.0, proof_s=0.5, time_scale=scale)
    backend = KiminaBackend("http://kimina", transport=server.transport(), server_repls=server_repls,
                            backoff_s=1.0 * scale, max_backoff_s=10.0 * scale)
    work = workload(in_flight, crash, random.Random(seed))
    t0 = time.perf_counter()
    try:
        results = await asyncio.gather(*(backend.run([s], timeout_s=60) for s, _ in work))
    finally:
        await backend.aclose()
    wall = time.perf_counter() - t0
    kinds = [got(r) for (r,) in results]
    lost = sum(1 for (_, want), have in zip(work, kinds) if want != "infra" and have != want)
    return {"repls": repls, "in_flight": in_flight, "crash_share": crash, "server_repls": server_repls,
            "proofs_per_sim_s": round(in_flight / (wall / scale), 3), "sim_s": round(wall / scale, 1),
            "infra_share": round(kinds.count("infra") / in_flight, 4),
            "expected_infra_share": round(sum(w == "infra" for _, w in work) / in_flight, 4),
            "correct_lost": lost, "requests": backend.requests_sent,
            "http_429": server.statuses.count(429), "http_500": server.statuses.count(500),
            "repls_started": server.pool.started_repls}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repls", default="2,4,8")
    p.add_argument("--in-flight", default="64,256")
    p.add_argument("--crash", default="0.01,0.05")
    p.add_argument("--time-scale", type=float, default=0.002, help="real seconds per simulated second")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=os.path.join(ROOT, "bench", "lean", "results", "kimina_bench.json"))
    args = p.parse_args()
    grid = [(r, n, c, sr) for r in map(int, args.repls.split(",")) for n in map(int, args.in_flight.split(","))
            for c in map(float, args.crash.split(",")) for sr in (r, 64)]
    rows = []
    for repls, n, crash, server_repls in tqdm(grid, desc="kimina bench"):
        rows.append(asyncio.run(cell(repls, n, crash, server_repls, args.time_scale, args.seed)))
        tqdm.write(json.dumps(rows[-1]))
    summary = {}
    for label, cells in (("sized", [r for r in rows if r["server_repls"] == r["repls"]]),
                         ("oversized", [r for r in rows if r["server_repls"] != r["repls"]])):
        summary[label] = {"correct_lost": sum(r["correct_lost"] for r in cells),
                          "cells_with_infra_share_equal_to_crash_share":
                              f"{sum(r['infra_share'] == r['expected_infra_share'] for r in cells)}/{len(cells)}",
                          "http_429": sum(r["http_429"] for r in cells),
                          "proofs_per_sim_s_range": [min(r["proofs_per_sim_s"] for r in cells),
                                                     max(r["proofs_per_sim_s"] for r in cells)]}
    out = {"command": " ".join(["python", *sys.argv]),
           "args": vars(args) | {"out": os.path.relpath(args.out, ROOT)}, "platform": platform.platform(),
           "summary": summary, "cells": rows}
    with open(args.out, "w") as f:
        json.dump(out, f, indent=2)
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
