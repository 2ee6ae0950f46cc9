"""Compile one Lean file to an .olean (`lake env lean --json -o`), keeping its messages for lean4checker and SafeVerify.

`lean --json` prints one JSON object per message (fileName, pos {line, column}, endPos, severity
information|warning|error, caption, data; Lean's `SerialMessage`), lines 1-based over the whole file, and exits 1
when it reported an error.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from lean_env.recheck.common import Status, ToolSetup, failed_to_run, run_tool
from lean_env.types import LeanMessage

_SEVERITY = {"information": "info", "warning": "warning", "error": "error"}


@dataclass(frozen=True)
class Compiled:
    """One offline `lean --json -o` compile: its messages, whether the .olean was written, the end of the output."""

    messages: tuple[LeanMessage, ...]   # lines relative to the snippet body (file line - header lines)
    olean_written: bool                 # exit 0 and the .olean exists
    tail: str                           # the end of lean's output, for messages

    def errors(self) -> list[LeanMessage]:
        """The error messages."""
        return [m for m in self.messages if m.severity == "error"]


def parse_lean_json(stdout: str, header_lines: int = 0) -> list[LeanMessage] | None:
    """Messages of `lean --json`, lines shifted by `header_lines`; None when no line is a message."""
    messages = []
    for line in stdout.splitlines():
        try:
            obj = json.loads(line)
            pos, end = obj["pos"], obj.get("endPos") or {}
            messages.append(LeanMessage(_SEVERITY[obj["severity"]], int(pos["line"]) - header_lines,
                                        int(pos["column"]), end.get("line") and int(end["line"]) - header_lines,
                                        end.get("column"), str(obj.get("data", ""))))
        except (ValueError, KeyError, TypeError, AttributeError):
            continue
    return messages or None


def compile_module(source: Path, olean: Path, root: Path, cfg: ToolSetup, header_lines: int = 0
                   ) -> Compiled | tuple[Status, str]:
    """Compile `source` (module name from its path under `root`) to `olean`; ("infra", why) when lean could not run,
    timed out, or printed no message at all while failing."""
    olean.unlink(missing_ok=True)
    run = run_tool(cfg.lake_env("lean", "--json", f"--root={root}", "-o", str(olean), str(source)), cwd=cfg.project,
                   timeout_s=cfg.timeout_s)
    failed = failed_to_run(run, "lean", cfg.timeout_s)
    if failed:
        return "infra", failed
    messages = parse_lean_json(run.stdout, header_lines) or []
    if run.returncode != 0 and not any(m.severity == "error" for m in messages):
        return "infra", f"lean exited {run.returncode} without an error message: {run.tail()}"
    return Compiled(tuple(messages), run.returncode == 0 and olean.exists(), run.tail())
