"""The worker's EMA teacher: the update lerps every parameter, and a checkpoint round trip restores it.

The worker is built without Ray or GPUs: its actor/ref engines are stand-ins holding real modules, and the
inner actor's own checkpointing is a recorder (verl's FSDP checkpointing is not under test here).
"""
from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from sdpo_ext.config import SDPOActorConfig, SDPOConfig, SDPOTeacherConfig
from sdpo_ext.worker import SDPOActorRolloutRefWorker


class RecordingActor:
    def __init__(self, module):
        self.engine = SimpleNamespace(module=module)
        self.saved, self.loaded = [], []

    def save_checkpoint(self, local_path, hdfs_path, global_step, max_ckpt_to_keep):
        self.saved.append(local_path)

    def load_checkpoint(self, local_path, hdfs_path, del_local_after_load):
        self.loaded.append(local_path)


def make_worker(rate=0.25):
    torch.manual_seed(0)
    student, teacher = torch.nn.Linear(4, 3), torch.nn.Linear(4, 3)
    worker = object.__new__(SDPOActorRolloutRefWorker)
    worker.role = "actor_rollout_ref"
    worker._rank = 0
    worker.actor = RecordingActor(student)
    worker.ref = SimpleNamespace(engine=SimpleNamespace(module=teacher))
    worker.sdpo_config = SDPOActorConfig(
        ppo_mini_batch_size=4, ppo_micro_batch_size_per_gpu=1, rollout_n=1, policy_loss={"loss_mode": "sdpo"},
        sdpo=SDPOConfig(teacher=SDPOTeacherConfig(mode="ema", update_rate=rate)),
    )
    return worker, student, teacher


def test_ema_update_moves_every_teacher_parameter_toward_the_policy():
    worker, student, teacher = make_worker(rate=0.25)
    before = {n: p.detach().clone() for n, p in teacher.named_parameters()}
    worker.sdpo_update_ema_teacher()
    for name, param in teacher.named_parameters():
        expected = 0.75 * before[name] + 0.25 * dict(student.named_parameters())[name].detach()
        torch.testing.assert_close(param.detach(), expected)


def test_checkpoint_round_trip_restores_the_ema_teacher(tmp_path):
    worker, student, teacher = make_worker()
    worker.sdpo_update_ema_teacher()
    saved = {n: p.detach().clone() for n, p in teacher.named_parameters()}
    worker.save_checkpoint(str(tmp_path), global_step=3)
    assert (tmp_path / "sdpo_teacher" / "rank_0.pt").exists() and worker.actor.saved == [str(tmp_path)]

    with torch.no_grad():  # a fresh process would start from the initial weights
        for p in teacher.parameters():
            p.zero_()
    worker.load_checkpoint(str(tmp_path))
    for name, param in teacher.named_parameters():
        torch.testing.assert_close(param.detach(), saved[name])
    assert worker.actor.loaded == [str(tmp_path)]


def test_resume_without_teacher_state_fails_loudly(tmp_path):
    worker, _, _ = make_worker()
    with pytest.raises(FileNotFoundError, match="EMA teacher state"):
        worker.load_checkpoint(str(tmp_path))
