"""The problem switches of single-protocol runs, read from their stdout: what each reset to the initial state cost.

The trainer prints one line per switch, one JSON object after the prefix:

    sdpo_lean/ttrl_switch {"from": "<problem>", "to": "<problem or null>", "step": <int>, "reset_s": <float>}

(`to` null at the end of the queue). A line may carry a process prefix before the mark (Ray's `(TaskRunner pid=7)`).
"""
from __future__ import annotations

import json
import re
import statistics
from collections.abc import Iterable
from pathlib import Path
from typing import Any

SWITCH_MARK = "sdpo_lean/ttrl_switch"
SWITCH_LINE = re.compile(re.escape(SWITCH_MARK) + r" (\{.*\})\s*$")
ANSI = re.compile(r"\x1b\[[0-9;]*m")  # Ray colours the process prefix of a forwarded line
LOG_NAMES = ("stdout.log", "switch_lines.log")  # the run's stdout, or the lines of it a pack kept


def switches(text: str) -> list[dict[str, Any]]:
    """Every switch of a run's stdout `text`, in order; a line whose JSON does not parse (cut) is left out."""
    found = []
    for match in filter(None, (SWITCH_LINE.search(ANSI.sub("", line)) for line in text.splitlines())):
        try:
            found.append(json.loads(match.group(1)))
        except json.JSONDecodeError:
            continue
    return found


def run_switches(run_dir: Path) -> list[dict[str, Any]]:
    """The switches in a run folder's stdout.log (or the switch_lines.log a pack kept of it); [] without either."""
    log = next((run_dir / name for name in LOG_NAMES if (run_dir / name).exists()), None)
    return switches(log.read_text(errors="replace")) if log else []


def reset_summary(runs: Iterable[list[dict[str, Any]]]) -> dict[str, Any] | None:
    """{median, max, switches} of `reset_s` over every switch of the runs (s per problem); None without any."""
    resets = [float(s["reset_s"]) for run in runs for s in run if s.get("reset_s") is not None]
    if not resets:
        return None
    return {"median": round(statistics.median(resets), 3), "max": round(max(resets), 3), "switches": len(resets)}
