"""A run's start-up as wall-clock marks: one stdout line per phase, the first time the phase is reached.

    sdpo_lean/startup <phase> <unix time, s> pid=<pid>

Ray forwards every actor's stdout to the driver's, so a run's stdout.log holds the marks of the TaskRunner (the
trainer) and of the worker processes together; `sdpo_eval.discovery.startup` turns them, with the launch time the
runner recorded, into seconds since launch per phase. The phases, in the order verl 0.9.1's v1 trainer reaches them:

    preflight_start     the driver: Python, verl and Hydra's composition are done; the start-up checks begin
    preflight_done      the start-up checks passed (`sdpo_ext.startup.checks`); Ray starts next
    trainer_init        SDPOTrainer.__init__: Ray and the TaskRunner actor are up
    resource_pools      tokenizer and dataloader built; the worker group is about to be created
    actor_model_start   worker: init_model begins (the worker process is up, its imports done)
    actor_model_ready   worker: model loaded and wrapped (FSDP), optimizer built
    init_done           reward loop, vLLM servers (engine, KV cache, CUDA graphs unless eager), weight sync ready
    train_begin         the first step starts (after a validation pass, where one runs)
    first_rollout_done  the first step's rollout and rewards are in (its old-log-prob pass begins)
    first_step_done     the first step (its actor update included) ended
"""
from __future__ import annotations

import os
import time

MARK = "sdpo_lean/startup"
PHASES = ("preflight_start", "preflight_done", "trainer_init", "resource_pools", "actor_model_start",
          "actor_model_ready", "init_done", "train_begin", "first_rollout_done", "first_step_done")
_seen: set[str] = set()


def mark(phase: str) -> None:
    """Print `phase`'s mark, once per process."""
    if phase not in PHASES:
        raise ValueError(f"unknown start-up phase {phase!r} (known: {', '.join(PHASES)})")
    if phase in _seen:
        return
    _seen.add(phase)
    print(f"{MARK} {phase} {time.time():.3f} pid={os.getpid()}", flush=True)
