"""Verify a JSONL of (statement, output) pairs with either Lean backend.

  python -m reward.cli verify in.jsonl --out out.jsonl --backend repl \
      --repl-command "lake exe repl" --workspace ~/mathlib-ws --num-repls 2
Input lines: {"formal_statement", "output", optional "name", "header", "finish_reason"} or
{"ground_truth": {...}, "output"}. Output lines: the input plus score/verdict/feedback/infra/
lean_time_s. Prints a progress bar and a verdict table.
"""
from __future__ import annotations

import argparse
import asyncio
import collections
import json
import sys

from lean_env import Verdict
from reward.lean import CONFIG_DEFAULTS, NONE_DEFAULT_TYPES, aclose_backends, verify_many


def _bool(text: str) -> bool:
    if text.lower() not in ("true", "false", "1", "0", "yes", "no"):
        raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")
    return text.lower() in ("true", "1", "yes")


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m reward.cli", description="Lean proof verification")
    sub = ap.add_subparsers(dest="command", required=True)
    v = sub.add_parser("verify", help="verify a JSONL file")
    v.add_argument("input")
    v.add_argument("--out", default=None, help="output JSONL (default: <input>.verdicts.jsonl)")
    for key, default in CONFIG_DEFAULTS.items():
        kind = type(default) if default is not None else NONE_DEFAULT_TYPES[key]
        v.add_argument("--" + key.replace("_", "-"), dest=key, type=_bool if kind is bool else kind, default=None,
                       help=f"(default: {default})")
    return ap


async def _main(args: argparse.Namespace) -> int:
    config = {k: getattr(args, k) for k in CONFIG_DEFAULTS if getattr(args, k) is not None}
    with open(args.input) as f:
        items = [json.loads(line) for line in f if line.strip()]
    try:
        results = await verify_many(items, **config)
    finally:
        await aclose_backends()
    out_path = args.out or args.input.rsplit(".jsonl", 1)[0] + ".verdicts.jsonl"
    with open(out_path, "w") as f:
        for item, res in zip(items, results):
            f.write(json.dumps({**item, **res}, ensure_ascii=False) + "\n")
    counts = collections.Counter(r["verdict"] for r in results)
    print(f"\n{'verdict':<20}{'count':>7}{'share':>8}")
    for v in Verdict:
        if counts[v.value]:
            print(f"{v.value:<20}{counts[v.value]:>7}{counts[v.value] / len(results):>8.1%}")
    masked = sum(r["infra"] for r in results)
    print(f"{'total':<20}{len(results):>7}   ({int(masked)} masked as infra)  -> {out_path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    return asyncio.run(_main(_parser().parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
