"""Timing of the Lean screen on 100k-line answers (not a test; run by hand). Goal: under 1 s each.

Blocks over lean_env.screen.MAX_CODE_CHARS (2 MB) are rejected unread; the last line times dense code just below 1 MB.

  python bench/lean/screen_bench.py
Prints seconds per input; tests/lean_env/test_lexer.py holds the same inputs under a generous bound.
"""
from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from lean_env import screen  # noqa: E402

STATEMENT = "theorem t1 (x : ℝ) (h : x = 2) : x + 1 = 3 := by\n"
BODIES = {
    "blank lines": "\n" * 100_000,
    "`  simp` lines": "  simp\n" * 100_000,
    "`  norm_num [h]` lines": "  norm_num [h]\n" * 100_000,
    "comment lines": "  -- a comment line\n" * 100_000,
    "nested comment openers": "/-" * 50_000 + "-/" * 50_000,
    "`set_option … in` chain": "set_option maxRecDepth 100 in\n" * 100_000,
    "dense `nlinarith [...]` lines": "  nlinarith [sq_nonneg (a - b), sq_nonneg (a + b), mul_pos ha hb]\n" * 100_000,
    "dense lines, just under 1 MB": "  nlinarith [sq_nonneg (a - b), sq_nonneg (a + b), mul_pos ha hb]\n" * 15_000,
}

if __name__ == "__main__":
    for label, body in BODIES.items():
        out = f"```lean4\n{STATEMENT}{body}\n  norm_num\n```"
        t0 = time.perf_counter()
        r = screen(STATEMENT, out)
        print(f"{label:<32} {len(out) / 1e6:6.2f} MB  {time.perf_counter() - t0:6.2f} s  ok={r.ok}")
