"""What the discovery launcher checks before their first training run, and what they say when a run fails.

`preflight(command)` runs the start-up checks of a `python -m verl.trainer.main_ppo <overrides>` command in a
subprocess (`python -m sdpo_ext.startup.check <overrides>`: sdpo_eval does not import the plugin), so a machine that
cannot train stops the whole sweep with one message instead of starting every run in turn. `failure_line` names a
failed run's first error line from its log, not only the log's path.
"""
from __future__ import annotations

import re
import subprocess
from collections.abc import Sequence
from pathlib import Path

TRAINER_MODULE = "verl.trainer.main_ppo"
CHECK_MODULE = "sdpo_ext.startup.check"
PREFLIGHT_TIMEOUT_S = 300.0   # composing verl's config and the checks take seconds; this bounds a hung model lookup
# a Python exception line (`ValueError: ...`, `ray.exceptions.RayTaskError(ValueError): ...`) or a CLI's `error: ...`
ERROR_LINE = re.compile(r"^\s*(?:[A-Za-z_][\w.]*(?:Error|Exception|Exit)(?:\([\w.]+\))?|error): \S")
REFUSED = "sdpo-lean found "   # the start-up checks' message (sdpo_ext.startup.checks.problems_message)


def preflight(command: Sequence[str]) -> str | None:
    """The start-up checks' message for the trainer `command`, or None when it would start."""
    overrides = list(command[list(command).index(TRAINER_MODULE) + 1:])
    try:
        proc = subprocess.run([command[0], "-m", CHECK_MODULE, *overrides], capture_output=True, text=True,
                              timeout=PREFLIGHT_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return f"the start-up checks gave no answer within {PREFLIGHT_TIMEOUT_S:g} s (start one run by hand to see why)"
    if proc.returncode == 0:
        return None
    lines = proc.stderr.strip().splitlines()   # verl's import-time warnings come first
    start = next((i for i, line in enumerate(lines) if line.startswith((REFUSED, "error: "))), None)
    if start is None:
        return "\n".join(lines[-20:]) or f"the start-up checks exited {proc.returncode}"
    if lines[start].startswith(REFUSED):   # the problems; their closing `error:` line is the launcher's own to write
        return "\n".join(line for line in lines[start:] if not line.startswith("error: "))
    return "\n".join(lines[start:]).removeprefix("error: ")


def first_error_line(log: Path) -> str | None:
    """The first line of `log` that states an error (with the first problem under a refused start), else its last
    non-blank line; None when the log is missing or empty."""
    try:
        lines = [line.rstrip() for line in log.read_text(encoding="utf-8", errors="replace").splitlines()]
    except OSError:
        return None
    for i, line in enumerate(lines):
        if line.startswith(REFUSED) and i + 1 < len(lines):
            return f"{line} {lines[i + 1].strip()}"
        if ERROR_LINE.match(line):
            return line.strip()
    return next((line.strip() for line in reversed(lines) if line.strip()), None)


def failure_line(what: str, returncode: int, run_dir: Path) -> str:
    """`warning: <what> exited <rc>: <first error line>; see <run_dir>/stdout.log`."""
    log = run_dir / "stdout.log"
    error = first_error_line(log)
    return f"warning: {what} exited {returncode}" + (f": {error[:500]}" if error else "") + f"; see {log}"


def stop_on_preflight(command: Sequence[str]) -> None:
    """Raise ValueError with the start-up checks' message, ending in its one `error:` line, when `command` would be
    refused (nothing started)."""
    message = preflight(command)
    if message:
        raise ValueError(f"{message}\nerror: no run started (the same start-up checks refuse every run of this sweep: "
                         "fix what they name)")

