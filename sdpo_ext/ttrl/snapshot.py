"""One rank's training state in host memory: the single protocol's initial state (`sdpo.ttrl.protocol=single`), which
the worker restores before each problem of the queue instead of reading verl's checkpoint files
(`SDPOActorRolloutRefWorker.sdpo_snapshot_initial_state` / `sdpo_restore_initial_state`). Pure: torch only.

Contract: `InitialState` holds what verl's FSDP checkpoint holds for one rank (model = the module's local parameter
and buffer shards; optimizer = its `state_dict()`; extra = the LR scheduler's `state_dict()` and the RNG states) plus
the EMA teacher's local shards, each as host copies that nothing else references; `restore_local_shards_` copies
saved shards back into a module's tensors where they live (device, dtype and offload placement unchanged), so a
restore never allocates parameters and never moves them. Host memory: one copy of the local shards (fp32 master
weights: 4 bytes a parameter), and as much again for the EMA teacher.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from itertools import chain
from typing import Any, Optional

import torch


@dataclass(frozen=True)
class InitialState:
    """One rank's state before any update, on the host."""

    actor: dict[str, torch.Tensor]  # the actor module's local parameter and buffer shards, by name
    optimizer: dict  # optimizer.state_dict(): Adam's per-parameter state (empty before the first step), param groups
    lr_scheduler: Optional[dict]  # lr_scheduler.state_dict(); None without a scheduler
    rng: dict  # the RNG states verl's checkpoint keeps (its get_rng_state)
    teacher: Optional[dict[str, torch.Tensor]]  # the EMA teacher's local shards (ema mode), else None


def host_copy(value: Any) -> Any:
    """A deep copy of a state dict with every tensor copied to the host (a DTensor stays a DTensor, its local shard on
    the host), sharing no storage with `value`: `optimizer.load_state_dict` keeps the tensors it is given where they
    already sit on the parameter's device, and Adam then updates them in place."""
    if isinstance(value, torch.Tensor):
        return value.detach().to("cpu", copy=True)
    if isinstance(value, dict):
        return {key: host_copy(item) for key, item in value.items()}
    if type(value) in (list, tuple):
        return type(value)(host_copy(item) for item in value)
    return copy.deepcopy(value)


def _local(tensor: torch.Tensor) -> torch.Tensor:
    """This rank's shard of an FSDP2 parameter (a DTensor), or the tensor itself."""
    return tensor.to_local() if hasattr(tensor, "to_local") else tensor


def _named_tensors(module: torch.nn.Module) -> dict[str, torch.Tensor]:
    return dict(chain(module.named_parameters(), module.named_buffers()))


def local_shards(module: torch.nn.Module) -> dict[str, torch.Tensor]:
    """Host copies of `module`'s local parameter and buffer shards, by name."""
    return {name: _local(tensor).detach().to("cpu", copy=True) for name, tensor in _named_tensors(module).items()}


def restore_local_shards_(module: torch.nn.Module, saved: dict[str, torch.Tensor]) -> None:
    """Copies `saved` (from `local_shards` of the same module) into the module's local shards, in place."""
    targets = _named_tensors(module)
    if targets.keys() != saved.keys():
        differ = sorted(set(targets) ^ set(saved))[:5]
        raise RuntimeError(f"error: the host snapshot does not match the module, e.g. {differ} (take the snapshot of "
                           f"this module: sdpo_snapshot_initial_state)")
    with torch.no_grad():
        for name, tensor in targets.items():
            _local(tensor).copy_(saved[name])
