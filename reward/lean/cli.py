"""Verify a JSONL of (statement, output) pairs with either Lean backend.

  python -m reward.lean.cli verify in.jsonl --out out.jsonl --backend repl \
      --repl-command "lake exe repl" --workspace ~/mathlib-ws --num-repls 2
Input lines: {"formal_statement", "output", optional "name", "header", "finish_reason"} or
{"ground_truth": {...} or its JSON text, "output"}.
Contract: every input line (blank lines excepted) gets exactly one output line, in input order: the input object
plus `line` (its 1-based line number) and score/verdict/feedback/infra/lean_time_s. A row that cannot be checked
(not UTF-8 unless `--replace-bad-bytes`, not JSON, not an object, a missing or non-string field, a malformed ground
truth) is never sent to Lean: it gets verdict `bad_row`, infra 1 and an `error` saying what is wrong. Prints a
progress bar, a verdict table, and a banner when the backend is a test double instead of Lean.
Verdicts are written as they arrive, to `<out>.partial`, so a stop (Ctrl-C, SIGTERM) keeps them and ends with one line
giving the exact `--resume` command (exit 130). They replace the output
when every row got a final verdict, or when there was no earlier output; otherwise (the backend does not answer, rows
ended as infrastructure failures, a stop) an earlier output is left as it was, never truncated
(reward.lean.verdict_file).
`--resume` keeps the final verdicts of the earlier output and of a stopped run's partial file for unchanged rows and
checks the rest; it refuses (exit 2) an output of which no line is a row of this input: one written for another input.
Exit code: 0 every row was checked by Lean; 2 bad input (a missing file, a bad option, bad rows: fix them first); 3
the backend does not answer, or some rows ended as infrastructure failures (server down, crash, timeout: re-run
them).
"""
from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import sys
from typing import Any, Callable

import httpx

from lean_env import Verdict
from lean_env.backends.factory import aclose_backends, get_backend
from lean_env.backends.probe import backend_problems
from lean_env.options import OWNERS, BackendOptions
from reward.lean.score import parse_ground_truth, resolve_config, verify_many
from reward.lean.verdict_file import ForeignVerdicts, VerdictWriter, previous_verdicts
from sdpo_options import cli_checks
from sdpo_options.flags import ClosestNamesParser, add_flags, given_flags
from sdpo_options.stop import STOPPED_EXIT, resume_command, stop_signals

BAD_ROW = "bad_row"
REPLACE_FLAG = "--replace-bad-bytes"
EXIT_BAD_ROWS, EXIT_INFRA, EXIT_INTERRUPTED = 2, 3, STOPPED_EXIT
_TEST_DOUBLE_MODULE = "lean_env.testing"


def _parser() -> argparse.ArgumentParser:
    ap = ClosestNamesParser(prog="python -m reward.lean.cli", description="Lean proof verification")
    sub = ap.add_subparsers(dest="command", required=True)
    v = sub.add_parser("verify", help="verify a JSONL file", epilog="exit codes: 0 all rows checked, "
                       f"{EXIT_BAD_ROWS} bad input rows, {EXIT_INFRA} rows ended as infrastructure failures")
    v.add_argument("input")
    v.add_argument("--out", default=None, help="output JSONL (default: <input>.verdicts.jsonl)")
    v.add_argument("--resume", action="store_true",
                   help="keep the final verdicts already in --out for unchanged rows; check the rest (infra again)")
    v.add_argument(REPLACE_FLAG, action="store_true",
                   help="read bytes that are not UTF-8 as U+FFFD (default: such a row is a bad row, never checked)")
    add_flags(v, OWNERS, unset=True)   # one flag per Lean option; unset flags keep the option's default
    return ap


def row_problem(row: Any) -> str | None:
    """What makes a parsed input row uncheckable, or None when it can go to Lean."""
    if not isinstance(row, dict):
        return f"a row must be a JSON object, got {type(row).__name__}"
    output = row.get("output", row.get("solution_str"))
    if output is None:
        return "missing 'output' (the model's reply holding the proof)"
    if not isinstance(output, str):
        return f"'output' must be a string, got {type(output).__name__}"
    if row.get("finish_reason") is not None and not isinstance(row["finish_reason"], str):
        return f"'finish_reason' must be a string, got {type(row['finish_reason']).__name__}"
    if "ground_truth" not in row and "formal_statement" not in row:
        return "needs 'formal_statement' (or 'ground_truth' holding it)"
    try:
        parse_ground_truth(row.get("ground_truth", row))
    except ValueError as e:
        return str(e).replace("ground_truth needs", "needs").replace("ground_truth '", "'")
    return None


def _decode(data: bytes, replace: bool) -> tuple[str, str | None]:
    """A line's text and, unless `replace`, why it is not UTF-8 (its text then has U+FFFD where the bytes were)."""
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as e:
        if replace:
            return data.decode("utf-8", errors="replace"), None
        return data.decode("utf-8", errors="replace"), (
            f"not UTF-8 text (byte 0x{data[e.start]:02x} at byte {e.start + 1} of the line; re-encode the file as "
            f"UTF-8, or pass {REPLACE_FLAG} to read such bytes as U+FFFD)")


def read_rows(path: str, replace_bad_bytes: bool = False) -> list[tuple[int, Any, str | None]]:
    """(line number, parsed row or raw text, problem or None) for every non-blank line; a line that is not JSON is
    called a possibly truncated last line only when it is the last one and has no newline (a write cut short). A
    line that is not UTF-8 is a bad row (its text kept with U+FFFD), unless `replace_bad_bytes`: a replaced byte
    could otherwise turn a proof or a statement into another one silently."""
    with open(path, "rb") as f:
        lines = [(number, *_decode(data, replace_bad_bytes)) for number, data in enumerate(f, start=1)]
    lines = [(number, text, bad) for number, text, bad in lines if text.strip()]
    rows = []
    for number, text, bad in lines:
        if bad:
            rows.append((number, text.rstrip("\n")[:1000], bad))
            continue
        try:
            row = json.loads(text)
        except ValueError as e:
            cut = number == lines[-1][0] and not text.endswith("\n")
            rows.append((number, text.rstrip("\n")[:1000],
                         f"not valid JSON ({e})" + ("; a truncated last line?" if cut else "")))
            continue
        rows.append((number, row, row_problem(row)))
    return rows


def _bad_result(problem: str) -> dict[str, Any]:
    return {"score": 0.0, "verdict": BAD_ROW, "feedback": "", "infra": 1.0, "lean_time_s": 0.0, "error": problem}


def double_in_use(options: BackendOptions, backend: object) -> str | None:
    """The test double standing in for Lean, or None for a real backend."""
    if options.backend in ("repl", "repl-ray"):
        return options.repl_command if _TEST_DOUBLE_MODULE in options.repl_command else None
    # KiminaBackend keeps its transport private; a mock transport is never a real server.
    transport = getattr(backend, "_transport", None)
    return "lean_env.testing.fake_kimina (in process)" if isinstance(transport, httpx.MockTransport) else None


def _print_table(results: list[dict[str, Any]], out_path: str) -> None:
    counts = collections.Counter(r["verdict"] for r in results)
    print(f"\n{'verdict':<20}{'count':>7}{'share':>8}")
    for name in [v.value for v in Verdict] + [BAD_ROW]:
        if counts[name]:
            print(f"{name:<20}{counts[name]:>7}{counts[name] / len(results):>8.1%}")
    masked = sum(r["infra"] for r in results)
    print(f"{'total':<20}{len(results):>7}   ({int(masked)} masked: bad rows or infra)  -> {out_path}")


class BackendUnavailable(RuntimeError):
    """The Lean backend is not there (no server, no REPL program): nothing can be checked."""


async def _verify(rows: list[dict[str, Any]], config: dict[str, Any],
                  on_result: Callable[[int, dict[str, Any]], None]) -> str | None:
    """Verify `rows` (on_result(index, result) as each completes); the test double in use or None.
    BackendUnavailable before any row is sent when the backend does not answer (lean_env.backends.probe), rather than
    after every row's retries."""
    cfg = resolve_config(**config)
    backend = get_backend(cfg.backend_options)
    problems = await backend_problems(cfg.backend_options, backend)
    if problems:
        await aclose_backends()
        raise BackendUnavailable("; ".join(problems))
    double = double_in_use(cfg.backend_options, backend)
    if double:
        print(f"*** TEST DOUBLE, NOT LEAN: verdicts come from {double}'s rules ***", file=sys.stderr)
    try:
        await verify_many(rows, on_result=on_result, **config)
        return double
    finally:
        await aclose_backends()


def _save(writer: VerdictWriter, complete: bool) -> tuple[list[dict[str, Any]], str]:
    """The run's verdicts and where they now are: they replace the output when every row got a final verdict, or
    when there was no earlier output; else the earlier output stays as it was and they wait in the partial file."""
    earlier = os.path.isfile(writer.path) and os.path.getsize(writer.path) > 0
    if complete or not earlier:
        return writer.finish(), writer.path
    return writer.keep_aside(), f"{writer.partial} ({writer.path}, from an earlier run, is unchanged)"


def verify_file(args: argparse.Namespace, argv: list[str]) -> int:
    """Verify `args.input` into `args.out` (`argv`: the command line, for the `--resume` command a stop names); the
    exit code of the module docstring."""
    config = given_flags(OWNERS, args)
    try:
        resolve_config(**config)   # a bad option fails before anything runs
    except ValueError as e:
        print(f"error: {e} (python -m reward.lean.cli verify --help lists the options)", file=sys.stderr)
        return EXIT_BAD_ROWS
    if not os.path.isfile(args.input):
        print(f"error: {args.input}: no such file (a JSONL of {{\"formal_statement\", \"output\"}} rows)",
              file=sys.stderr)
        return EXIT_BAD_ROWS
    out_path = args.out or args.input.rsplit(".jsonl", 1)[0] + ".verdicts.jsonl"
    if cli_checks.report([cli_checks.output_problem(out_path, "--out")]):
        return EXIT_BAD_ROWS
    rows = read_rows(args.input, args.replace_bad_bytes)
    if not rows:
        print(f"{args.input}: no rows to verify (the file is empty)", file=sys.stderr)
        return EXIT_BAD_ROWS
    try:
        kept = previous_verdicts(out_path, rows, BAD_ROW) if args.resume else {}
    except ForeignVerdicts as e:
        print(f"error: {e} (to check every row anew into it, run the same command without --resume; to keep it, "
              "choose another --out)", file=sys.stderr)
        return EXIT_BAD_ROWS
    writer = VerdictWriter(out_path, rows)
    for number, result in kept.items():
        writer.add(number, result)
    for number, _, problem in rows:
        if problem and number not in kept:
            print(f"{args.input}:{number}: bad row: {problem}", file=sys.stderr)
            writer.add(number, _bad_result(problem))
    todo = [(number, row) for number, row, problem in rows if problem is None and number not in kept]
    if kept:
        print(f"--resume: {len(kept)} verdicts kept from {out_path}, {len(todo)} rows to check", file=sys.stderr)
    try:
        with stop_signals():
            double = asyncio.run(_verify([row for _, row in todo], config,
                                         lambda i, result: writer.add(todo[i][0], result))) if todo else None
    except BackendUnavailable as e:
        writer.discard()
        print(f"error: {e}", file=sys.stderr)
        return EXIT_INFRA
    except KeyboardInterrupt:
        results, where = _save(writer, complete=False)
        print(f"\ninterrupted: {len(results)} of {len(rows)} rows have verdicts in {where}; continue with: "
              f"{resume_command('reward.lean.cli', argv)}", file=sys.stderr)
        return EXIT_INTERRUPTED
    complete = len(writer.results) == len(rows) and not any(
        r["infra"] and r["verdict"] != BAD_ROW for r in writer.results.values())
    results, where = _save(writer, complete)
    _print_table(results, where)
    if double:
        print(f"(test double: {double})")
    if any(r["verdict"] == BAD_ROW for r in results):
        return EXIT_BAD_ROWS
    return EXIT_INFRA if any(r["infra"] for r in results) else 0


def main(argv: list[str] | None = None) -> int:
    """The CLI (module docstring); returns the exit code."""
    argv = sys.argv[1:] if argv is None else argv
    return verify_file(_parser().parse_args(argv), argv)


if __name__ == "__main__":
    sys.exit(main())
