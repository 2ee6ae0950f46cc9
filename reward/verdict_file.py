"""The verdict file of `reward.cli verify`: written as verdicts arrive, so a stopped run keeps them, and read back by
`--resume`.

Contract: while the run lasts, each verdict is appended (and flushed) as one line `{**input row, "line": n, **result}`
in completion order; `finish()` rewrites the file in input order. On `--resume` a line of an earlier file is kept
when its input row is the one now at line `n` and its verdict is final: infrastructure failures (`infra` 1 and not a
bad row) are checked again, as the exit code 3 asks.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

Row = tuple[int, Any, "str | None"]  # (line number, parsed row or raw text, problem or None): reward.cli.read_rows


def _base(row: Any) -> dict[str, Any]:
    return row if isinstance(row, dict) else {"raw": row}


def previous_verdicts(path: str, rows: list[Row], bad_row: str) -> dict[int, dict[str, Any]]:
    """line number -> result, for the earlier verdicts of `path` that still hold for `rows` (module docstring)."""
    if not Path(path).is_file():
        return {}
    current = {number: _base(row) for number, row, _ in rows}
    kept = {}
    for text in Path(path).read_text(encoding="utf-8").splitlines():
        try:
            line = json.loads(text)
        except ValueError:
            continue   # a line cut by the stop
        base = current.get(line.get("line")) if isinstance(line, dict) else None
        if base is None or any(line.get(k) != v for k, v in base.items()):
            continue
        result = {k: v for k, v in line.items() if k not in base and k != "line"}
        if result.get("infra") and result.get("verdict") != bad_row:
            continue
        kept[line["line"]] = result
    return kept


class VerdictWriter:
    """Appends verdicts as they arrive; `finish()` puts them in input order and returns them."""

    def __init__(self, path: str, rows: list[Row]):
        self.path, self.rows = path, {number: row for number, row, _ in rows}
        self.results: dict[int, dict[str, Any]] = {}
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        self._handle = open(path, "w", encoding="utf-8")

    def add(self, number: int, result: dict[str, Any]) -> None:
        self.results[number] = result
        self._handle.write(json.dumps({**_base(self.rows[number]), "line": number, **result}, ensure_ascii=False)
                           + "\n")
        self._handle.flush()

    def finish(self) -> list[dict[str, Any]]:
        """The verdicts so far, in input order (also rewritten so to the file)."""
        self._handle.close()
        ordered = sorted(self.results)
        with open(self.path, "w", encoding="utf-8") as f:
            for number in ordered:
                f.write(json.dumps({**_base(self.rows[number]), "line": number, **self.results[number]},
                                   ensure_ascii=False) + "\n")
        return [self.results[number] for number in ordered]
