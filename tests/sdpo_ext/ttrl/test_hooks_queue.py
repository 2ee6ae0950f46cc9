"""The single protocol (`sdpo.ttrl.protocol=single`) through SDPOTrainer's real hooks on CPU, as ttrl/test_hooks drives
them (the toy recipes composed as main_ppo composes them, TransferQueue a dict, a made-up rollout); the worker group
records what the trainer asks of it, and verl's weight sync is a recorded call too.

Checks: one problem a step, in the set's order, with one prompt (a fresh `sdpo.ttrl.theorem=` run's batch and LR
schedule); the initial state is saved (files and host-memory snapshot) before the first step and restored, before
verl's weight sync, exactly when a problem follows one whose updates the weights carry: from the snapshot, or, where
the workers hold none (a resumed process), with verl's checkpoint load and a snapshot right after it; a switch line
per problem; the run ends with the queue; a run killed mid-queue resumes at the open problem with the finished ones
kept, and resets when the checkpoint's weights are another problem's; the shared protocol never saves or restores.
"""
from __future__ import annotations

import json
import os

import pytest
from verl.trainer.ppo.v1.trainer_sync import PPOTrainerSync

from sdpo_ext.ttrl.hooks import INITIAL_STATE_DIR, SWITCH_MARK
from tests.sdpo_ext.test_trainer_prepare import FakeBatch, FakeTQ
from tests.sdpo_ext.ttrl.test_hooks import FOUR, hooks, log_of, make, step, toy_dir  # noqa: F401

SINGLE = (f"sdpo.ttrl.theorems=[{','.join(FOUR)}]", "sdpo.ttrl.protocol=single")


class RecordingWorkers:
    """The actor worker group's calls the queue makes, in order, with verl's weight sync in the same list; a
    Dispatch.ONE_TO_ALL call answers one value per rank (two ranks here), as Ray's worker group does."""

    def __init__(self, calls: list):
        self.calls = calls
        self.snapshot_held = False  # a new process's workers hold no snapshot

    def sdpo_save_initial_state(self, path):
        os.makedirs(path, exist_ok=True)  # verl's checkpoint files go there
        self.calls.append(("save_initial", path))

    def sdpo_snapshot_initial_state(self):
        self.snapshot_held = True
        self.calls.append(("snapshot",))
        return [None, None]

    def sdpo_restore_initial_state(self):
        self.calls.append(("restore", self.snapshot_held))
        return [self.snapshot_held] * 2

    def load_checkpoint(self, path, hdfs_path=None, del_local_after_load=False):
        self.calls.append(("load", path))


@pytest.fixture
def queued(make, monkeypatch):  # noqa: F811
    calls: list = []
    monkeypatch.setattr(PPOTrainerSync, "on_step_end", lambda self: calls.append(("weight_sync", self.global_steps)))
    monkeypatch.setattr(PPOTrainerSync, "_load_checkpoint", lambda self: setattr(self, "global_steps", 0))
    monkeypatch.setattr(PPOTrainerSync, "_save_checkpoint", lambda self: None)

    def build(**kwargs):
        trainer = make(ttrl=SINGLE, **kwargs)
        trainer.actor_rollout_wg = RecordingWorkers(calls)
        return trainer

    return build, calls


def switches(capsys) -> list[dict]:
    return [json.loads(line.split(" ", 1)[1]) for line in capsys.readouterr().out.splitlines()
            if line.startswith(SWITCH_MARK)]


def test_the_queue_trains_one_problem_at_a_time_from_the_initial_state(queued, monkeypatch, capsys):
    build, calls = queued
    trainer = build(budget=8)  # n=4: two steps a problem unless solved
    assert trainer.config.data.train_batch_size == 1
    assert trainer.ttrl_queue.steps_per_problem == 4  # a fresh theorem run's limit: 2 x ceil(8 / 4)
    assert trainer.config.actor_rollout_ref.actor.optim.total_training_steps == 4  # one problem's schedule
    assert trainer.total_training_steps == 4 * len(FOUR)
    trainer._load_checkpoint()
    initial = calls[0][1]
    assert calls == [("save_initial", initial), ("snapshot",)] and initial.endswith(f"{INITIAL_STATE_DIR}/actor")

    drawn = []
    verdicts = {"toy_mul_6_7": "valid"}  # solved at its first step; the others spend their budget of 8
    while trainer.global_steps < trainer.total_training_steps:
        names, _, _ = step(trainer, monkeypatch, lambda name, j: verdicts.get(name, "lean_error"))
        drawn.append(names)
        trainer.on_step_end()
    assert drawn == [[FOUR[0]], [FOUR[0]], [FOUR[1]], [FOUR[2]], [FOUR[2]], [FOUR[3]], [FOUR[3]]]
    assert trainer.global_steps == trainer.total_training_steps == 7  # the run ended with the queue
    # each reset (from the snapshot) comes before verl's weight sync of the step that ended a problem; none after the
    # last one
    memory = ("restore", True)
    assert calls[2:] == [("weight_sync", 1), memory, ("weight_sync", 2), memory, ("weight_sync", 3),
                         ("weight_sync", 4), memory, ("weight_sync", 5), ("weight_sync", 6), ("weight_sync", 7)]
    moves = switches(capsys)
    assert [(s["from"], s["to"], s["step"]) for s in moves] == [
        (FOUR[0], FOUR[1], 2), (FOUR[1], FOUR[2], 3), (FOUR[2], FOUR[3], 5), (FOUR[3], None, 7)]
    assert all(s["reset_s"] >= 0 for s in moves[:3]) and moves[3]["reset_s"] is None
    assert trainer.ttrl_set.solved() == ["toy_mul_6_7"]
    assert [r["problem"] for r in log_of(trainer)][::4] == [name for names in drawn for name in names]


def test_a_run_without_updates_never_resets(queued, monkeypatch, capsys):
    build, calls = queued
    trainer = build(budget=4, extra=("trainer.critic_warmup=1000000000",))  # verl's no-update run
    trainer._load_checkpoint()
    while trainer.global_steps < trainer.total_training_steps:
        step(trainer, monkeypatch)
        trainer.on_step_end()
    assert [c for c in calls if c[0] in ("load", "restore")] == [] and len(switches(capsys)) == len(FOUR)


def test_a_run_killed_mid_queue_resumes_at_the_open_problem(queued, make, monkeypatch, tmp_path):  # noqa: F811
    build, calls = queued
    first = build(budget=8)
    first._load_checkpoint()
    step(first, monkeypatch, lambda name, j: "valid")  # problem 0 solved at step 1
    monkeypatch.setattr(PPOTrainerSync, "_save_checkpoint", lambda self: None)
    first._save_checkpoint()  # verl checkpoints step 1 before on_step_end: its weights carry problem 0's update
    first.on_step_end()
    step(first, monkeypatch)  # problem 1's first step judged, then the process dies before the next checkpoint

    resumed = build(budget=8)
    calls.clear()
    monkeypatch.setattr(PPOTrainerSync, "_load_checkpoint", lambda self: setattr(self, "global_steps", 1))
    os.rename(resumed._initial_state_dir(), f"{resumed._initial_state_dir()}.away")
    with pytest.raises(FileNotFoundError, match="initial state .* is gone"):
        build(budget=8)._load_checkpoint()
    os.rename(f"{resumed._initial_state_dir()}.away", resumed._initial_state_dir())
    calls.clear()
    resumed._load_checkpoint()
    queue = resumed.ttrl_queue
    assert (queue.current, queue.problem_steps) == (FOUR[1], 1) and resumed.ttrl_set.solved() == [FOUR[0]]
    # the checkpoint's weights carry problem 0's update: reset before verl's sync at the end of its set-up; the new
    # process's workers hold no snapshot, so from the files, then snapshotted for the next resets
    assert calls == [("restore", False), ("load", resumed._initial_state_dir()), ("snapshot",)]
    assert queue.weights_of is None
    assert resumed.total_training_steps == 1 + 3 + 2 * 4
    names, _, _ = step(resumed, monkeypatch, lambda name, j: "valid")
    assert names == [FOUR[1]] and resumed.ttrl_set.problems[FOUR[1]].attempts == 8
    calls.clear()
    resumed.on_step_end()  # problem 1 solved: the next reset comes from the snapshot
    assert calls == [("restore", True), ("weight_sync", 2)]


def test_the_shared_protocol_never_saves_or_restores_an_initial_state(make, monkeypatch):  # noqa: F811
    calls: list = []
    monkeypatch.setattr(PPOTrainerSync, "on_step_end", lambda self: calls.append("weight_sync"))
    monkeypatch.setattr(PPOTrainerSync, "_load_checkpoint", lambda self: setattr(self, "global_steps", 0))
    trainer = make(budget=4)
    trainer.actor_rollout_wg = RecordingWorkers(calls)
    assert trainer.ttrl_queue is None and trainer.config.data.train_batch_size == len(FOUR)
    trainer._load_checkpoint()
    while trainer.global_steps < trainer.total_training_steps:
        names, _, _ = step(trainer, monkeypatch)
        assert sorted(names) == sorted(FOUR)  # every problem in every step, as before
        trainer.on_step_end()
    assert calls == ["weight_sync"]


def test_a_checkpoint_without_the_optimizer_cannot_reset_the_queue(make):  # noqa: F811
    with pytest.raises(ValueError, match=r"checkpoint.save_contents lacks \['extra', 'optimizer'\]"):
        make(ttrl=SINGLE, extra=("actor_rollout_ref.actor.checkpoint.save_contents=[model]",))


def test_verls_own_fit_loop_runs_the_queue_and_syncs_the_reset_weights_before_each_new_problem(queued, monkeypatch,
                                                                                                tmp_path):
    """verl's PPOTrainer.fit itself with the device work of a step left out: the queue's steps and no more, each
    switch's reset before verl's weight sync of the same step's end, the reset logged in that step's metrics."""
    from verl.trainer.ppo.v1 import trainer_base

    from sdpo_ext.startup import timeline

    build, calls = queued
    monkeypatch.setenv("VERL_FILE_LOGGER_PATH", str(tmp_path / "metrics.jsonl"))
    monkeypatch.setattr(timeline, "_seen", set())
    trainer = build(budget=8, extra=("trainer.val_before_train=false",))
    trainer._init_dump_executor()
    drawn = []

    def device_free_step(metrics, timing_raw):  # PPOTrainer.step's driver hooks, without generation and update
        names, step_metrics, _ = hooks(trainer, monkeypatch, lambda name, j: "valid" if name != FOUR[0] else
                                       "lean_error")
        drawn.append(names)
        metrics.update(step_metrics)
        return FakeBatch(keys=[], partition_id="train", tags=[])

    monkeypatch.setattr(trainer, "step", device_free_step)
    monkeypatch.setattr(trainer, "_compute_metrics", lambda *args, **kwargs: None)  # reads the batch from the TQ
    monkeypatch.setattr(trainer_base, "tq", FakeTQ(None))
    trainer_base.tq.kv_clear = lambda keys, partition_id: None
    trainer._load_checkpoint()
    trainer.fit(agent_loop_manager=None)
    # problem 0 spends its budget in 2 steps, the other three are solved in one step each
    assert drawn == [[FOUR[0]], [FOUR[0]], [FOUR[1]], [FOUR[2]], [FOUR[3]]] and trainer.global_steps == 6
    initial = trainer._initial_state_dir()
    memory = ("restore", True)
    assert calls == [("save_initial", initial), ("snapshot",), ("weight_sync", 1), memory, ("weight_sync", 2),
                     memory, ("weight_sync", 3), memory, ("weight_sync", 4), ("weight_sync", 5)]
    logged = [json.loads(line) for line in open(tmp_path / "metrics.jsonl")]
    assert [row["step"] for row in logged] == [1, 2, 3, 4, 5]
    assert ["sdpo_lean/ttrl_reset_s" in row["data"] for row in logged] == [False, True, True, True, False]
    assert logged[-1]["data"]["sdpo_lean/ttrl_end_step"] == 5
