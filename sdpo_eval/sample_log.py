"""Per-sample JSONL log of an evaluation, written as it runs, so a run can be resumed.

Line 1 is `{"header": {...}}`: the settings that decide a sample (model, prompt, sampling, seed). Every other line is
one graded sample; its key is (model, id, sample). `open_log(path, header, resume)`:
- resume=False: the file must not exist (a finished log is never overwritten by accident);
- resume=True: the header must equal the file's (a mismatch names the keys that differ), and the samples already
  logged are returned; new samples are appended. A torn last line (a crash mid-write) is dropped.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TextIO

SampleKey = tuple[str, str, int]


def sample_key(record: dict[str, Any]) -> SampleKey:
    """The key a record is resumed by: (model, problem id, sample index)."""
    return record["model"], record["id"], int(record["sample"])


class SampleLog:
    """Appends records (one JSON line each, flushed per `write`); `written` counts them."""

    def __init__(self, handle: TextIO):
        self._handle, self.written = handle, 0

    def write(self, records: list[dict[str, Any]]) -> None:
        """Append `records` and flush."""
        self._handle.write("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
        self._handle.flush()
        self.written += len(records)

    def close(self) -> None:
        """Close the file."""
        self._handle.close()


def _read(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    if not lines:
        raise ValueError(f"{path}: empty sample log (no header line)")
    try:
        header = json.loads(lines[0])["header"]
    except (ValueError, KeyError, TypeError):
        raise ValueError(f"{path}: line 1 is not a sample-log header") from None
    records = []
    for number, line in enumerate(lines[1:], 2):
        try:
            records.append(json.loads(line))
        except ValueError:
            if number != len(lines):
                raise ValueError(f"{path}:{number}: not valid JSON") from None
    return header, records


def open_log(path: Path, header: dict[str, Any], resume: bool) -> tuple[SampleLog, dict[SampleKey, dict[str, Any]]]:
    """(log to append to, the samples it already holds by key); see the module docstring."""
    if not resume:
        if path.exists() and _read(path)[1]:   # a log with no sample (a run that failed before its first) is reused
            raise FileExistsError(f"{path} exists; pass --resume to continue it, or choose another --log")
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = path.open("w", encoding="utf-8")
        handle.write(json.dumps({"header": header}, ensure_ascii=False) + "\n")
        handle.flush()
        return SampleLog(handle), {}
    if not path.exists():
        raise FileNotFoundError(f"--resume: no sample log at {path}")
    logged_header, records = _read(path)
    differing = sorted(k for k in set(header) | set(logged_header) if header.get(k) != logged_header.get(k))
    if differing:
        detail = ", ".join(f"{k}: {logged_header.get(k)!r} in the log, {header.get(k)!r} now" for k in differing)
        raise ValueError(f"--resume: {path} was written with other settings ({detail})")
    data = path.read_bytes()
    if not data.endswith(b"\n"):  # drop a torn last line so appended records start on a fresh line
        path.write_bytes(data[:data.rfind(b"\n") + 1])
    return SampleLog(path.open("a", encoding="utf-8")), {sample_key(r): r for r in records}
