"""A stand-in for `lake exe repl`: the REPL's stdin/stdout framing and JSON shapes, scripted.

Run: python -m lean_env.testing.fake_repl [--import-delay S] [--proof-delay S] [--rules FILE|JSON]
                                           [--sorry-quote "'"|"`"] [--lean-version 4.9.0]
                                           [--spawn-child]
Rules may also come from $FAKE_REPL_RULES (a path or inline JSON); see semantics.py.
Framing as in REPL/Main.lean: a request ends at a whitespace-only line; from Lean v4.22 (repl 19d4146) its
lines are right-trimmed and joined without newlines, before that they keep their newlines (so a raw newline in
a JSON string is malformed JSON there); requests starting with `#` or `--` are skipped; EOF exits 0; malformed
JSON, a request of no form, and an empty request (a second blank line in a row) exit 1 with nothing on stdout.
Each answer is Lean's pretty JSON followed by a blank line. `--spawn-child` runs the loop in a child process,
like `lake env`.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

from lean_env.testing.leanjson import pretty
from lean_env.testing.semantics import FakeLean, load_rules, version_tuple

_HOARD: list[bytes] = []


def _requests(stream, trim: bool):
    """Requests as `getLines` builds them; an empty string is a lone blank line (the REPL fails to parse it)."""
    buf: list[str] = []
    for line in stream:
        if line.strip():
            buf.append(line.rstrip() if trim else line)
            continue
        yield "".join(buf)
        buf = []
    if buf:
        yield "".join(buf)


def serve(args: argparse.Namespace) -> int:
    """Answer the REPL's JSON requests from stdin on stdout until stdin closes; returns the exit code."""
    lean = FakeLean(rules=load_rules(args.rules or os.environ.get("FAKE_REPL_RULES")), sorry_quote=args.sorry_quote,
                    lean_version=args.lean_version)
    out = sys.stdout
    for text in _requests(sys.stdin, trim=version_tuple(args.lean_version) >= (4, 22)):
        if text.startswith("#") or text.startswith("--"):
            continue
        try:
            req = json.loads(text)   # strict: raw control characters in strings are malformed, as in Lean's parser
            resp, fx = lean.handle(req)
        except ValueError as e:
            print(f"uncaught exception: {e}", file=sys.stderr, flush=True)
            return 1
        is_header = isinstance(req, dict) and "env" not in req and str(req.get("cmd", "")).lstrip().startswith("import")
        time.sleep(args.import_delay if is_header else args.proof_delay + fx.delay_s)
        if fx.grow_mb:
            _HOARD.append(b"\x01" * (fx.grow_mb << 20))
        if fx.stderr_bytes:
            sys.stderr.write("w" * fx.stderr_bytes + "\n")
            sys.stderr.flush()
        if fx.action == "hang":
            while True:
                time.sleep(3600)
        if fx.action == "crash":
            out.write('{"env":')
            out.flush()
            os._exit(134)
        if fx.action == "garbage":
            out.write("Segmentation fault? no: this is not JSON\n\n")
            out.flush()
            continue
        if fx.action == "forge":
            clean = {**resp, "messages": [m for m in resp.get("messages", []) if m["severity"] != "error"]}
            out.write(pretty(clean) + "\n\n")
        out.write(pretty(resp) + "\n\n")
        out.flush()
    return 0


def main(argv: list[str] | None = None) -> int:
    """The CLI (module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--import-delay", type=float, default=0.0, help="seconds to 'import' a header")
    ap.add_argument("--proof-delay", type=float, default=0.0, help="seconds per non-import command")
    ap.add_argument("--rules", default=None, help="rules JSON file or inline JSON list")
    ap.add_argument("--sorry-quote", default=None, choices=["`", "'"],
                    help="default: ' before Lean v4.28, ` from v4.28 (follows --lean-version)")
    ap.add_argument("--lean-version", default="4.9.0", help="what `#eval Lean.versionString` answers")
    ap.add_argument("--spawn-child", action="store_true", help="serve from a child process (like `lake env`)")
    args = ap.parse_args(argv)
    if args.spawn_child:
        child_argv = [a for a in (argv if argv is not None else sys.argv[1:]) if a != "--spawn-child"]
        return subprocess.call([sys.executable, "-m", "lean_env.testing.fake_repl", *child_argv])
    return serve(args)


if __name__ == "__main__":
    sys.exit(main())
