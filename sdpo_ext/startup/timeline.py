"""A run's start-up as wall-clock marks: one stdout line per phase, the first time the phase is reached.

    sdpo_lean/startup <phase> <unix time, s> pid=<pid>

Ray forwards every actor's stdout to the driver's, so a run's stdout.log holds the marks of the TaskRunner (the
trainer) and of the worker processes together; `sdpo_eval.discovery.startup` turns them, with the launch time the
runner recorded, into seconds since launch per phase. The phases, in the order verl 0.9.1's v1 trainer reaches them:

    preflight_start     the driver: Python, verl and Hydra's composition are done; the start-up checks begin
    preflight_done      the start-up checks passed (`sdpo_ext.startup.checks`); Ray starts next
    runner_up           the first Ray process imported verl (the TaskRunner: `ray.init`, the actor's start and its
                        verl import are done; the plugin marks it, `sdpo_ext.plugin`)
    trainer_init        SDPOTrainer.__init__: the TaskRunner has printed and resolved the config and started
                        TransferQueue
    resource_pools      tokenizer and dataloader built; the worker group is about to be created
    actor_model_start   worker: init_model begins (the worker process is up, its imports done)
    actor_model_ready   worker: model loaded and wrapped (FSDP), optimizer built (verl's init_model, which also
                        builds the rollout's server adapter and the checkpoint engine, returned)
    reward_loop_ready   the reward loop's workers are up; the rollout (vLLM) servers start next
    rollout_servers_ready  the vLLM servers are up (engine, weights, KV cache, CUDA graphs unless eager)
    checkpoint_engine_ready  the weight-sync engine is built and the servers are asleep; a checkpoint loads next, if any
    init_done           the trainer's set-up is done
    train_begin         the first step starts (after a validation pass, where one runs)
    first_rollout_done  the first step's rollout and rewards are in (its old-log-prob pass begins)
    first_step_done     the first step (its actor update included) ended
"""
from __future__ import annotations

import os
import time

MARK = "sdpo_lean/startup"
PHASES = ("preflight_start", "preflight_done", "runner_up", "trainer_init", "resource_pools", "actor_model_start",
          "actor_model_ready", "reward_loop_ready", "rollout_servers_ready", "checkpoint_engine_ready", "init_done",
          "train_begin", "first_rollout_done", "first_step_done")
_seen: set[str] = set()


def mark(phase: str) -> None:
    """Print `phase`'s mark, once per process."""
    if phase not in PHASES:
        raise ValueError(f"unknown start-up phase {phase!r} (known: {', '.join(PHASES)})")
    if phase in _seen:
        return
    _seen.add(phase)
    print(f"{MARK} {phase} {time.time():.3f} pid={os.getpid()}", flush=True)


class MarkedAttribute:
    """An instance attribute whose first assignment marks `phase`: for a start-up step that verl's set-up ends with an
    assignment and no method we could override (`SDPOTrainer.reward_loop_manager`). Reads before the assignment raise
    AttributeError, as for a plain attribute."""

    def __init__(self, phase: str):
        if phase not in PHASES:
            raise ValueError(f"unknown start-up phase {phase!r} (known: {', '.join(PHASES)})")
        self.phase = phase

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        try:
            return obj.__dict__[self.name]
        except KeyError:
            raise AttributeError(self.name) from None

    def __set__(self, obj, value) -> None:
        mark(self.phase)
        obj.__dict__[self.name] = value
