"""Write verl parquet files for Lean proving (miniF2F, ProofNet) and MATH.

    python -m sdpo_data.prepare lean --dataset minif2f --input /path/minif2f.jsonl --prompt-style kimina \\
        --out-dir ~/data/sdpo_lean                     # minif2f_kimina_valid.parquet, minif2f_kimina_test.parquet
    python -m sdpo_data.prepare lean ... --theorem mathd_algebra_10   # one row: minif2f_kimina_mathd_algebra_10.parquet
    python -m sdpo_data.prepare math --subjects algebra,number_theory --out-dir ~/data/sdpo_math  # math_test.parquet

`--input` is a local .jsonl/.json/.parquet file or a Hugging Face dataset id. A summary (rows per
split, exclusions and reasons) is printed and also returned by the functions.
Contract: a run that keeps 0 rows is an error naming the filter that removed them (nothing is written); a split
that now has no rows has its file from an earlier run removed and named in the summary, so the recipes never
read stale rows; an input that cannot be read fails with `--input` and the dataset card (datasets/<name>.md).
"""
from __future__ import annotations

import argparse
import difflib
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from sdpo_data.lean_rows import LEAN_DATASETS, screen_records, verl_row
from sdpo_data.prompts import PROMPT_STYLES
from sdpo_data.sources import InputError, dataset_card, read_input
from sdpo_data.statement_defects import statement_defect
from sdpo_options import cli_checks
from sdpo_options.flags import ClosestNamesParser


def _earlier(out_dir: Path, pattern: str) -> str:
    """Names the files an earlier run left in `out_dir` (kept as they were), for an error message."""
    found = sorted(str(p) for p in out_dir.glob(pattern))
    return f" (files from an earlier run, untouched: {', '.join(found)})" if found else ""


def _remove_stale(path: Path, summary: dict[str, Any]) -> None:
    if path.exists():
        path.unlink()
        summary["removed_stale"].append(str(path))


def _write(rows: list[dict[str, Any]], path: Path) -> None:
    import pandas as pd

    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_parquet(path, index=False)


def prepare_lean(dataset: str, source: str, prompt_style: str, out_dir: Path, theorem: str | None = None,
                 lean_version: str | None = None, hf_config: str | None = None) -> dict[str, Any]:
    """Screen `source`, write one parquet per split (or one single-row file for `theorem`); return the summary."""
    if dataset not in LEAN_DATASETS:
        raise ValueError(f"unknown Lean dataset {dataset!r}; known: {sorted(LEAN_DATASETS)}")
    if prompt_style not in PROMPT_STYLES:
        raise ValueError(f"unknown prompt style {prompt_style!r}; known: {sorted(PROMPT_STYLES)}")
    spec = LEAN_DATASETS[dataset]
    records = read_input(source, dataset, hf_config=hf_config)
    report = screen_records(records, spec)
    if not report.kept:
        reasons = ", ".join(f"{reason} x{n}" for reason, n in report.reasons().most_common()) or "the input is empty"
        example = f"; e.g. record #{report.excluded[0][0]}: {report.excluded[0][2]}" if report.excluded else ""
        raise InputError(f"--input {source}: 0 of {len(records)} records pass the {dataset} screen ({reasons}"
                         f"{example}); nothing written{_earlier(out_dir, f'{dataset}_{prompt_style}_*.parquet')}. "
                         f"The fields a record needs: {dataset_card(dataset)}")
    summary: dict[str, Any] = {
        "dataset": dataset, "input": source, "prompt_style": prompt_style, "records": len(records),
        "lean_version": lean_version or spec.lean_version,
        "kept": dict(Counter(p.split for p in report.kept)),
        "def_statements": sum(p.kind == "def" for p in report.kept),
        "renamed_clashes": sum(p.id != p.name for p in report.kept),
        "header_defaulted": sum(p.header_defaulted for p in report.kept),
        "statement_defects": [p.id for p in report.kept if statement_defect(dataset, p.name, p.formal_statement)],
        "excluded": [{"index": i, "name": n, "reason": r} for i, n, r in report.excluded],
        "excluded_by_reason": dict(report.reasons()), "files": {}, "removed_stale": [],
    }
    if theorem is not None:
        chosen = [p for p in report.kept if p.id == theorem]
        if not chosen:
            dropped = [r for _, n, r in report.excluded if n == theorem]
            if dropped:
                raise ValueError(f"theorem {theorem!r} is in {source} but was excluded: {dropped[0]}")
            close = difflib.get_close_matches(theorem, [p.id for p in report.kept], n=5, cutoff=0.5)
            raise ValueError(f"theorem {theorem!r} not found in {source} ({len(report.kept)} usable rows). "
                             f"Closest names: {close}")
        path = out_dir / f"{dataset}_{prompt_style}_{theorem}.parquet"
        _write([verl_row(chosen[0], 0, spec, prompt_style, lean_version)], path)
        summary["files"][chosen[0].split] = str(path)
        return summary
    for split in spec.splits:
        problems = [p for p in report.kept if p.split == split]
        path = out_dir / f"{dataset}_{prompt_style}_{split}.parquet"
        if not problems:
            _remove_stale(path, summary)
            continue
        _write([verl_row(p, i, spec, prompt_style, lean_version) for i, p in enumerate(problems)], path)
        summary["files"][split] = str(path)
    return summary


def prepare_math(subjects: tuple[str, ...], out_dir: Path, split: str = "test", input_path: str | None = None,
                 limit_per_subject: int | None = None) -> dict[str, Any]:
    """Write the MATH parquet of `split` for `subjects` under `out_dir`; returns the summary `print_summary`
    prints."""
    from sdpo_data.math_rows import load_math
    from sdpo_data.math_rows import verl_row as math_row

    problems, excluded = load_math(subjects, split, input_path, limit_per_subject)
    if not problems:
        source = f"--input {input_path}" if input_path else "the Hugging Face hub"
        limit = f" --limit-per-subject {limit_per_subject}" if limit_per_subject is not None else ""
        raise InputError(f"0 MATH problems from {source} pass the filters --subjects {','.join(subjects)} "
                         f"--split {split}{limit} ({len(excluded)} records excluded: "
                         f"{dict(Counter(r for _, r in excluded)) or 'none'}); nothing written"
                         f"{_earlier(out_dir, f'math_{split}.parquet')}. Record fields: {dataset_card('math')}")
    path = out_dir / f"math_{split}.parquet"
    _write([math_row(p, i, split) for i, p in enumerate(problems)], path)
    return {"dataset": "math", "split": split, "kept": dict(Counter(p.subject for p in problems)),
            "excluded": [{"index": i, "reason": r} for i, r in excluded], "files": {split: str(path)},
            "removed_stale": []}


def print_summary(summary: dict[str, Any]) -> None:
    """Print what a preparation kept and excluded, and why."""
    print(f"{summary['dataset']}: kept {sum(summary['kept'].values())} rows " +
          ", ".join(f"{k}={v}" for k, v in summary["kept"].items()))
    for key in ("def_statements", "renamed_clashes", "header_defaulted"):
        if summary.get(key):
            print(f"  {key.replace('_', ' ')}: {summary[key]}")
    if summary.get("statement_defects"):   # kept, flagged in extra_info.statement_defect (datasets/<name>.md)
        print(f"  known-defective statements (flagged, kept): {', '.join(summary['statement_defects'])}")
    print(f"  excluded {len(summary['excluded'])} rows" + (":" if summary["excluded"] else ""))
    for row in summary["excluded"]:
        print(f"    #{row['index']} {row.get('name', '')}: {row['reason']}")
    for split, path in summary["files"].items():
        print(f"  wrote {split}: {path}")
    for path in summary["removed_stale"]:
        print(f"  removed {path}: left by an earlier run, and this input has no rows for its split")


def main(argv: list[str] | None = None) -> int:
    """The CLI (module docstring); returns the exit code."""
    parser = ClosestNamesParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    lean = sub.add_parser("lean", help="miniF2F / ProofNet -> verl parquet")
    lean.add_argument("--dataset", required=True, choices=sorted(LEAN_DATASETS),
                      help="which dataset card the input follows")
    lean.add_argument("--input", required=True, help="local .jsonl/.json/.parquet or HF dataset id")
    lean.add_argument("--hf-config", default=None, help="HF dataset config name, if the dataset has several")
    lean.add_argument("--prompt-style", required=True, choices=sorted(PROMPT_STYLES),
                      help="the model family's prompt (README: Main jobs)")
    lean.add_argument("--out-dir", type=Path, default=Path("~/data/sdpo_lean"),
                      help="where the parquet files go (default: %(default)s)")
    lean.add_argument("--theorem", default=None, help="write only this theorem (by name) for single-problem TTRL")
    lean.add_argument("--lean-version", default=None, help="override the card's Lean version (other dataset copies)")
    math = sub.add_parser("math", help="MATH (EleutherAI/hendrycks_math) -> verl parquet")
    math.add_argument("--subjects", default="all", help="comma-separated subjects or 'all'")
    math.add_argument("--split", default="test", help="MATH split (default: %(default)s)")
    math.add_argument("--input", default=None, help="local JSONL instead of the HF hub")
    math.add_argument("--limit-per-subject", type=int, default=None,
                      help="at most this many per subject (default: all)")
    math.add_argument("--out-dir", type=Path, default=Path("~/data/sdpo_math"),
                      help="where the parquet files go (default: %(default)s)")
    args = parser.parse_args(argv)
    if cli_checks.report([cli_checks.output_problem(args.out_dir, "--out-dir", folder=True)]):
        return 2
    try:
        if args.command == "lean":
            summary = prepare_lean(args.dataset, args.input, args.prompt_style, args.out_dir.expanduser(),
                                   args.theorem, args.lean_version, args.hf_config)
        else:
            from sdpo_data.math_rows import parse_subjects

            summary = prepare_math(parse_subjects(args.subjects), args.out_dir.expanduser(), args.split, args.input,
                                   args.limit_per_subject)
    except (ValueError, FileNotFoundError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print_summary(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
