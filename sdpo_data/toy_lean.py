"""A toy Lean theorem set checked by the REPL test double, for TTRL runs without Lean (`+recipe=sdpo_toy_lean`).

    python -m sdpo_data.toy_lean --out-dir ~/data/sdpo_toy_lean
      -> toy_fewshot_valid.parquet, toy_fewshot_test.parquet (the recipes' row format, via sdpo_data.lean_rows)
         toy_rules.json (rules for `python -m lean_env.testing.fake_repl --rules ...`)

The theorems are closed arithmetic facts over ℕ. The double's rules stand in for Lean on them: a proof whose
tactic block uses none of the tactics that close such goals in real Lean (`CLOSING_TACTICS`) gets Lean's
"unsolved goals" error with the theorem's goal at the statement's line; any other proof that passes the
reward's screen (no sorry, no changed statement, no axioms, ...) is accepted. This is a simulation of Lean
for exercising the TTRL loop (stop-on-success, attempt log, discovery curves) end to end, not a prover
benchmark: real results need real Lean (docs/lean.md).
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from sdpo_data.lean_rows import DEEPSEEK_HEADER, LeanDataset, screen_records, verl_row
from sdpo_options import cli_checks

TOY = LeanDataset("toy", ("valid", "test"), "v4.9.0", "xinhjBrant/mathlib4@2f65ba7", DEEPSEEK_HEADER)
CLOSING_TACTICS = ("norm_num", "decide", "rfl", "simp", "omega", "linarith", "nlinarith", "ring", "ring_nf", "trivial")

# (name, goal, informal statement); split: the first half valid, the rest test
THEOREMS: tuple[tuple[str, str, str], ...] = (
    ("toy_add_7_5", "(7 : ℕ) + 5 = 12", "Show that 7 + 5 = 12."),
    ("toy_mul_6_7", "(6 : ℕ) * 7 = 42", "Show that 6 times 7 is 42."),
    ("toy_sub_20_8", "(20 : ℕ) - 8 = 12", "Show that 20 - 8 = 12."),
    ("toy_pow_2_5", "(2 : ℕ) ^ 5 = 32", "Show that 2 to the fifth power is 32."),
    ("toy_le_3_10", "(3 : ℕ) ≤ 10", "Show that 3 is at most 10."),
    ("toy_div_36_4", "(36 : ℕ) / 4 = 9", "Show that 36 divided by 4 is 9."),
    ("toy_mod_17_5", "(17 : ℕ) % 5 = 2", "Show that 17 leaves remainder 2 when divided by 5."),
    ("toy_lt_9_11", "(9 : ℕ) < 11", "Show that 9 is less than 11."),
)


def records() -> list[dict[str, str]]:
    """The theorems in the miniF2F record format that `sdpo_data.prepare` reads."""
    half = len(THEOREMS) // 2
    return [
        {"name": name, "formal_statement": f"theorem {name} : {goal} := by", "informal_prefix": f"/-- {text} -/",
         "split": "valid" if i < half else "test"}
        for i, (name, goal, text) in enumerate(THEOREMS)
    ]


def double_rules() -> list[dict]:
    """fake_repl rules: "unsolved goals" for a proof of a toy theorem that uses no closing tactic before the audit
    (the trusted lines after it, such as the statement check's `rfl`, are not the proof)."""
    closing = "|".join(CLOSING_TACTICS)
    return [
        {"match": rf"theorem {re.escape(name)} :[^\n]*:=\s*by(?:(?!\b(?:{closing})\b)[\s\S])*#print axioms",
         "outcome": "error", "message": f"unsolved goals\n⊢ {goal}"}
        for name, goal, _ in THEOREMS
    ]


def write(out_dir: Path, prompt_style: str = "fewshot") -> list[Path]:
    """Write the toy theorems' parquet files and the REPL double's rules under `out_dir`; returns their paths."""
    import pandas as pd

    out_dir.mkdir(parents=True, exist_ok=True)
    kept = screen_records(records(), TOY).kept
    if len(kept) != len(THEOREMS):
        raise AssertionError("a toy theorem failed the dataset screen")
    paths = []
    for split in TOY.splits:
        rows = [verl_row(p, i, TOY, prompt_style) for i, p in enumerate(q for q in kept if q.split == split)]
        path = out_dir / f"{TOY.name}_{prompt_style}_{split}.parquet"
        pd.DataFrame(rows).to_parquet(path, index=False)
        paths.append(path)
    rules = out_dir / "toy_rules.json"
    rules.write_text(json.dumps(double_rules(), indent=1, ensure_ascii=False))
    return paths + [rules]


def main(argv: list[str] | None = None) -> int:
    """The CLI (module docstring); exit 2 when --out-dir cannot be written."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out-dir", type=Path, default=Path("~/data/sdpo_toy_lean").expanduser(),
                        help="where the parquet files and the double's rules go (default: %(default)s)")
    parser.add_argument("--prompt-style", default="fewshot", help="fewshot (the toy recipes), kimina, goedel, qwen")
    args = parser.parse_args(argv)
    if cli_checks.report([cli_checks.output_problem(args.out_dir, "--out-dir", folder=True)]):
        return 2
    for path in write(args.out_dir.expanduser(), args.prompt_style):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
