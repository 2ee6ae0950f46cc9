"""Discovery without training, the `sampler` protocol: best-of-k and the feedback re-prompting baseline `reprompt`.

    python -m sdpo_eval.discovery sample --recipe sdpo_demo --problems a,b,c --budget 128 \\
        --runs best_of_k:1,reprompt:1,best_of_k:2,reprompt:2 --out-dir DIR [--keep-going] [-- hydra overrides]
    -> DIR/<method>/seed<s>/{attempts.jsonl, status.json}, the layout of the verl runs' folders, which
       `sdpo_eval.discovery report` and `merge` read.

This is the one best-of-k of the discovery figures (the launcher, `sdpo_eval.discovery run`, starts it).

Both methods sample with the recipe's own settings (its model, chat-templated prompts, rollout temperature, top-p,
n and max_response_length) and judge with the recipe's own reward function, called as verl's reward loop calls it
(`verl.trainer.ppo.reward.get_custom_reward_fn`: data_source, solution_str, ground_truth, the row's extra_info). One
engine serves every run of the process. A round gives every open problem `n` attempts, one per slot, in one
generate call; a problem retires at its first valid attempt (unless --keep-going) or when `budget` attempts were
judged. Infrastructure results (infra=1) are logged but consume no attempt, give no feedback and never count.

- `best_of_k`: every attempt from the plain prompt.
- `reprompt`: slot j's next attempt is sampled from the context SDPO's teacher would get for slot j's latest
  failed attempt: `select_teacher_signals` and `build_teacher_messages` (sdpo_ext.teacher.reprompt) with the SDPO
  recipe's `reprompt` block, fitted to its `max_reprompt_len` by `fit_teacher_prompt`. A slot whose attempts gave no
  feedback yet samples from the plain prompt. This is the Kimina-Prover "error-fix" idea at equal budget, and
  SDPO's teacher without any update: the baseline SDPO has to beat to show that training, not the feedback in the
  context, found the proof. The student never sees a solved sibling here (an open problem has none).

Seeds: attempt i (0-based, per problem) of slot j draws with seed `seed * 1_000_003 + problem index * 10_007 + i`,
so runs are reproducible and two seeds never share a sample.
"""
from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import os
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sdpo_attempts.log import AttemptLog
from sdpo_attempts.valid import valid_record
from sdpo_eval.discovery.methods import METHODS
from sdpo_eval.discovery.runs import finished
from sdpo_eval.engines import (
    Completion,
    Engine,
    EngineMissing,
    EngineOptions,
    ModelSpec,
    SamplingParams,
    VllmEngine,
    load_engine,
)
from sdpo_eval.prover_eval import attempt_samples
from sdpo_options import cli_checks
from sdpo_options.flags import add_flags, deprecated_alias, from_flags

SAMPLER_METHODS = tuple(name for name, m in METHODS.items() if m.protocol == "sampler")
RewardFn = Callable[..., Any]


@dataclass
class ProblemState:
    """One problem of a run: its row, judged attempts, first valid attempt and each slot's latest failed attempt."""

    row: dict[str, Any]
    index: int
    judged: int = 0
    drawn: int = 0
    first: int | None = None
    last_failure: dict[int, tuple[str, str]] = field(default_factory=dict)  # slot -> (response, feedback)

    def open(self, budget: int, stop_on_success: bool) -> bool:
        """Whether the problem still has budget and, with `stop_on_success`, no valid attempt yet."""
        return self.judged < budget and not (stop_on_success and self.first is not None)


class Judge:
    """The reward function on (row, reply) pairs, called as verl's naive reward loop calls it (data_source,
    solution_str, ground_truth, the row's extra_info); a bare float becomes {"score": x}. Async functions run
    concurrently on one private event loop that lives across calls, so the Lean backends they open (REPL processes,
    HTTP clients) are reused; `close()` shuts those down."""

    def __init__(self, reward_fn: RewardFn):
        self.reward_fn = reward_fn
        self.is_async = inspect.iscoroutinefunction(getattr(reward_fn, "func", reward_fn))
        self._loop = asyncio.new_event_loop()

    def _call(self, row: dict[str, Any], text: str):
        return self.reward_fn(data_source=row["data_source"], solution_str=text, ground_truth=row["ground_truth"],
                              extra_info=dict(row.get("extra_info") or {}))

    def __call__(self, rows: Sequence[dict[str, Any]], texts: Sequence[str]) -> list[dict[str, Any]]:
        if self.is_async:
            async def all_of() -> list:
                return await asyncio.gather(*(self._call(r, t) for r, t in zip(rows, texts)))
            results = self._loop.run_until_complete(all_of())
        else:
            results = [self._call(r, t) for r, t in zip(rows, texts)]
        return [r if isinstance(r, dict) else {"score": float(r)} for r in results]

    def close(self) -> None:
        """Close the Lean backends (when the reward opened any) and the event loop."""
        factory = sys.modules.get("lean_env.backends.factory")  # imported only by the Lean reward
        if factory is not None:
            self._loop.run_until_complete(factory.aclose_backends())
        self._loop.close()


def slot_prompt(state: ProblemState, slot: int, method: str, reprompt_cfg, tokenizer) -> list[dict]:
    """The messages slot `slot` samples from next (module docstring)."""
    from sdpo_ext.teacher.reprompt import build_teacher_messages, fit_teacher_prompt, select_teacher_signals

    messages = [dict(m) for m in state.row["prompt"]]
    if method == "best_of_k" or slot not in state.last_failure:
        return messages
    response, feedback = state.last_failure[slot]
    signal = select_teacher_signals([0], [0.0], [response], [feedback], [False], reprompt_cfg)[0]
    if tokenizer is not None:
        signal = fit_teacher_prompt(tokenizer, messages, signal, reprompt_cfg).signal
    return build_teacher_messages(messages, signal, reprompt_cfg) or messages


def _seed(base: int, state: ProblemState, i: int) -> int:
    return base * 1_000_003 + state.index * 10_007 + i


def sample_set(method: str, rows: Sequence[dict[str, Any]], engine: Engine, params: SamplingParams, n: int,
               budget: int, judge: Judge, log: AttemptLog | None, reprompt_cfg=None, tokenizer=None,
               stop_on_success: bool = True, max_all_infra_rounds: int = 3,
               on_round: Callable[[int, int], None] | None = None) -> dict[str, dict[str, Any]]:
    """Rounds of `n` attempts on every open problem until none is open -> {problem: {first_success, judged,
    drawn}}. `reprompt` needs `reprompt_cfg` (a RepromptConfig)."""
    if method not in SAMPLER_METHODS:
        raise ValueError(f"error: unknown sampler method {method!r} (known: {', '.join(SAMPLER_METHODS)})")
    if method == "reprompt" and reprompt_cfg is None:
        raise ValueError("error: reprompt needs the SDPO recipe's reprompt settings (reprompt_cfg)")
    states = [ProblemState(row=dict(r), index=i) for i, r in enumerate(rows)]
    step, all_infra = 0, 0
    while all_infra < max_all_infra_rounds:
        active = [s for s in states if s.open(budget, stop_on_success)]
        if not active:
            break
        step += 1
        jobs = [(s, j) for s in active for j in range(n)]
        prompts = [slot_prompt(s, j, method, reprompt_cfg, tokenizer) for s, j in jobs]
        seeds = [_seed(params.seed, s, s.drawn + j) for s, j in jobs]
        completions = engine.generate(prompts, params, seeds=seeds)
        results = judge([s.row for s, _ in jobs], [c.text for c in completions])
        all_infra = all_infra + 1 if all(r.get("infra") for r in results) else 0
        for state in active:
            mine = [i for i, (s, _) in enumerate(jobs) if s is state]
            _absorb(state, [jobs[i][1] for i in mine], [completions[i] for i in mine], [results[i] for i in mine],
                    [seeds[i] for i in mine], log, step)
        if on_round is not None:
            on_round(step, sum(s.open(budget, stop_on_success) for s in states))
    return {s.row["name"]: {"first_success": s.first, "judged": s.judged, "drawn": s.drawn} for s in states}


def _absorb(state: ProblemState, slots: list[int], completions: list[Completion], results: list[dict],
            seeds: list[int], log: AttemptLog | None, step: int) -> None:
    """Count one round's attempts of one problem; keep each slot's latest failure with feedback."""
    samples = attempt_samples(state.row["name"], completions, results, seeds)
    records = log.record(step, samples) if log is not None else []
    state.drawn += len(slots)
    for k, (slot, completion, result) in enumerate(zip(slots, completions, results)):
        if result.get("infra"):
            continue
        state.judged += 1
        attempt = records[k]["attempt"] if records else state.judged
        if valid_record(result):
            state.first = attempt if state.first is None else min(state.first, attempt)
        elif str(result.get("feedback") or "").strip():
            state.last_failure[slot] = (completion.text, str(result["feedback"]))


# ------------------------------------------------------------------ the recipe's settings

@dataclass(frozen=True)
class RecipeSampling:
    """What a run takes from the composed recipe: model, rows, sampler, reward function, teacher-context settings."""

    model: str
    rows: list[dict[str, Any]]
    params: SamplingParams
    n: int
    reward_fn: RewardFn
    reprompt_cfg: Any
    reward_problems: tuple[str, ...] = ()   # what the reward's own `preflight(reward_kwargs)` reports


def from_recipe(recipe: str, problems: Sequence[str], overrides: Sequence[str] = ()) -> RecipeSampling:
    """Compose `+recipe=<recipe>` (an sdpo_ recipe: its reprompt block is SDPO's teacher's) and read its settings."""
    from omegaconf import OmegaConf
    from verl.trainer.ppo.reward import get_custom_reward_fn

    from sdpo_eval.discovery.recipe import compose_recipe
    from sdpo_eval.prover_eval import load_problems
    from sdpo_ext.teacher.reprompt import RepromptConfig

    cfg = compose_recipe(recipe, [f"++sdpo.ttrl.theorems=[{','.join(problems)}]", *overrides])
    rollout, data = cfg["actor_rollout_ref"]["rollout"], cfg["data"]
    files = (data.get("sdpo_ttrl") or {}).get("files") or [data["train_files"]]
    rows = load_problems(files if isinstance(files, list) else [files], list(problems))
    reprompt = (cfg["actor_rollout_ref"]["actor"].get("sdpo") or {}).get("reprompt") or {}
    params = SamplingParams(temperature=float(rollout["temperature"]), top_p=float(rollout["top_p"]),
                            max_new_tokens=int(data["max_response_length"]), seed=0)
    return RecipeSampling(model=str(cfg["actor_rollout_ref"]["model"]["path"]), rows=rows, params=params,
                          n=int(rollout["n"]), reward_fn=get_custom_reward_fn(OmegaConf.create(cfg)),
                          reprompt_cfg=RepromptConfig(**{k: v for k, v in reprompt.items() if k != "_target_"}),
                          reward_problems=tuple(reward_preflight(cfg)))


def reward_preflight(cfg: dict[str, Any]) -> list[str]:
    """The recipe's reward module's own `preflight(reward_kwargs)`, as the training pre-flight calls it (the Lean
    reward asks its backend, in seconds); [] when the module defines none. Run before any model loads: a sampler
    whose proofs cannot be checked would only generate."""
    from verl.utils.import_utils import load_module  # how verl loads the reward function's module

    function = (cfg.get("reward") or {}).get("custom_reward_function") or {}
    preflight = getattr(load_module(str(function["path"])), "preflight", None) if function.get("path") else None
    return list(preflight(dict(function.get("reward_kwargs") or {}))) if preflight else []


def parse_runs(text: str) -> list[tuple[str, int]]:
    """'best_of_k:1,reprompt:2' -> [("best_of_k", 1), ("reprompt", 2)]."""
    runs = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        method, _, seed = part.partition(":")
        if method not in SAMPLER_METHODS or not seed.isdigit():
            raise ValueError(f"error: bad run {part!r} (write method:seed, method one of {', '.join(SAMPLER_METHODS)})")
        runs.append((method, int(seed)))
    if not runs:
        raise ValueError("error: --runs names no run (e.g. --runs best_of_k:1,reprompt:1)")
    return runs


def run_all(setting: RecipeSampling, engine: Engine, runs: Sequence[tuple[str, int]], budget: int, out_dir: Path,
            stop_on_success: bool = True, tokenizer=None) -> list[dict[str, Any]]:
    """Each (method, seed) into out_dir/<method>/seed<s>/ (attempts.jsonl, status.json); finished ones skipped."""
    done, judge = [], Judge(setting.reward_fn)
    try:
        for method, seed in runs:
            done.append(_run_one(setting, engine, judge, method, seed, budget, out_dir, stop_on_success, tokenizer))
    finally:
        judge.close()
    return done


def _run_one(setting: RecipeSampling, engine: Engine, judge: Judge, method: str, seed: int, budget: int,
             out_dir: Path, stop_on_success: bool, tokenizer) -> dict[str, Any]:
    """One (method, seed) run into out_dir/<method>/seed<s>/; a run that finished earlier is skipped, a cut one
    starts over (sampling is cheap next to training)."""
    from dataclasses import replace

    from tqdm.auto import tqdm

    run_dir = out_dir / method / f"seed{seed}"
    if finished(run_dir):
        return {"method": method, "seed": seed, "returncode": 0, "skipped": True}
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "attempts.jsonl").unlink(missing_ok=True)
    log = AttemptLog(path=str(run_dir / "attempts.jsonl"), method=method, seed=seed,
                     run_id=f"{method}-set-s{seed}-{uuid.uuid4().hex[:8]}")
    start = time.time()
    bar = tqdm(desc=f"{method} seed {seed}", unit="round")
    result = sample_set(method, setting.rows, engine, replace(setting.params, seed=seed), setting.n, budget, judge,
                        log, setting.reprompt_cfg, tokenizer, stop_on_success,
                        on_round=lambda step, left: (bar.update(1), bar.set_postfix(open=left)))
    bar.close()
    status = {"returncode": 0, "wall_s": round(time.time() - start, 1), "problems": result}
    (run_dir / "status.json").write_text(json.dumps(status, indent=1))
    return {"method": method, "seed": seed, "returncode": 0,
            "solved": sum(r["first_success"] is not None for r in result.values())}


def main(argv: list[str] | None = None) -> int:
    """The CLI (module docstring); returns the exit code."""
    parser = argparse.ArgumentParser(prog="python -m sdpo_eval.discovery sample", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--recipe", required=True, help="an sdpo_<model> recipe (its reprompt block is used)")
    parser.add_argument("--problems", required=True, help="comma-separated problem names")
    parser.add_argument("--budget", type=int, required=True, help="judged attempts per problem")
    parser.add_argument("--runs", required=True, help="comma-separated method:seed, e.g. best_of_k:1,reprompt:1")
    parser.add_argument("--out-dir", type=Path, required=True, help="one sub-folder per method and seed")
    parser.add_argument("--keep-going", action="store_true", help="spend the whole budget (base rates)")
    add_flags(parser, EngineOptions)
    deprecated_alias(parser, "--backend", "--engine")
    parser.add_argument("--vllm-kv-cache-bytes", type=int, default=None,
                        help="vLLM: a fixed KV cache (for sharing the GPU with training runs)")
    parser.add_argument("overrides", nargs="*", help="Hydra overrides of the recipe (after --)")
    args = parser.parse_args(argv)
    try:
        runs = parse_runs(args.runs)
        if args.budget < 1:
            raise ValueError(f"error: --budget must be >= 1, got {args.budget}")
        out_dir = args.out_dir.expanduser()
        unwritable = cli_checks.output_problem(out_dir, "--out-dir", folder=True)
        if unwritable:
            raise ValueError(unwritable)
        out_dir.mkdir(parents=True, exist_ok=True)
        problems = [p.strip() for p in args.problems.split(",") if p.strip()]
        setting = from_recipe(args.recipe, problems, args.overrides)
    except (ValueError, FileNotFoundError, OSError) as e:
        message = str(e)
        print(message if message.startswith("error:") else f"error: {message}", file=sys.stderr)
        return 2
    if cli_checks.report(setting.reward_problems):   # before any model loads: nothing would be judged
        return 3
    try:
        engine = _engine(setting.model, from_flags(EngineOptions, args), args.vllm_kv_cache_bytes)
    except EngineMissing as e:
        print(f"error: {e}", file=sys.stderr)
        return 3
    results = run_all(setting, engine, runs, args.budget, out_dir, not args.keep_going,
                      tokenizer=getattr(engine, "tokenizer", None))
    for r in results:
        print(json.dumps(r), flush=True)
    if isinstance(engine, VllmEngine):
        # vLLM 0.24's engine process kept the interpreter from exiting after every result was written (H100,
        # 2026-12-06: the job waited on a finished sampler until the call's end); the logs are closed by now
        sys.stderr.flush()
        os._exit(0)
    return 0


def _engine(model: str, options: EngineOptions, kv_cache_bytes: int | None) -> Engine:
    # composing the recipe imported verl, which touches CUDA: vLLM's engine process must be spawned, not forked
    # ("Cannot re-initialize CUDA in forked subprocess", seen on the H100 on 2026-12-06)
    os.environ.setdefault("VLLM_WORKER_MULTIPROC_METHOD", "spawn")
    if options.engine == "vllm" and kv_cache_bytes:
        return VllmEngine(ModelSpec.parse(model), gpu_memory_utilization=0.05,
                          extra={"kv_cache_memory_bytes": kv_cache_bytes, "enforce_eager": True})
    return load_engine(ModelSpec.parse(model), options)


if __name__ == "__main__":
    sys.exit(main())
