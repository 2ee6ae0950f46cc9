"""Read raw dataset records from a local file (.jsonl, .json, .parquet) or the Hugging Face hub.

Hub records carry their hub split name under `_hf_split` so callers can map it (e.g. validation -> valid).
"""
from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from typing import Any


class InputError(ValueError):
    """The input could not be read or yields nothing usable; the message names `--input` and the dataset card."""


def dataset_card(dataset: str) -> str:
    """Where the card of `dataset` is, for an error's fix."""
    return f"datasets/{dataset}.md (where to get the data, the fields a record needs)"


def read_input(source: str, dataset: str, *, from_flag: bool = True, **hub: str | None) -> list[dict[str, Any]]:
    """load_records(source, **hub); any failure (missing file, bad JSON, hub or network error) is an InputError
    naming `--input` (from_flag) or the hub source (read by default, when `--input` was not given); so is a record
    that is not a JSON object."""
    where = f"--input {source}" if from_flag else f"{source} from the Hugging Face hub (a local copy: --input FILE)"
    try:
        records = load_records(source, **hub)
    except Exception as e:  # the hub and the parsers raise many types; every one means "fix the input"
        first = str(e).strip().splitlines()[0] if str(e).strip() else ""
        raise InputError(f"{where}: {type(e).__name__}: {first} (see the dataset card {dataset_card(dataset)})") from e
    bad = next((i for i, r in enumerate(records) if not isinstance(r, dict)), None)
    if bad is not None:
        raise InputError(f"{where}: record {bad + 1} is a JSON {type(records[bad]).__name__}, not an object with the "
                         f"dataset's fields (see the dataset card {dataset_card(dataset)})")
    return records


def load_records(source: str, hf_config: str | None = None, hf_split: str | None = None) -> list[dict[str, Any]]:
    """All records of `source`: a local file path, or an HF dataset id (`owner/name`) loaded with `datasets`."""
    path = Path(source).expanduser()
    if path.exists():
        return _load_local(path)
    if source.count("/") == 1 and not source.startswith((".", "/", "~")) and not path.suffix:
        return _load_hub(source, hf_config, hf_split)
    raise FileNotFoundError(f"{source!r} is neither an existing file nor a Hugging Face dataset id (owner/name)")


def read_jsonl(path: str | Path, what: str = "not valid JSON") -> list[Any]:
    """Every non-blank line of a JSONL file, parsed; a bad line fails with `path:line: <what> (reason)`."""
    records = []
    with Path(path).open(encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, 1):
            if line.strip():
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError as e:
                    raise ValueError(f"{path}:{line_no}: {what} ({e.msg})") from e
    return records


def _load_local(path: Path) -> list[dict[str, Any]]:
    if path.suffix == ".jsonl":
        return read_jsonl(path)
    if path.suffix == ".json":
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, list):
            raise ValueError(f"{path}: expected a JSON list of records")
        return data
    if path.suffix == ".parquet":
        import pandas as pd

        return pd.read_parquet(path).to_dict(orient="records")
    raise ValueError(f"{path}: unsupported file type {path.suffix!r} (use .jsonl, .json or .parquet)")


def _check_hub_reachable() -> None:
    """Fail at once when huggingface.co does not even resolve (no network), instead of after `datasets`' retries
    (about 25 s). With HF_HUB_OFFLINE=1 `datasets` reads its cache and nothing is checked."""
    if os.environ.get("HF_HUB_OFFLINE", "0").lower() in ("1", "true", "yes"):
        return
    try:
        socket.getaddrinfo("huggingface.co", 443)
    except OSError as e:
        raise ConnectionError(f"cannot reach huggingface.co ({e}); set HF_HUB_OFFLINE=1 to read the datasets "
                              "cache") from None


def _load_hub(dataset_id: str, config: str | None, split: str | None) -> list[dict[str, Any]]:
    from datasets import load_dataset

    _check_hub_reachable()
    loaded = load_dataset(dataset_id, config, split=split)
    splits = {split: loaded} if split else dict(loaded)
    return [{**row, "_hf_split": name} for name, part in splits.items() for row in part]
