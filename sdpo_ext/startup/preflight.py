"""Pre-flight: what a run needs from this machine, checked before Ray starts; each problem names its key and fix.

- GPUs: `trainer.n_gpus_per_node` is at least 1 (verl 0.9.1's trainer has no CPU mode: 0 ends 36 s into Ray on
  "Bundles must be a non-empty list"), and at most the GPUs this process sees (CUDA_VISIBLE_DEVICES honoured), for a
  run on this one machine. Without this, verl asks Ray for GPUs it does not have and its placement group waits, or
  fails a minute later inside a worker.
- Data: every local file of `data.train_files` / `data.val_files` exists; a missing one names the command that makes
  it, from the file's name and the recipe's keys (PREPARE_COMMANDS), or, when `sdpo.dataset` names no prepared
  dataset (PREPARED_DATASETS), the closest names. What an existing file holds: `sdpo_ext.startup.data_files`.
- Model: `actor_rollout_ref.model.path` is a local folder, or a hub id already in the Hugging Face cache, or (online)
  one the hub answers for within HUB_TIMEOUT_S (name lookup included; the token of HF_TOKEN or `hf auth login`), or
  an hdfs:// path (the one remote scheme verl's `copy_to_local` copies) that the `hdfs` client finds within
  HUB_TIMEOUT_S; nothing is downloaded. Offline, the fix says how to pass a local folder; a missing folder that one
  of our commands makes (MODEL_COMMANDS: the demo's SmolLM2) names that command.
- Chat template: `generation_prompt` renders the model's chat template for one user message, with the run's
  `data.apply_chat_template_kwargs`, as verl renders its prompts, for the reward's own pre-flight (MATH checks
  `prompt_opens_think` against it); only from a tokenizer already on this machine.
The CPU budget, unknown keys and the attention implementation are checked beside these (sdpo_ext.startup.checks),
and the reward function's own `preflight(reward_kwargs)` when its module defines one (the Lean backend).
"""
from __future__ import annotations

import difflib
import os
import re
import shlex
import shutil
import subprocess
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

HUB_TIMEOUT_S = 5.0
REMOTE_MODEL_SCHEME = "hdfs://"  # verl.utils.fs.is_non_local: the only scheme copy_to_local copies
T = TypeVar("T")
# file name of a recipe's parquet -> the command that writes it (`{dir}`: the file's folder, quoted for the shell;
# groups of the pattern), pasteable as is; a placeholder path is the one thing left to fill in, its source after ";"
PREPARE_COMMANDS = (
    (re.compile(r"(?P<dataset>minif2f|proofnet)_(?P<style>\w+?)_(?:valid|test)\.parquet"),
     "python -m sdpo_data.prepare lean --dataset {dataset} --input /path/to/{dataset}.jsonl --prompt-style {style} "
     "--out-dir {dir}; {dataset}.jsonl: datasets/{dataset}.md"),
    (re.compile(r"math_(?P<split>train|test)\.parquet"), "python -m sdpo_data.prepare math --split {split} "
     "--out-dir {dir}"),
    (re.compile(r"addition_(?:train|test)\.parquet"), "python -m sdpo_data.addition_rows --out-dir {dir}"),
    (re.compile(r"toy_.*\.parquet"), "python -m sdpo_data.toy_lean --out-dir {dir}"),
)
# the `sdpo.dataset` values a command above makes: sdpo_data.lean_rows.LEAN_DATASETS and the toy set (a test checks)
PREPARED_DATASETS = ("minif2f", "proofnet", "toy")
# folder name of a recipe's model -> the command that makes it (`{path}`: the folder, quoted for the shell)
MODEL_COMMANDS = ((re.compile(r"smollm2-135m"), "python -m sdpo_data.smollm2 --out-dir {path}"),)


def visible_gpus() -> int:
    """How many CUDA devices torch sees here (0 without CUDA)."""
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def joins_a_ray_cluster(config: Mapping[str, Any]) -> bool:
    """Whether verl's ray.init will join a running cluster (whose nodes, not this one, hold the GPUs)."""
    ray_init = ((config.get("ray_kwargs") or {}).get("ray_init") or {})
    return bool(ray_init.get("address") or os.environ.get("RAY_ADDRESS"))


def gpu_problems(config: Mapping[str, Any], visible: int) -> list[str]:
    """GPUs asked per node against the GPUs this machine shows; not checked when the run spans several nodes or
    joins a running Ray cluster (the driver's machine may hold none)."""
    trainer = config.get("trainer") or {}
    wanted = int(trainer.get("n_gpus_per_node", 0) or 0)
    if wanted < 1:
        fix = f"trainer.n_gpus_per_node={visible or 1}" + ("" if visible else " on a GPU machine")
        return [f"trainer.n_gpus_per_node={wanted}: verl 0.9.1's trainer needs at least one GPU per node ({fix})"]
    if wanted <= visible or int(trainer.get("nnodes", 1) or 1) > 1 or joins_a_ray_cluster(config):
        return []
    fix = f"trainer.n_gpus_per_node={visible}" if visible else "run on a GPU machine (verl 0.9.1 has no CPU platform)"
    return [f"trainer.n_gpus_per_node={wanted} but this machine shows {visible} GPU(s) ({fix})"]


def _files(value: Any) -> list[str]:
    if value is None:
        return []
    return [str(value)] if isinstance(value, (str, os.PathLike)) else [str(v) for v in value]


def prepare_command(path: Path) -> str | None:
    """The command that makes the data file `path` (by its name), or None when none does."""
    for pattern, command in PREPARE_COMMANDS:
        match = pattern.fullmatch(path.name)
        if match:
            return command.format(dir=shlex.quote(str(path.parent)), **match.groupdict())
    return None


def dataset_problem(config: Mapping[str, Any]) -> str | None:
    """Why `sdpo.dataset` names no prepared dataset (with the closest names), or None (unset, or a known name)."""
    name = (config.get("sdpo") or {}).get("dataset")
    if name is None or str(name) in PREPARED_DATASETS:
        return None
    close = difflib.get_close_matches(str(name), PREPARED_DATASETS, n=3)
    hint = f"did you mean {', '.join(close)}? " if close else ""
    return f"sdpo.dataset={name} names no prepared dataset ({hint}known: {', '.join(PREPARED_DATASETS)})"


def data_problems(config: Mapping[str, Any]) -> list[str]:
    """`data.train_files` / `data.val_files` that do not exist, each with the command that makes it; the files named
    after a misspelt `sdpo.dataset` as that one problem."""
    data = config.get("data") or {}
    dataset = dataset_problem(config)
    misspelt = f"{(config.get('sdpo') or {}).get('dataset')}_"
    problems = []
    for key in ("train_files", "val_files"):
        for name in _files(data.get(key)):
            if "://" in name or Path(name).expanduser().exists():
                continue
            if dataset and Path(name).name.startswith(misspelt):
                problems += [dataset] if dataset not in problems else []
                continue
            command = prepare_command(Path(name).expanduser())
            fix = f"make it with: {command}" if command else f"point data.{key} at an existing file"
            problems.append(f"data.{key}: {name} does not exist ({fix})")
    return problems


PROBE_MESSAGES = ({"role": "user", "content": "What is 1 + 1?"},)


def generation_prompt(config: Mapping[str, Any]) -> str | None:
    """The chat template of `actor_rollout_ref.model` (its tokenizer_path, else path; custom_chat_template if set)
    rendered for PROBE_MESSAGES with the generation prompt and `data.apply_chat_template_kwargs`; None when that
    tokenizer is not on this machine (model_problems says why) or cannot render a chat."""
    model = (config.get("actor_rollout_ref") or {}).get("model") or {}
    source = str(model.get("tokenizer_path") or model.get("path") or "")
    if not source:
        return None
    local = Path(source).expanduser()
    try:
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(str(local) if local.is_dir() else source, local_files_only=True,
                                                  trust_remote_code=bool(model.get("trust_remote_code", False)))
        if model.get("custom_chat_template"):
            tokenizer.chat_template = model["custom_chat_template"]
        kwargs = dict((config.get("data") or {}).get("apply_chat_template_kwargs") or {})
        return tokenizer.apply_chat_template(list(PROBE_MESSAGES), add_generation_prompt=True, tokenize=False,
                                             **kwargs)
    except Exception:  # noqa: BLE001 - not on this machine, no template, a template error: nothing to check
        return None


def _offline() -> bool:
    flags = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    return any(os.environ.get(flag, "0").lower() in ("1", "true", "yes") for flag in flags)


def _cached(repo: str) -> bool:
    from huggingface_hub import try_to_load_from_cache

    return isinstance(try_to_load_from_cache(repo, "config.json"), str)


def within(seconds: float, call: Callable[[], T]) -> T:
    """call() in a daemon thread; TimeoutError after `seconds`. Bounds what a client's own timeout does not: the
    name lookup (getaddrinfo blocks, outside httpx's timeout) and a client that hangs; the thread is left behind."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = call()
        except BaseException as e:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = e

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        raise TimeoutError(f"no answer within {seconds:g} s")
    if "error" in box:
        raise box["error"]
    return box["value"]


def _hub_answers(repo: str) -> str | None:
    """None when the hub lists `repo` within HUB_TIMEOUT_S (the name lookup included), else why not."""
    import httpx
    from huggingface_hub import get_token

    endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")
    token = get_token()  # HF_TOKEN, else the token `hf auth login` saved
    try:
        resp = within(HUB_TIMEOUT_S, lambda: httpx.get(
            f"{endpoint}/api/models/{repo}", timeout=HUB_TIMEOUT_S,
            headers={"Authorization": f"Bearer {token}"} if token else None))
    except (httpx.HTTPError, TimeoutError) as e:
        return f"the hub did not answer within {HUB_TIMEOUT_S:g} s ({type(e).__name__})"
    return None if resp.status_code == 200 else f"the hub answered HTTP {resp.status_code}"


def _hdfs_problem(path: str) -> str | None:
    """Why verl's copy_to_local cannot copy `path` (hdfs://...): no `hdfs` client, or `hdfs dfs -test -e` says it
    is not there; None when it is, or when the client gives no answer within HUB_TIMEOUT_S (not known here)."""
    if shutil.which("hdfs") is None:
        return "verl copies it with the `hdfs` client, which is not on PATH (install Hadoop's client"
    try:
        test = subprocess.run(["hdfs", "dfs", "-test", "-e", path], capture_output=True, timeout=HUB_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return None
    return None if test.returncode == 0 else "`hdfs dfs -test -e` does not find it (check the path"


def model_problems(config: Mapping[str, Any]) -> list[str]:
    """Why `actor_rollout_ref.model.path` cannot be loaded here (no folder, no valid hub id, not cached while the hub
    is offline or does not answer, an hdfs path that is not there), each with its fix."""
    model = (config.get("actor_rollout_ref") or {}).get("model") or {}
    path = model.get("path")
    if not path or Path(str(path)).expanduser().is_dir():
        return []
    key = "actor_rollout_ref.model.path"
    local = f"download it once and pass the folder: {key}=/path/to/model"
    for pattern, command in MODEL_COMMANDS:
        if pattern.fullmatch(Path(str(path)).name):
            local = f"make it with: {command.format(path=shlex.quote(str(path)))}"
    if str(path).startswith(REMOTE_MODEL_SCHEME):
        why = _hdfs_problem(str(path))
        return [f"{key}={path}: {why}, or {local})"] if why else []
    if "://" in str(path):
        return [f"{key}={path}: verl 0.9.1 copies only {REMOTE_MODEL_SCHEME} paths ({local})"]
    if str(path).startswith(("/", "~", ".")) or str(path).count("/") != 1:
        return [f"{key}={path} is not a folder ({local})"]
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    try:
        validate_repo_id(str(path))
    except HFValidationError as e:
        return [f"{key}={path} is neither a folder nor a hub id: {e} ({local})"]
    if _cached(str(path)):
        return []
    if _offline():
        return [f"{key}={path} is not in the Hugging Face cache and the hub is offline (HF_HUB_OFFLINE) ({local})"]
    why = _hub_answers(str(path))
    return [f"{key}={path}: not cached and {why} ({local})"] if why else []
