"""Small hosts: TransferQueue sized to the CPUs Ray has; typos and CPU shortages fail before Ray starts."""
import subprocess
import sys

import pytest
import ray

from sdpo_ext.startup.small_host import UNITS_KEY, cpu_shortage, storage_units, tq_storage_units


@pytest.mark.parametrize("cpus, gpus, units", [(128, 8, 8), (16, 1, 8), (8, 1, 3), (6, 1, 1), (2, 1, 1)])
def test_storage_units_fit_the_cpus_left_after_the_gpu_workers(cpus, gpus, units):
    assert storage_units(cpus, gpus, wanted=8) == units
    # whatever the sizing, either the run fits or the shortage is reported: never a silent wait
    assert (cpu_shortage(units, gpus, cpus) is None) == (units + 3 * gpus + 2 <= cpus)


def test_inside_the_ray_job_the_units_come_from_rays_cpus_and_a_shortage_raises(monkeypatch):
    monkeypatch.setattr(ray, "is_initialized", lambda: True)
    monkeypatch.setattr(ray, "cluster_resources", lambda: {"CPU": 9.0, "GPU": 1.0})
    assert tq_storage_units(8, 1, 1, None) == 4          # 9 - 3 (GPU bundle) - 1 (controller) - 1 (spare)
    monkeypatch.setattr(ray, "cluster_resources", lambda: {"CPU": 2.0, "GPU": 1.0})
    with pytest.raises(RuntimeError, match="ray_kwargs.ray_init.num_cpus=6"):
        tq_storage_units(8, 1, 1, None)


def _main_ppo(run_dir, *overrides: str) -> subprocess.CompletedProcess:
    """verl's real entry point (Hydra's run folder under `run_dir`, not the checkout); before the fix both cases
    below waited forever in TransferQueue start-up."""
    return subprocess.run([sys.executable, "-m", "verl.trainer.main_ppo", "+recipe=sdpo_demo",
                           f"hydra.run.dir={run_dir}", *overrides],
                          capture_output=True, text=True, timeout=240, check=False)


def test_a_typo_fails_before_ray_starts(tmp_path):
    proc = _main_ppo(tmp_path, "+data.max_prompt_len=5")
    assert proc.returncode != 0
    assert "data.max_prompt_len" in proc.stderr and "did you mean: max_prompt_length" in proc.stderr
    assert "ray init kwargs" not in proc.stdout   # verl prints this line just before ray.init


def test_too_few_cpus_fail_before_ray_starts_naming_the_override(tmp_path):
    proc = _main_ppo(tmp_path, "ray_kwargs.ray_init.num_cpus=4", f"{UNITS_KEY}=2")
    assert proc.returncode != 0
    assert "TooFewCPUsError" in proc.stderr and "ray_kwargs.ray_init.num_cpus=7" in proc.stderr
    assert "ray init kwargs" not in proc.stdout
