"""Start-up on small hosts: TransferQueue sized to the CPUs Ray has, and the CPU budget checked before Ray starts.

CPU budget of one verl 0.9.1 v1 run (TransferQueue's SimpleStorage backend), which Ray must place or hang:
  GPU workers     3 CPUs per GPU (`ResourcePoolManager.max_colocate_count`: one placement-group bundle per GPU)
  TQ controller   1 CPU, each TQ storage unit 1 CPU (both `@ray.remote(num_cpus=1)`, held while alive)
  headroom        1 CPU, so actors with Ray's default resources (reward and agent loop workers) can be scheduled
so  storage units = max(1, min(wanted, CPUs - 3 * GPUs - 2)).  verl asks for 8 units; on a 2-CPU host TransferQueue
start-up then waits forever for CPUs that never come. The recipes size the units with the resolver
`${sdpo.tq_storage_units:WANTED,GPUS_PER_NODE,NNODES,RAY_NUM_CPUS}`: inside the Ray job (verl resolves the config
in its TaskRunner before `tq.init`) it reads the CPUs Ray reports; before Ray starts it predicts them as Ray will
(`ray_kwargs.ray_init.num_cpus`, else the CPUs of this host).
`check_cpu_budget` runs before Ray starts, from the Hydra callback `sdpo_ext.startup.checks.StartupChecks`, so a
too-small host fails in seconds with the fix.
"""
from __future__ import annotations

import os
from typing import Any

from omegaconf import DictConfig, OmegaConf

CPUS_PER_GPU = 3         # verl's ResourcePoolManager.max_colocate_count (bundle {"CPU": 3, "GPU": 1})
TQ_CONTROLLER_CPUS = 1
HEADROOM_CPUS = 1
UNITS_KEY = "transfer_queue.backend.SimpleStorage.num_data_storage_units"


class TooFewCPUsError(RuntimeError):
    """The host cannot place the run's Ray actors; waiting would hang."""


def fixed_cpus(gpus: int) -> int:
    """CPUs a run needs besides its TransferQueue storage units."""
    return CPUS_PER_GPU * gpus + TQ_CONTROLLER_CPUS + HEADROOM_CPUS


def storage_units(cpus: float, gpus: int, wanted: int) -> int:
    """max(1, min(wanted, cpus - fixed_cpus(gpus))): as many as fit, at least one (`cpu_shortage` says if that fits)."""
    return max(1, min(int(wanted), int(cpus) - fixed_cpus(gpus)))


def cpu_shortage(units: int, gpus: int, cpus: float) -> str | None:
    """Why `units` storage units and `gpus` GPUs cannot be placed on `cpus` CPUs, with the fix; None if they can."""
    needed = int(units) + fixed_cpus(gpus)
    if needed <= cpus:
        return None
    return (f"Ray sees {cpus:g} CPUs; this run needs {needed}: {CPUS_PER_GPU} per GPU x {gpus} GPUs, "
            f"{TQ_CONTROLLER_CPUS} TransferQueue controller, {units} storage unit(s) ({UNITS_KEY}), {HEADROOM_CPUS} "
            "spare. Ray would wait for them forever. Fix: ray_kwargs.ray_init.num_cpus="
            f"{needed} (Ray's CPUs are scheduling slots: more than the host's cores works for a small run), "
            "or fewer GPUs (trainer.n_gpus_per_node).")


def ray_cpus(ray_num_cpus: Any) -> float:
    """CPUs Ray has (inside a Ray job) or will have once verl calls `ray.init(num_cpus=ray_num_cpus)`."""
    import ray

    if ray.is_initialized():
        return float(ray.cluster_resources().get("CPU", 0))
    if ray_num_cpus is not None:
        return float(ray_num_cpus)
    try:  # Ray's own count (honours cgroup CPU quotas); private, hence the fallback
        from ray._private.utils import get_num_cpus

        return float(get_num_cpus())
    except ImportError:
        return float(len(os.sched_getaffinity(0)))


def tq_storage_units(wanted: Any, gpus_per_node: Any, nnodes: Any, ray_num_cpus: Any = None) -> int:
    """Resolver `sdpo.tq_storage_units`: the storage units that fit the CPUs Ray has. Inside the Ray job a
    shortage raises at once (TransferQueue would hang); before Ray, `check_cpu_budget` reports it."""
    import ray

    cpus, gpus = ray_cpus(ray_num_cpus), int(gpus_per_node) * int(nnodes)
    units = storage_units(cpus, gpus, int(wanted))
    shortage = cpu_shortage(units, gpus, cpus) if ray.is_initialized() else None
    if shortage:
        raise TooFewCPUsError(shortage)
    return units


def check_cpu_budget(config: DictConfig) -> None:
    """Fail before Ray starts when the storage units (sized or set by hand) and GPUs exceed the CPUs Ray will see.
    Skipped when joining an existing cluster (RAY_ADDRESS): its CPUs are only known inside the job."""
    if os.environ.get("RAY_ADDRESS"):
        return
    units = OmegaConf.select(config, UNITS_KEY)
    gpus = int(config.trainer.n_gpus_per_node) * int(config.trainer.nnodes)
    shortage = cpu_shortage(int(units), gpus, ray_cpus(OmegaConf.select(config, "ray_kwargs.ray_init.num_cpus")))
    if shortage:
        raise TooFewCPUsError(shortage)

