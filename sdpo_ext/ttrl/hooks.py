"""Set-TTRL through verl's dataloader and checkpoint hooks: `SDPOTrainer`'s mixin (thin glue over
`sdpo_ext.ttrl.problem_set`).

TTRL (`sdpo.ttrl.theorem`, `.theorems` or `.split`; one theorem is a set of one): the dataset is narrowed to the
set's rows, and each step's prompts come from `TTRLSet.draw` (the open problems, the batch kept at
`data.train_batch_size` prompts) instead of verl's dataloader, through `_next_train_batch`, the hook that fetches a
step's prompts (not `_fetch_one_gen_batch`: the draw spreads a step's prompts over the open problems, so it needs
them all at once). The run's length comes from the budgets (`TTRLSet.step_limit` replaces
trainer.total_training_steps). `_ttrl_observe` counts each step's judged samples (`sdpo_ext.judged.JudgedSample`) and
ends the run after the step in which the last open problem retired.

Single protocol (`sdpo.ttrl.protocol=single`, `sdpo_ext.ttrl.queue`): the set's problems are trained one at a time
in one run, each from the run's initial state. Before the first step the actor's state (weights, optimizer, LR
schedule, RNG, and the EMA teacher) is saved once with verl's checkpoint save (`sdpo_save_initial_state`, kept out of
verl's rotation; a resumed run reads it) and kept in the workers' host memory (`sdpo_snapshot_initial_state`); when a
problem leaves the queue, `on_step_end` restores it from that snapshot (`sdpo_restore_initial_state`) before verl's
own weight sync in the same hook, so the rollout engine serves the reset weights before the next problem's first
rollout. Workers that hold no snapshot (a resumed process) load the files with verl's checkpoint load instead and
snapshot the state right after it, so the later resets come from memory (the host memory this takes:
`SDPOActorRolloutRefWorker.sdpo_snapshot_initial_state`). The optimizer's schedule is one problem's
(`TTRLSet.step_limit` of a set of one), as in a fresh `sdpo.ttrl.theorem=` run; the run's length is the queue's. Each
switch is printed as `sdpo_lean/ttrl_switch {json}` (from, to, step, reset_s) and logged as `sdpo_lean/ttrl_reset_s`.
Departure from a fresh run per problem: the rollout engine's sampler is not reseeded (vLLM offers no reseed of a
running engine), so a problem's samples differ from a fresh run's with the same seed, with the same distribution.

Checkpoints: the attempt log's run id (every run) and the set's state (`TTRL_SET_FILE`, TTRL only) are written into
verl's step folder before verl's own files and read back on resume, where the set then also counts the attempts the
interrupted process logged after its checkpoint. verl's dataloader state (data.pt) is still saved but plays no part
in TTRL, the dataloader being unused. Without `sdpo.ttrl` every hook is verl's.

verl is imported inside the hooks, not at the top: verl's plugin loading imports sdpo_ext.trainer, which imports this
module, so a process importing this module first would otherwise lose the trainer's registration.
"""
from __future__ import annotations

import json
import logging
import os
import time
import uuid
from typing import TYPE_CHECKING

import numpy as np
from omegaconf import open_dict

from sdpo_ext.ttrl.problem_set import TTRLSet
from sdpo_ext.ttrl.queue import ProblemQueue

if TYPE_CHECKING:
    from sdpo_attempts.log import AttemptLog
    from sdpo_ext.config import RunConfig
    from sdpo_ext.judged import JudgedSample

logger = logging.getLogger(__name__)

TTRL_SET_FILE = "sdpo_ttrl_set.json"  # the set's state, in verl's global_step_<n> checkpoint folder
INITIAL_STATE_DIR = "sdpo_initial_state"  # the actor's state before any update (single protocol), in default_local_dir
RESET_CONTENTS = ("model", "optimizer", "extra")  # what a reset restores: weights, Adam, LR schedule and RNG
SWITCH_MARK = "sdpo_lean/ttrl_switch"  # printed per problem switch: SWITCH_MARK {"from", "to", "step", "reset_s"}


class TTRLHooks:
    """verl trainer hooks for set-TTRL and the checkpointed run state; mixed in before verl's trainer class, whose
    `config`, `global_steps`, `total_training_steps` and `train_dataset` it reads and sets. The host sets
    `run_config` before verl's `__init__` (which builds the dataloader) and `attempt_log` (None: no attempt log)."""

    ttrl_set: TTRLSet | None = None  # the TTRL set's bookkeeping; built with the dataset (`_init_dataloader`)
    ttrl_queue: ProblemQueue | None = None  # the single protocol's order over the set
    _ttrl_switch: dict | None = None  # the switch of this step, printed (with its reset) at the step's end
    _ttrl_cut_short_at: int | None = None  # the step after which the set ended the run before its step limit
    run_config: RunConfig | None
    attempt_log: AttemptLog | None

    # ------------------------------------------------------------------ checkpoints
    def _step_folder(self) -> str:
        """verl's checkpoint folder for the current step under trainer.default_local_dir."""
        return os.path.join(self.config.trainer.default_local_dir, f"global_step_{self.global_steps}")

    def _save_checkpoint(self):
        # ours first: verl writes latest_checkpointed_iteration.txt last, so a folder it resumes from has them
        folder = self._step_folder()
        if self.attempt_log is not None:
            self.attempt_log.save_run_id(folder)
        if self.ttrl_set is not None:
            os.makedirs(folder, exist_ok=True)
            state = self.ttrl_set.state_dict(self.global_steps)
            if self.ttrl_queue is not None:
                state["queue"] = self.ttrl_queue.state_dict()
            with open(os.path.join(folder, TTRL_SET_FILE), "w") as handle:
                json.dump(state, handle)
        super()._save_checkpoint()

    def _initial_state_dir(self) -> str:
        return os.path.abspath(os.path.join(self.config.trainer.default_local_dir, INITIAL_STATE_DIR, "actor"))

    def _load_checkpoint(self):
        super()._load_checkpoint()
        if self.global_steps == 0:
            if self.ttrl_queue is not None:  # a fresh run: the state every problem of the queue starts from
                start = time.perf_counter()
                self.actor_rollout_wg.sdpo_save_initial_state(self._initial_state_dir())
                self.actor_rollout_wg.sdpo_snapshot_initial_state()
                logger.warning("TTRL queue: initial state saved to %s in %.1f s", self._initial_state_dir(),
                               time.perf_counter() - start)
            return
        trainer = self.config.trainer
        folder = os.path.abspath(trainer.resume_from_path if trainer.resume_mode == "resume_path"
                                 else self._step_folder())
        if self.attempt_log is not None and not self.attempt_log.resume_from(folder):
            logger.warning("checkpoint %s holds no attempt-log run id; attempts restart at 1 under run %s",
                           folder, self.attempt_log.run_id)
        if self.ttrl_set is not None:
            self._restore_ttrl_set(folder)

    def _restore_ttrl_set(self, folder: str) -> None:
        """The set's counts saved with the checkpoint, then the attempts the interrupted process logged after it
        (judged attempts are spent budget and a proof found is found, as `AttemptLog.resume_from` counts them)."""
        path = os.path.join(folder, TTRL_SET_FILE)
        saved_step, state = None, None
        if os.path.exists(path):
            with open(path) as handle:
                state = json.load(handle)
            saved_step = self.ttrl_set.load_state_dict(state)
        else:
            logger.warning("checkpoint %s holds no TTRL set state; rebuilding it from the attempt log", folder)
        records = self.attempt_log.run_records(after_step=saved_step) if self.attempt_log is not None else []
        if self.ttrl_queue is None:
            self.ttrl_set.observe_records(records)
            if self.ttrl_set.finished:
                self.total_training_steps = self.global_steps  # nothing left to train on: fit() runs no step
            return
        if state is None or "queue" not in state:
            raise ValueError(f"error: checkpoint {folder} holds no TTRL queue state (it was not saved by a "
                             f"sdpo.ttrl.protocol=single run; resume with the protocol it was saved with)")
        self.ttrl_queue.load_state_dict(state["queue"])
        self.ttrl_queue.replay(records)
        self.total_training_steps = self.global_steps + self.ttrl_queue.steps_left()
        if self.ttrl_queue.needs_reset:  # verl's weight sync follows at the end of the trainer's set-up
            self._switch_problem({"from": self.ttrl_queue.weights_of, "to": self.ttrl_queue.current,
                                  "step": self.global_steps, "resumed": True})

    # ------------------------------------------------------------------ TTRL set
    def _init_dataloader(self):
        """verl's dataloaders; in TTRL mode over the set's rows only, with the set's bookkeeping and step limit."""
        ttrl = self.run_config.ttrl if self.run_config is not None else None
        if ttrl is None or not ttrl.active:
            return super()._init_dataloader()
        from sdpo_ext.ttrl.dataset import TheoremFilterDataset, ttrl_data_config  # imports verl: see the docstring

        with open_dict(self.config):
            self.config.data.sdpo_ttrl = ttrl_data_config(ttrl, self.config.data)
        super()._init_dataloader()
        if not isinstance(self.train_dataset, TheoremFilterDataset):
            raise ValueError("error: sdpo.ttrl needs data.custom_cls = sdpo_ext.ttrl.dataset.TheoremFilterDataset "
                             "(the task parts set it: data.custom_cls.path=pkg://sdpo_ext.ttrl.dataset)")
        self.ttrl_set = TTRLSet(self.train_dataset.problem_names(), budget=ttrl.max_attempts,
                                stop_on_success=ttrl.stop_on_success, seed=int(self.config.data.get("seed", None) or 0))
        prompts, n = self.config.data.train_batch_size, self.config.actor_rollout_ref.rollout.n
        steps = schedule_steps = self.ttrl_set.step_limit(prompts, n)
        if ttrl.protocol == "single":
            self._check_resettable()
            self.ttrl_queue = ProblemQueue(self.ttrl_set, prompts, n)
            schedule_steps = self.ttrl_queue.steps_per_problem  # each problem's schedule is a fresh run's
            steps = self.ttrl_queue.steps_left()
        # the whole run is one epoch of verl's loop (prompts come from the set, not from the dataloader's epochs)
        self.total_training_steps = self.steps_per_epoch = steps
        with open_dict(self.config):
            self.config.actor_rollout_ref.actor.optim.total_training_steps = schedule_steps * self.parameter_sync_step
        logger.warning("TTRL (%s protocol): %d problems, budget %d attempts each, at most %d steps "
                       "(trainer.total_training_steps=%s replaced)", ttrl.protocol, len(self.ttrl_set.problems),
                       ttrl.max_attempts, steps, self.config.trainer.get("total_training_steps", None))

    def _check_resettable(self) -> None:
        """The single protocol restores weights, optimizer and extra state (LR schedule, RNG) from verl's checkpoint:
        a checkpoint without one of them would carry it from one problem into the next."""
        checkpoint = self.config.actor_rollout_ref.actor.get("checkpoint", None) or {}
        for key in ("save_contents", "load_contents"):
            missing = sorted(set(RESET_CONTENTS) - set(checkpoint.get(key, RESET_CONTENTS)))
            if missing:
                raise ValueError(f"error: sdpo.ttrl.protocol=single resets the actor from its checkpoint, but "
                                 f"actor_rollout_ref.actor.checkpoint.{key} lacks {missing} (keep verl's default "
                                 f"{list(RESET_CONTENTS)})")

    def _next_train_batch(self, num_prompts: int | None = None):
        """verl's prompt fetch for one step; in TTRL mode the set's draw from its open problems."""
        if self.ttrl_set is None:
            return super()._next_train_batch(num_prompts)
        from verl.utils import tensordict_utils as tu  # see the module docstring

        num_prompts, n = num_prompts or self.config.data.train_batch_size, self.config.actor_rollout_ref.rollout.n
        if self.ttrl_queue is None:
            names = self.ttrl_set.draw(num_prompts, n, self.global_steps)
        else:
            names = self.ttrl_queue.draw(num_prompts, n, self.global_steps)
            if self.config.trainer.critic_warmup <= self.global_steps:  # verl updates the actor in this step
                self.ttrl_queue.trained(self.ttrl_queue.current)
        batch_dict = self.train_dataset.prompt_batch(names)
        batch_dict["uid"] = np.array([str(uuid.uuid4()) for _ in names], dtype=object)  # one GRPO group per prompt
        batch = tu.get_tensordict(batch_dict)
        tu.assign_non_tensor_data(batch, "global_steps", self.global_steps)
        return batch

    def _ttrl_observe(self, samples: list[JudgedSample], metrics: dict) -> None:
        """Counts the step's judged samples (padding left out) into the set; after the step in which the last open
        problem retired the run ends (verl's loop stops once global_steps passes total_training_steps)."""
        for sample in samples:
            self.ttrl_set.observe(sample.problem, valid=sample.valid, infra=sample.infra)
        metrics.update(self.ttrl_set.metrics())
        metrics["sdpo_lean/ttrl_batch_problems"] = len({sample.problem for sample in samples})
        if self.ttrl_queue is not None:
            self._ttrl_queue_observe(metrics)
        elif self.ttrl_set.finished:
            self._end_after_this_step(metrics)

    def _ttrl_queue_observe(self, metrics: dict) -> None:
        """The single protocol after a step's samples were counted: the queue moves on when its problem left (the
        reset waits for the step's end, after the update), and the run ends with the queue."""
        left = self.ttrl_queue.advance()
        metrics.update(self.ttrl_queue.metrics())
        if left is None:
            return
        self._ttrl_switch = {"from": left, "to": self.ttrl_queue.current, "step": self.global_steps}
        if self.ttrl_queue.finished:
            self._end_after_this_step(metrics)
        else:
            self.total_training_steps = self.global_steps + self.ttrl_queue.steps_left()

    def _end_after_this_step(self, metrics: dict) -> None:
        """Nothing is left to train on: verl's loop stops after this step (once global_steps passes
        total_training_steps); a run ended before its step limit gets its final checkpoint and validation in
        `on_step_end`."""
        logger.warning("TTRL: no problem left at step %d (%d of %d solved); stopping after this step",
                       self.global_steps, len(self.ttrl_set.solved()), len(self.ttrl_set.problems))
        metrics["sdpo_lean/ttrl_end_step"] = self.global_steps
        if self.global_steps < self.total_training_steps:
            self._ttrl_cut_short_at = self.global_steps
        self.total_training_steps = self.global_steps

    def _switch_problem(self, switch: dict) -> float | None:
        """Prints the switch and, when the weights carry another problem's updates, restores the actor's initial
        state (`_restore_initial_state`; the caller's verl hook syncs the rollout engine next). Returns the reset's
        seconds (None: no reset needed)."""
        reset_s = None
        if self.ttrl_queue.needs_reset:
            start = time.perf_counter()
            self._restore_initial_state(switch["to"])
            self.ttrl_queue.reset_done()
            reset_s = round(time.perf_counter() - start, 3)
        print(f"{SWITCH_MARK} {json.dumps({**switch, 'reset_s': reset_s})}", flush=True)
        return reset_s

    def _restore_initial_state(self, problem: str | None) -> None:
        """The actor's initial state from the workers' host-memory snapshot; where a worker holds none (a resumed
        process), from the initial state's files with verl's checkpoint load, then snapshotted (the state is the
        initial one again), so the next resets come from memory."""
        restored = self.actor_rollout_wg.sdpo_restore_initial_state()  # one answer per rank (Dispatch.ONE_TO_ALL)
        if all(restored if isinstance(restored, list) else [restored]):
            return
        if not os.path.isdir(self._initial_state_dir()):
            raise FileNotFoundError(f"error: the TTRL queue's initial state {self._initial_state_dir()} is gone, "
                                    f"so problem {problem!r} cannot start from it (start the run anew: "
                                    f"trainer.resume_mode=disable, or a new trainer.default_local_dir)")
        self.actor_rollout_wg.load_checkpoint(self._initial_state_dir(), None, False)
        self.actor_rollout_wg.sdpo_snapshot_initial_state()

    def on_step_end(self):
        """The single protocol's switch first (before verl's weight sync in the same hook), then verl's step end;
        then, for a run the set ended early, what verl's loop skips at its last step because its
        is_last_step was computed before the step, when the end was not yet known: the final checkpoint, and the final
        validation (when test_freq > 0), each only where verl's own frequency did not already do it."""
        if self._ttrl_switch is not None:
            reset_s = self._switch_problem(self._ttrl_switch)
            self._ttrl_switch = None
            if reset_s is not None:  # verl merges what on_step_end leaves here into this step's logged metrics
                self._pending_sync_metrics = {**(getattr(self, "_pending_sync_metrics", None) or {}),
                                              "sdpo_lean/ttrl_reset_s": reset_s}
        super().on_step_end()
        if self._ttrl_cut_short_at != self.global_steps:
            return
        trainer = self.config.trainer
        if trainer.save_freq > 0 and self.global_steps % trainer.save_freq != 0:
            self._save_checkpoint()
        if trainer.test_freq > 0 and self.global_steps % trainer.test_freq != 0:
            self.on_validate_begin()
            val_metrics = self._validate()
            self.on_validate_end()
            # verl merges what on_step_end leaves here into this step's logged metrics (_consume_sync_metrics)
            self._pending_sync_metrics = {**(getattr(self, "_pending_sync_metrics", None) or {}), **val_metrics}
