"""Rows of the no-download demo's addition task (`+recipe=sdpo_demo`; graded by `reward.addition`).

    python -m sdpo_data.addition_rows --out-dir ~/data/sdpo_demo   # addition_{train,test}.parquet
"""
from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

from sdpo_options import cli_checks

PROMPT = "What is {a} plus {b}? Answer with just the number."


MAX_OPERAND = 30  # the demo's operands: 1..30


def addition_rows(n: int, seed: int, split: str, max_operand: int = MAX_OPERAND) -> list[dict]:
    """`n` verl rows of the addition task for `split`, drawn with `seed`, operands in 1..max_operand."""
    rng = random.Random(seed)
    rows = []
    for index in range(n):
        a, b = rng.randint(1, max_operand), rng.randint(1, max_operand)
        rows.append({
            "data_source": "sdpo_demo_addition",
            "prompt": [{"role": "user", "content": PROMPT.format(a=a, b=b)}],
            "ability": "arithmetic",
            "reward_model": {"style": "rule", "ground_truth": str(a + b)},
            "extra_info": {"name": f"add_{split}_{index}", "split": split, "index": index, "operands": [a, b]},
        })
    return rows


N_TRAIN, N_TEST = 1024, 128  # prompts per split; the test split is the demo's validation set


def write_data(out_dir: Path, n_train: int = N_TRAIN, n_test: int = N_TEST, seed: int = 0,
               max_operand: int = MAX_OPERAND) -> list[Path]:
    """Write `addition_train.parquet` and `addition_test.parquet` under `out_dir`; returns their paths."""
    import pandas as pd

    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for split, n, split_seed in (("train", n_train, seed), ("test", n_test, seed + 1)):
        path = out_dir / f"addition_{split}.parquet"
        pd.DataFrame(addition_rows(n, split_seed, split, max_operand)).to_parquet(path)
        paths.append(path)
    return paths


def main(argv: list[str] | None = None) -> int:
    """The CLI (module docstring); exit 2 when --out-dir cannot be written."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out-dir", type=Path, default=Path("~/data/sdpo_demo").expanduser(),
                        help="where the parquet files go (default: %(default)s)")
    parser.add_argument("--n-train", type=int, default=N_TRAIN, help="training prompts (default: %(default)s)")
    parser.add_argument("--n-test", type=int, default=N_TEST, help="held-out prompts (default: %(default)s)")
    parser.add_argument("--max-operand", type=int, default=MAX_OPERAND,
                        help="operands are drawn from 1..this (default: %(default)s; larger: a harder task, e.g. for "
                             "discovery on problems sampling alone does not solve)")
    args = parser.parse_args(argv)
    if args.max_operand < 1:
        print(f"error: --max-operand must be >= 1, got {args.max_operand}", file=sys.stderr)
        return 2
    if cli_checks.report([cli_checks.output_problem(args.out_dir, "--out-dir", folder=True)]):
        return 2
    for path in write_data(args.out_dir, args.n_train, args.n_test, max_operand=args.max_operand):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
