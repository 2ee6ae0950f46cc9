"""The verdict file of `reward.lean.cli verify`: written as verdicts arrive, so a stopped run keeps them, and read back
by `--resume`.

Contract: while the run lasts, each verdict is appended (and flushed) as one line `{**input row, "line": n, **result}`
in completion order to `<out>.partial` (`partial_path`), never to the output itself: an earlier output is replaced,
atomically, only by `finish()` (the verdicts in input order). `keep_aside()` leaves them, in input order, in the
partial file and the output as it was; `discard()` removes the partial file. So a run that fails (the backend does
not answer, a crash, a kill) never truncates or deletes earlier verdicts. On `--resume` a line of the earlier output,
or of the partial file a stopped run left (which wins), is kept when its input row is the one now at line `n` and its
verdict is final: infrastructure failures (`infra` 1 and not a bad row) are checked again, as the exit code 3 asks.
Earlier verdicts of which not one line matches its row of the current input belong to another input: `--resume`
refuses them (ForeignVerdicts) rather than rewriting the file with nothing kept.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

Row = tuple[int, Any, "str | None"]  # (line number, parsed row or raw text, problem or None): reward.lean.cli.read_rows


def _base(row: Any) -> dict[str, Any]:
    return row if isinstance(row, dict) else {"raw": row}


def partial_path(path: str) -> str:
    """Where a run's verdicts stream until `finish()` moves them to `path` (same folder: the move is atomic)."""
    return f"{path}.partial"


class ForeignVerdicts(ValueError):
    """`--resume` on a verdicts file written for another input: not one of its lines matches the current input."""


def previous_verdicts(path: str, rows: list[Row], bad_row: str) -> dict[int, dict[str, Any]]:
    """line number -> result, for the earlier verdicts of `path` and its partial file that still hold for `rows`
    (module docstring); ForeignVerdicts when there are earlier lines and none of them matches its row."""
    current = {number: _base(row) for number, row, _ in rows}
    kept, matched = {}, 0
    lines = [text for name in (path, partial_path(path)) if Path(name).is_file()
             for text in Path(name).read_text(encoding="utf-8").splitlines() if text.strip()]
    for text in lines:
        try:
            line = json.loads(text)
        except ValueError:
            continue   # a line cut by the stop
        base = current.get(line.get("line")) if isinstance(line, dict) else None
        if base is None or any(line.get(k) != v for k, v in base.items()):
            continue
        matched += 1
        result = {k: v for k, v in line.items() if k not in base and k != "line"}
        if result.get("infra") and result.get("verdict") != bad_row:
            continue
        kept[line["line"]] = result
    if lines and not matched:
        raise ForeignVerdicts(f"--resume: {path} holds no verdict of this input (none of its {len(lines)} lines is "
                              "a row of it at the same line): it was written for another input")
    return kept


class VerdictWriter:
    """Appends verdicts to the partial file as they arrive; `finish()` moves them, in input order, to `path`."""

    def __init__(self, path: str, rows: list[Row]):
        self.path, self.rows = path, {number: row for number, row, _ in rows}
        self.partial = partial_path(path)
        self.results: dict[int, dict[str, Any]] = {}
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        self._handle = open(self.partial, "w", encoding="utf-8")

    def add(self, number: int, result: dict[str, Any]) -> None:
        """Record the verdict of input line `number` and append it to the partial file at once."""
        self.results[number] = result
        self._handle.write(json.dumps({**_base(self.rows[number]), "line": number, **result}, ensure_ascii=False)
                           + "\n")
        self._handle.flush()

    def keep_aside(self) -> list[dict[str, Any]]:
        """The verdicts so far, in input order, rewritten so to the partial file; `path` stays as it was."""
        self._handle.close()
        with open(self.partial, "w", encoding="utf-8") as f:
            for number in sorted(self.results):
                f.write(json.dumps({**_base(self.rows[number]), "line": number, **self.results[number]},
                                   ensure_ascii=False) + "\n")
        return [self.results[number] for number in sorted(self.results)]

    def finish(self) -> list[dict[str, Any]]:
        """The verdicts so far, in input order, which replace `path`."""
        results = self.keep_aside()
        os.replace(self.partial, self.path)
        return results

    def discard(self) -> None:
        """Nothing of this run is kept: the partial file goes, `path` stays as it was."""
        self._handle.close()
        Path(self.partial).unlink(missing_ok=True)
