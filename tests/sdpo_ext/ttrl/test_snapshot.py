"""sdpo_ext.ttrl.snapshot on a plain module with Adam and a schedule, mid-training (Adam's state not empty): a restore
puts weights, buffers, optimizer and schedule back exactly, and the snapshot shares no tensor with the live state, so
a second restore after more steps gives the same state again."""
from __future__ import annotations

import pytest
import torch

from sdpo_ext.ttrl.snapshot import InitialState, host_copy, local_shards, restore_local_shards_


def trained_module() -> tuple[torch.nn.Module, torch.optim.Optimizer, torch.optim.lr_scheduler.LRScheduler]:
    torch.manual_seed(0)
    module = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3))  # BatchNorm: trained buffers
    optimizer = torch.optim.AdamW(module.parameters(), lr=1e-2)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0 / (1 + step))
    step(module, optimizer, scheduler)
    return module, optimizer, scheduler


def step(module, optimizer, scheduler) -> None:
    module(torch.randn(8, 4)).square().mean().backward()
    optimizer.step()
    optimizer.zero_grad()
    scheduler.step()


def snapshot(module, optimizer, scheduler) -> InitialState:
    return InitialState(actor=local_shards(module), optimizer=host_copy(optimizer.state_dict()),
                        lr_scheduler=host_copy(scheduler.state_dict()), rng={}, teacher=None)


def restore(state: InitialState, module, optimizer, scheduler) -> None:
    restore_local_shards_(module, state.actor)
    optimizer.load_state_dict(host_copy(state.optimizer))
    scheduler.load_state_dict(host_copy(state.lr_scheduler))


def test_a_restore_mid_training_gives_the_snapshots_state_every_time():
    module, optimizer, scheduler = trained_module()
    state = snapshot(module, optimizer, scheduler)
    steps_from_snapshot = []
    for _ in range(2):
        for _ in range(3):
            step(module, optimizer, scheduler)
        restore(state, module, optimizer, scheduler)
        torch.manual_seed(1)
        step(module, optimizer, scheduler)
        steps_from_snapshot.append((snapshot(module, optimizer, scheduler),
                                    {k: v.clone() for k, v in module.state_dict().items()}))
    (first, first_weights), (second, second_weights) = steps_from_snapshot
    assert optimizer.state_dict()["state"][0]["step"].item() == 2  # one step before the snapshot, one after
    assert first_weights.keys() == second_weights.keys() and "1.running_mean" in first_weights
    for name, value in first_weights.items():
        torch.testing.assert_close(second_weights[name], value, rtol=0, atol=0, msg=name)
    for index, moments in first.optimizer["state"].items():
        for key, value in moments.items():
            torch.testing.assert_close(second.optimizer["state"][index][key], value, rtol=0, atol=0)
    assert first.lr_scheduler == second.lr_scheduler


def test_a_snapshot_of_another_module_is_refused():
    module, _, _ = trained_module()
    with pytest.raises(RuntimeError, match="does not match the module"):
        restore_local_shards_(module, local_shards(torch.nn.Linear(4, 3)))
