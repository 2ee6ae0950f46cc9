"""verl `compute_score` for Lean proofs, built on `lean_env`.

Return contract (all scalars, every call, for every input):
  score        1.0 valid, 0.0 genuine proof failure; 0.0 placeholder for infra (masked)
  verdict      one of lean_env.Verdict values
  feedback     text for the teacher; "" for valid and for infra
  infra        1.0 if the sample must be masked out of training (INFRA or TIMEOUT after retries, or BAD_TASK:
               a malformed ground truth, which says nothing about the proof)
  lean_time_s  Lean time of the final attempt
`compute_score` never raises for any solution_str or ground_truth (config errors, which are programmer errors,
still raise); `parse_ground_truth` raises `ValueError` naming what is wrong with the data.
Config: verl's `reward.custom_reward_function.reward_kwargs`, the flat fields of `lean_env.options` (types, defaults
and docs there), falling back to env vars LEAN_BACKEND, LEAN_SERVER_API_URL, LEAN_SERVER_API_KEY,
LEAN_REPL_COMMAND, LEAN_WORKSPACE. One backend per (process, event loop, `BackendOptions`), created
lazily and reused by all concurrent calls (`lean_env.backends.factory`).
Lean version: with `lean_version` set, the backend is asked once which Lean it runs (`lean_env.version`) and a
mismatch raises LeanVersionError (not masked) unless `allow_lean_version_mismatch`.
Strict mode (`strict_recheck: true`, `lean_env.options.RecheckOptions`): a VALID proof is re-checked by an external
kernel tool before it is paid (`lean_env.recheck.online`); a rejection scores 0 (verdict `forbidden`), a tool failure
is `infra` (masked).
Departure: a Lean timeout counts as infra (masked), not as a failed proof, because on a shared
server a timeout often reflects load rather than the proof.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import json
import logging
from typing import Any, Callable, Iterable, Mapping

from lean_env import DEFAULT_HEADER, Task, Verdict, parse_statement, verify
from lean_env.assemble import split_header
from lean_env.backends import factory
from lean_env.backends.probe import backend_problems
from lean_env.options import BackendOptions, LeanOptions
from lean_env.recheck.online import recheck_valid
from lean_env.text import suspicious_character
from lean_env.types import LeanBackend
from lean_env.version import LeanVersionError, backend_lean_version, check_lean_version
from reward.call_kwargs import own_options

log = logging.getLogger(__name__)

_lean_versions: dict[BackendOptions, str] = {}   # backend options -> the Lean it runs, asked once per process
_version_locks: dict[tuple, asyncio.Lock] = {}


def resolve_config(**kwargs: Any) -> LeanOptions:
    """Options from kwargs (`lean_env.options` fields) over env vars over defaults; unknown keys raise (typos must
    not pass silently); verl's own reward kwargs are ignored."""
    return LeanOptions.from_kwargs(own_options(kwargs))


def preflight(reward_kwargs: Mapping[str, Any]) -> list[str]:
    """Before training starts (`sdpo_ext.startup.checks` calls this): the options are valid and the backend answers
    (`lean_env.backends.probe`); [] when it can run. Not run inside an event loop."""
    try:
        cfg = resolve_config(**reward_kwargs)
    except ValueError as e:
        return [f"{e} (fix reward.custom_reward_function.reward_kwargs)"]
    return asyncio.run(backend_problems(cfg.backend_options))


async def _query_version(backend: LeanBackend, cfg: BackendOptions) -> str:
    # Kimina: with the proofs' imports (a header-less first snippet would become the env later proofs build on);
    # a local REPL: Lean core only, so the check does not import Mathlib in a process of its own.
    header = split_header(DEFAULT_HEADER)[0] if cfg.backend == "kimina" else ""
    return await backend_lean_version(backend, header=header, timeout_s=float(cfg.import_timeout_s))


def _judge_version(found: str, cfg: LeanOptions) -> None:
    try:
        check_lean_version(found, cfg.lean_version)
    except LeanVersionError:
        if not cfg.allow_lean_version_mismatch:
            raise
        log.warning("Lean %s runs the proofs; the recipe names %s (allow_lean_version_mismatch=true)",
                    found, cfg.lean_version)


async def ensure_lean_version(cfg: LeanOptions) -> None:
    """Once per process and backend config: ask the backend which Lean it runs and compare it with `lean_version`
    (LeanVersionError on a mismatch). A backend that cannot answer now is asked again on the next call."""
    key = cfg.backend_options
    if cfg.lean_version is None or key in _lean_versions:
        return
    async with _version_locks.setdefault((id(asyncio.get_running_loop()), key), asyncio.Lock()):  # one query at once
        if key in _lean_versions:
            return
        try:
            found = await _query_version(factory.get_backend(key), key)
        except LeanVersionError as e:   # no answer (server down): the samples are masked as infra, ask again later
            log.warning("%s; asking again on the next proof", e)
            return
        _judge_version(found, cfg)
        _lean_versions[key] = found


def require_lean_version(**config: Any) -> str | None:
    """At start (sync, own thread and event loop): the Lean the configured backend runs, checked against
    `lean_version`; LeanVersionError on a mismatch or when the backend cannot answer. None when unchecked."""
    cfg = resolve_config(**config)
    if cfg.lean_version is None:
        return None

    async def ask() -> str:
        backend = factory.make_backend(cfg.backend_options)
        try:
            return await _query_version(backend, cfg.backend_options)
        finally:
            await backend.aclose()

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        found = pool.submit(asyncio.run, ask()).result()
    _judge_version(found, cfg)
    _lean_versions[cfg.backend_options] = found
    return found


def parse_ground_truth(ground_truth: Any) -> Task:
    """Task from verl's ground_truth: a JSON string (or bytes) or a mapping with a string `formal_statement` holding a
    `theorem <name>`, and optionally string `name` and `header`. ValueError says what is wrong otherwise."""
    gt = ground_truth
    if isinstance(gt, (bytes, bytearray)):
        gt = bytes(gt).decode("utf-8", errors="replace")
    if isinstance(gt, str):
        try:
            gt = json.loads(gt)
        except (ValueError, RecursionError) as e:
            raise ValueError(f"ground_truth is not valid JSON ({e}): {ground_truth[:200]!r}") from None
    if not isinstance(gt, Mapping):
        raise ValueError(f"ground_truth must be a JSON object or mapping, got {type(gt).__name__}: {str(gt)[:200]!r}")
    statement, name, header = gt.get("formal_statement"), gt.get("name"), gt.get("header")
    if not isinstance(statement, str) or not statement.strip():
        raise ValueError("ground_truth needs a non-empty string 'formal_statement' "
                         f"(keys: {sorted(map(str, gt))[:10]})")
    for key, value in (("name", name), ("header", header)):
        if value is not None and not isinstance(value, str):
            raise ValueError(f"ground_truth '{key}' must be a string, got {type(value).__name__}")
    for key, value in (("formal_statement", statement), ("name", name or ""), ("header", header or "")):
        if suspicious_character(value):
            raise ValueError(f"ground_truth '{key}' contains {suspicious_character(value)}")
    name = name or parse_statement(statement).name
    return Task(name=name, formal_statement=statement, header=header or DEFAULT_HEADER)


def _as_dict(verdict: Verdict, feedback: str, lean_time_s: float, infra: bool) -> dict[str, Any]:
    return {"score": 1.0 if verdict is Verdict.VALID else 0.0, "verdict": verdict.value,
            "feedback": "" if infra else feedback, "infra": 1.0 if infra else 0.0, "lean_time_s": float(lean_time_s)}


async def score_one(
    task: Task, solution_str: Any, cfg: LeanOptions, finish_reason: str | None = None
) -> dict[str, Any]:
    """Check one output of `task` on the configured backend (with the strict re-check when on) -> the reward
    dict {score, verdict, feedback, infra, lean_time_s}; an infrastructure failure is masked (infra 1, no feedback)."""
    backend = factory.get_backend(cfg.backend_options)
    output = solution_str if isinstance(solution_str, str) else ""
    result = await verify(task, output, backend, finish_reason=finish_reason, check=cfg.check)
    result = await recheck_valid(task, output, result, cfg.recheck)
    if result.infra:
        log.warning("Lean infra failure (masked): %s", result.detail)
    return _as_dict(result.verdict, result.feedback, result.lean_time_s, result.infra)


async def _score(ground_truth: Any, solution_str: Any, cfg: LeanOptions, finish_reason: str | None) -> dict:
    """`score_one` that never raises: malformed data is BAD_TASK, a failure inside the reward is INFRA (both masked)."""
    try:
        task = parse_ground_truth(ground_truth)
    except Exception as e:  # ValueError for bad data; anything else from an exotic object is bad data too
        log.warning("malformed ground_truth (masked): %s", e)
        return _as_dict(Verdict.BAD_TASK, "", 0.0, True)
    try:
        return await score_one(task, solution_str, cfg, finish_reason)
    except Exception as e:  # a bug must neither crash the trainer nor score a proof
        log.exception("Lean reward failed (masked): %s", e)
        return _as_dict(Verdict.INFRA, "", 0.0, True)


async def compute_score(data_source: str, solution_str: str, ground_truth: Any, extra_info: Mapping | None = None,
                        **kwargs: Any) -> dict[str, Any]:
    """verl reward entry point (async). `finish_reason` is read from kwargs or extra_info if present."""
    cfg = resolve_config(**kwargs)
    await ensure_lean_version(cfg)   # a mismatch stops here, loudly: it is a setup error, not a sample's
    finish_reason = kwargs.get("finish_reason")
    if finish_reason is None and isinstance(extra_info, Mapping):
        finish_reason = extra_info.get("finish_reason")
    return await _score(ground_truth, solution_str, cfg, finish_reason)


async def verify_many(
    items: Iterable[Mapping[str, Any]], *, progress: bool = True,
    on_result: Callable[[int, dict[str, Any]], None] | None = None, **config: Any
) -> list[dict[str, Any]]:
    """Score many items (keys: `ground_truth` or `formal_statement`/`name`/`header`; `output` or
    `solution_str`; optional `finish_reason`), in input order, at most `max_concurrency` at once; `on_result(index,
    result)` as each one completes (so a caller can keep what is done if the run is stopped)."""
    from tqdm.auto import tqdm

    cfg = resolve_config(**config)
    await ensure_lean_version(cfg)
    items = list(items)
    sem = asyncio.Semaphore(max(1, int(cfg.max_concurrency)))
    bar = tqdm(total=len(items), desc="lean verify", disable=not progress)

    async def one(index: int, item: Mapping[str, Any]) -> dict[str, Any]:
        output = item.get("output", item.get("solution_str"))
        async with sem:
            out = await _score(item.get("ground_truth") or item, output, cfg, item.get("finish_reason"))
        bar.update(1)
        if on_result is not None:
            on_result(index, out)
        return out

    try:
        return list(await asyncio.gather(*(one(i, it) for i, it in enumerate(items))))
    finally:
        bar.close()
