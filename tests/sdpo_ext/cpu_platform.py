"""A CPU platform for verl 0.9.1's platform layer (`verl.plugin.platform`), so that the real worker
(`sdpo_ext.worker.SDPOActorRolloutRefWorker`, FSDP engine) runs in one process on CPU: no Ray, no GPU, no vLLM.

Test-only. verl ships CUDA/NPU/ROCm platforms and no CPU one; this subclass answers "cpu" / "gloo" and makes the
memory, profiler and NVTX hooks no-ops. `install_cpu_platform()` sets it with `set_platform` and writes the
single-process distributed environment a verl `Worker` reads (rank 0 of world 1, a free local port).

What else verl 0.9.1 needs on CPU, all from this side (no verl code is patched):
- `current_device()` returns torch.device("cpu"): verl passes it to `.to()`, `torch.device()` and FSDP's device_id;
- `VERL_ENGINE_DEVICE=cuda`: the FSDP engines are registered for "cuda" and "npu" only;
- the gloo process group is opened before verl's (verl asks for "cpu:gloo,cpu:gloo", which torch rejects);
- `CPU_CONFIG_OVERRIDES`: FSDP2 instead of FSDP1, and the no-op rollout `NoRollout` (no vLLM).
"""
from __future__ import annotations

import os
import socket
from contextlib import contextmanager
from types import ModuleType
from typing import Any, Optional

import torch
from verl.plugin.platform import PlatformBase, platform_manager, set_platform
from verl.workers.rollout import base as rollout_base

NO_ROLLOUT = "no_rollout"
"""`actor_rollout_ref.rollout.name` of the stand-in rollout (`NoRollout`)."""


CPU_CONFIG_OVERRIDES = (
    # FSDP1 cannot run here: verl wraps with sync_module_states=True, which torch refuses for CPU parameters
    # (torch/distributed/fsdp/_init_utils.py:_check_module_states_for_sync_module_states). FSDP2 (fully_shard) runs.
    "actor_rollout_ref.actor.strategy=fsdp2",
    "actor_rollout_ref.ref.strategy=fsdp2",
    f"actor_rollout_ref.rollout.name={NO_ROLLOUT}",
)
"""Hydra overrides a recipe needs for the worker to run on CPU (after `install_cpu_platform`)."""


def _zero(*args, **kwargs) -> int:
    return 0


def _nothing(*args, **kwargs) -> None:
    return None


def _cpu_device_module() -> ModuleType:
    """torch.cpu plus what verl and the benchmark call on `get_torch_device()` and torch.cpu lacks: memory
    statistics (0 or {}: nothing is accounted on CPU), `mem_get_info` ((0, 0)), cache and IPC hooks (no-ops), the
    device name ("CPU"), and the RNG state (torch's global one)."""
    module = ModuleType("cpu_device_module")
    module.__dict__.update({k: v for k, v in vars(torch.cpu).items() if not k.startswith("__")})
    for name in ("memory_allocated", "memory_reserved", "max_memory_allocated", "max_memory_reserved"):
        setattr(module, name, _zero)
    for name in ("empty_cache", "ipc_collect", "reset_peak_memory_stats"):
        setattr(module, name, _nothing)
    module.memory_stats = lambda *args, **kwargs: {}
    module.mem_get_info = lambda *args, **kwargs: (0, 0)
    module.get_device_name = lambda *args, **kwargs: "CPU"  # verl's MFU: unknown device -> peak FLOPS inf
    module.get_rng_state = lambda *args, **kwargs: torch.get_rng_state()
    module.set_rng_state = lambda state, *args, **kwargs: torch.set_rng_state(state)
    return module


class PlatformCPU(PlatformBase):
    """device "cpu", backend "gloo"; memory, profiler and NVTX hooks do nothing."""

    def __init__(self):
        self._device_module = _cpu_device_module()

    @property
    def device_name(self) -> str:
        return "cpu"

    @property
    def vendor_name(self) -> str:
        return "cpu"

    @property
    def device_module(self) -> ModuleType:
        return self._device_module

    def is_available(self) -> bool:
        return True

    def current_device(self) -> torch.device:
        """torch.device("cpu"), not the int index the base class names: verl passes this value straight to
        `tensor.to(...)`, `torch.device(...)` and FSDP's `device_id`, where an int means accelerator index."""
        return torch.device("cpu")

    def device_count(self) -> int:
        return 1

    def set_device(self, device_index: int) -> None:
        return None

    def synchronize(self, device_index: Optional[int] = None) -> None:
        return None

    def manual_seed(self, seed: int) -> None:
        torch.manual_seed(seed)

    def manual_seed_all(self, seed: int) -> None:
        torch.manual_seed(seed)

    def set_allocator_settings(self, settings: str) -> None:
        return None

    def empty_cache(self) -> None:
        return None

    def get_device_capability(self, device_index: int = 0) -> tuple[Optional[int], Optional[int]]:
        return None, None

    def communication_backend_name(self) -> str:
        return "gloo"

    def visible_devices_envvar(self) -> str:
        return "CUDA_VISIBLE_DEVICES"

    @contextmanager
    def nvtx_range(self, msg: str):
        yield

    def profiler_start(self) -> None:
        return None

    def profiler_stop(self) -> None:
        return None

    def ray_resource_name(self) -> str:
        return "CPU"

    def ray_noset_envvars(self) -> list[str]:
        return []

    def is_ipc_supported(self) -> bool:
        return False

    def cudart(self) -> Any:
        return None


class NoRollout(rollout_base.BaseRollout):
    """A rollout that generates nothing, for a worker whose phases after generation are driven directly.

    verl's worker builds its rollout engine in `init_model` whenever its role names "rollout"; the real ones
    (vLLM / SGLang / TRT-LLM servers) need those packages and a GPU. Batches come from the test instead."""

    async def resume(self, tags: list[str]):
        return None

    async def update_weights(self, weights, wire_format: str = "named_tensors", **kwargs):
        return None

    async def release(self):
        return None


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def process_env(rank: int = 0, world_size: int = 1, port: Optional[int] = None) -> dict[str, str]:
    """The environment a verl `Worker` of `rank` in a world of `world_size` on this host reads (normally set by Ray's
    worker group)."""
    return {
        "RANK": str(rank),
        "WORLD_SIZE": str(world_size),
        "LOCAL_RANK": str(rank),
        "LOCAL_WORLD_SIZE": str(world_size),
        "RAY_LOCAL_WORLD_SIZE": str(world_size),
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": str(port or free_port()),
        # verl registers its FSDP engines for devices "cuda" and "npu" only; the engine code itself is
        # device-agnostic (it asks the platform), so pick the CUDA registration.
        "VERL_ENGINE_DEVICE": "cuda",
    }


def install_cpu_platform(rank: int = 0, world_size: int = 1, port: Optional[int] = None) -> PlatformCPU:
    """Make verl see a CPU platform and a world of `world_size` processes (a gloo process group; each process calls
    this with its rank and the same port); returns the platform.

    The process group is opened here because verl's `initialize_global_process_group_ray` asks torch for the backend
    "cpu:gloo,<device>:<backend>", which for device "cpu" is "cpu:gloo,cpu:gloo" and torch rejects the duplicate
    device type; verl skips its own call when a group already exists."""
    platform = PlatformCPU()
    set_platform(platform)
    # verl's rollout registry is a plain dict keyed by (name, mode); adding a name leaves vllm/sglang untouched
    rollout_base._ROLLOUT_REGISTRY[(NO_ROLLOUT, "async")] = f"{NoRollout.__module__}.{NoRollout.__qualname__}"
    os.environ.update(process_env(rank, world_size, port))
    if not torch.distributed.is_initialized():
        torch.distributed.init_process_group(backend="gloo", rank=rank, world_size=world_size)
    return platform


@contextmanager
def cpu_platform_installed():
    """`install_cpu_platform()` for the duration of the block; then the previous platform, environment, rollout
    registry and (absent) process group come back, so later tests in the same process see verl as before."""
    previous_platform = platform_manager._current_platform
    keys = process_env().keys()
    previous_env = {key: os.environ.get(key) for key in keys}
    had_group = torch.distributed.is_initialized()
    try:
        yield install_cpu_platform()
    finally:
        if not had_group and torch.distributed.is_initialized():
            torch.distributed.destroy_process_group()
        for key, value in previous_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        rollout_base._ROLLOUT_REGISTRY.pop((NO_ROLLOUT, "async"), None)
        platform_manager._current_platform = previous_platform
