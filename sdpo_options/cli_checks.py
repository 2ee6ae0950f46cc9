"""What a command-line tool checks before it loads a model or starts work: its outputs can be written and its inputs
exist. The Lean backend's check is `lean_env.cli_checks` (only the tools that check proofs need it).

Contract: each check returns its problem as `<what> (<fix>)` text, naming the flag; nothing is created, changed or
removed (writability is tried with a temporary file in the nearest existing folder, deleted at once). `report`
prints them as `error:` lines. One home for these checks, shared by every CLI (`reward.lean.cli`, `sdpo_data.*`,
`sdpo_eval.*`): on the ground floor (stdlib only), so a MATH or plotting command does not import the Lean package.
"""
from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path


def _nearest_existing(path: Path) -> Path:
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def output_problem(path: str | os.PathLike, flag: str, folder: bool = False) -> str | None:
    """Why `path` (a file, or with `folder` a folder that may not exist yet) cannot be written; None when it can."""
    target = Path(path).expanduser()
    if target.is_dir() and not folder:
        return f"{flag} {path} is a folder (give a file path inside it, e.g. {target / 'out.json'})"
    if target.exists() and folder and not target.is_dir():
        return f"{flag} {path} is a file, not a folder (give a folder path)"
    base = _nearest_existing(target if folder else target.parent)
    if not base.is_dir():
        return f"{flag} {path}: {base} is a file, so no folder can be made there (choose another path)"
    try:
        handle, probe = tempfile.mkstemp(dir=base, prefix=".write-check-")
        os.close(handle)
        os.unlink(probe)
    except OSError as e:
        return f"{flag} {path}: cannot write in {base} ({e.strerror or e}) (choose a folder you can write to)"
    if target.is_file() and not os.access(target, os.W_OK):
        return f"{flag} {path} is read-only (choose another path, or make it writable)"
    return None


def input_problem(path: str | os.PathLike, flag: str, fix: str) -> str | None:
    """Why the input file `path` cannot be read; `fix` says how to get or name the right one."""
    target = Path(path).expanduser()
    if not target.exists():
        return f"{flag} {path}: no such file ({fix})"
    if target.is_dir():
        return f"{flag} {path} is a folder, not a file ({fix})"
    if not os.access(target, os.R_OK):
        return f"{flag} {path} cannot be read (check its permissions)"
    return None


def report(problems: Iterable[str | None]) -> bool:
    """Print each problem as one `error:` line on stderr; whether there was any."""
    found = [p for p in problems if p]
    for problem in found:
        print(f"error: {problem}", file=sys.stderr)
    return bool(found)
