"""Pre-flight of the data a run reads: every parquet file is one, has the columns verl and the reward read, has rows.

Each existing local file of `data.train_files`, `data.val_files` and, for TTRL, `data.sdpo_ttrl.files` (where
`TheoremFilterDataset` looks problems up) is read from its footer only (pyarrow's schema and row count: milliseconds
whatever its size), and must hold, as verl 0.9.1's RLHFDataset and reward loop read them:
- `data.prompt_key` (default `prompt`): a list of chat messages, structs with string `role` and `content`;
- `data.reward_fn_key` (default `data_source`): a string, the reward's dispatch key;
- `reward_model`: a struct with a string `ground_truth` (the reference the reward compares with);
- with TTRL, `extra_info`: a struct with a string `name` (problems are looked up by it, never by index).
A file that does not exist is `preflight.data_problems`'s. Each problem names the fix: the command that makes the
file (`preflight.prepare_command`), else how to write rows of this shape.
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

PARQUET_MAGIC = b"PAR1"   # the first and last 4 bytes of every parquet file
# what a file written by sdpo_data's tools holds (the fix when no command makes the file)
ROW_SHAPE = ("verl rows: prompt (chat messages), data_source, reward_model.ground_truth, extra_info.name; as "
             "sdpo_data.prepare writes them")


def read_files(config: Mapping[str, Any], ttrl_active: bool) -> list[tuple[str, str]]:
    """(key, local path) of every data file the run reads that exists here, each once."""
    data = config.get("data") or {}
    keys = ["train_files", "val_files"] + (["sdpo_ttrl.files"] if ttrl_active else [])
    seen, files = set(), []
    for key in keys:
        value = (data.get("sdpo_ttrl") or {}).get("files") if key == "sdpo_ttrl.files" else data.get(key)
        for name in [value] if isinstance(value, str) else list(value or []):
            path = Path(str(name)).expanduser()
            if "://" not in str(name) and path.is_file() and path not in seen:
                seen.add(path)
                files.append((f"data.{key}", str(name)))
    return files


def _is_string(arrow_type: Any) -> bool:
    import pyarrow as pa

    return pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type)


def _struct_problem(arrow_type: Any, fields: tuple[str, ...]) -> str | None:
    """Why `arrow_type` is not a struct with these string fields, or None."""
    import pyarrow as pa

    if not pa.types.is_struct(arrow_type):
        return f"a struct with {', '.join(fields)}"
    names = [arrow_type.field(i).name for i in range(arrow_type.num_fields)]
    for field in fields:
        if field not in names:
            return f"a struct with a string {field!r} (it has {', '.join(names) or 'no field'})"
        if not _is_string(arrow_type.field(field).type):
            return f"a struct with a string {field!r} (it is {arrow_type.field(field).type})"
    return None


def column_problems(schema: Any, prompt_key: str, reward_fn_key: str, ttrl_active: bool) -> list[str]:
    """What the columns of `schema` (a pyarrow schema) lack, each as 'column: what it must be'."""
    import pyarrow as pa

    problems = []
    for column, check in ((prompt_key, "messages"), (reward_fn_key, "string"), ("reward_model", ("ground_truth",)),
                          *((("extra_info", ("name",)),) if ttrl_active else ())):
        if column not in schema.names:
            problems.append(f"no column {column!r}")
            continue
        arrow_type = schema.field(column).type
        if check == "string":
            why = None if _is_string(arrow_type) else "a string"
        elif check == "messages":
            listed = pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type)
            why = _struct_problem(arrow_type.value_type, ("role", "content")) if listed else "a list"
            why = f"a list of chat messages: {why}" if why else None
        else:
            why = _struct_problem(arrow_type, check)
        if why:
            problems.append(f"column {column!r} is {arrow_type}, not {why}")
    return problems


def file_problem(path: str, prompt_key: str, reward_fn_key: str, ttrl_active: bool) -> str | None:
    """Why the file at `path` cannot be read by the run (not a parquet, columns, no rows), or None."""
    import pyarrow.parquet as pq

    local = Path(path).expanduser()
    with local.open("rb") as handle:
        head = handle.read(4)
        handle.seek(max(0, local.stat().st_size - 4))
        tail = handle.read(4)
    if head != PARQUET_MAGIC or tail != PARQUET_MAGIC:
        return f"is not a parquet file (it does not begin and end with {PARQUET_MAGIC.decode()})"
    try:
        meta = pq.ParquetFile(local)
        schema = meta.schema_arrow
    except Exception as e:  # noqa: BLE001 - pyarrow's errors for a damaged footer: all mean "make it again"
        return f"is not a readable parquet file ({type(e).__name__}: {str(e).splitlines()[0]})"
    problems = column_problems(schema, prompt_key, reward_fn_key, ttrl_active)
    if problems:
        return "lacks what verl and the reward read: " + "; ".join(problems)
    return None if meta.metadata.num_rows else "has no rows"


def data_file_problems(config: Mapping[str, Any], ttrl_active: bool) -> list[str]:
    """Every data file the run reads that is not a parquet with verl's columns and rows, each with its fix."""
    from sdpo_ext.startup.preflight import prepare_command

    data = config.get("data") or {}
    prompt_key, reward_fn_key = str(data.get("prompt_key") or "prompt"), str(data.get("reward_fn_key") or
                                                                              "data_source")
    problems = []
    for key, path in read_files(config, ttrl_active):
        why = file_problem(path, prompt_key, reward_fn_key, ttrl_active)
        if why:
            command = prepare_command(Path(path).expanduser())
            fix = f"make it again with: {command}" if command else f"write {ROW_SHAPE}"
            problems.append(f"{key}: {path} {why} ({fix})")
    return problems
