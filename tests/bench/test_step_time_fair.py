"""bench/run_step_time.sh's commands compose, and bench/step_time_fair.py ratios each method to GRPO's fastest
setting."""
from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from sdpo_ext.config import sdpo_loss_selected
from sdpo_ext.startup_checks import check_config_keys, sdpo_setting_errors
from sdpo_ext.trainer import run_config
from tests.recipes.test_recipes import compose_recipe

ROOT = Path(__file__).resolve().parents[2]


def write_run(folder: Path, algo: str, step_seconds: list[float], update_s: float) -> None:
    """verl console lines as run_step_time.sh keeps them (`step:N - key:value - ...`)."""
    lines = [f"step:{i + 1} - timing_s/step:{s} - timing_s/update_actor:{update_s} - timing_s/gen:10.0 - "
             f"perf/max_memory_allocated_gb:50.0 - perf/max_memory_reserved_gb:60.0 - prompt_length/mean:1000.0 - "
             f"response_length/mean:2000.0" for i, s in enumerate(step_seconds)]
    (folder / f"{algo}_metrics.log").write_text("\n".join(lines) + "\n")


def test_ratios_use_grpos_fastest_configuration_and_steps_after_the_first(tmp_path):
    r2k = tmp_path / "runs" / "r2048"
    r2k.mkdir(parents=True)
    write_run(r2k, "grpo", [200.0, 80.0, 80.0], 49.0)
    write_run(r2k, "grpo_fused", [190.0, 60.0, 62.0], 30.0)   # faster: the reference
    write_run(r2k, "sdpo", [100.0, 66.0, 66.0], 35.0)
    write_run(r2k, "srpo", [100.0, 63.0, 63.0], 33.0)
    out = tmp_path / "fair"
    subprocess.run([sys.executable, "bench/step_time_fair.py", "--runs", str(tmp_path / "runs"), "--out", str(out),
                    "--call", "test"], cwd=ROOT, check=True, capture_output=True, text=True,
                   env={**os.environ, "PYTHONPATH": str(ROOT)})
    summary = json.loads(out.with_suffix(".json").read_text())
    row = summary["2048"]
    assert summary["lengths"] == ["2048"] and row["grpo_fastest"] == "grpo_fused"
    assert row["grpo_fused"]["phase_s"]["step"] == 61.0                    # steps 2..N, step 1 is warm-up
    assert row["ratio_sdpo_over_grpo"] == round(66.0 / 61.0, 3)
    assert row["ratio_srpo_over_grpo"] == round(63.0 / 61.0, 3)
    assert row["sdpo"]["tokens_per_s"] == round(3000.0 * 64 / 66.0, 1)
    assert out.with_suffix(".png").stat().st_size > 0


def test_no_grpo_run_is_an_error_naming_what_ran(tmp_path):
    r8k = tmp_path / "r8192"
    r8k.mkdir()
    write_run(r8k, "sdpo", [100.0, 66.0], 35.0)
    proc = subprocess.run([sys.executable, "bench/step_time_fair.py", "--runs", str(tmp_path), "--out",
                           str(tmp_path / "fair"), "--call", "test"], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode != 0 and "no GRPO run logged a step (sdpo did)" in proc.stderr


@pytest.mark.parametrize("length", ["2048", "8192"])
def test_every_benchmark_command_composes_with_known_keys(tmp_path, length):
    env = {**os.environ, "DRY_RUN": "1", "OUT": str(tmp_path), "RESPONSE_LEN": length}
    subprocess.run(["bash", "bench/run_step_time.sh"], cwd=ROOT, env=env, check=True, capture_output=True)
    commands = sorted((tmp_path / f"r{length}").glob("*_command.txt"))
    assert [c.name for c in commands] == ["grpo_fused_command.txt", "sdpo_command.txt", "srpo_command.txt"]
    for command in commands:
        recipe, *overrides = shlex.split(command.read_text())[3:]   # after `python3 -m verl.trainer.main_ppo`
        cfg = compose_recipe(recipe.removeprefix("+recipe="), tuple(overrides))
        check_config_keys(cfg)   # what SDPOTrainer checks at start, SDPO and GRPO alike
        assert run_config(cfg).full_batch_size == 8
        actor = cfg.actor_rollout_ref.actor
        assert sdpo_loss_selected(actor.policy_loss) == (not command.name.startswith("grpo"))
        if sdpo_loss_selected(actor.policy_loss):
            assert sdpo_setting_errors(cfg, actor.sdpo.grpo_weight) == [], command.name
        OmegaConf.resolve(cfg)
        assert cfg.data.max_response_length == int(length)
        assert cfg.actor_rollout_ref.actor.ppo_max_token_len_per_gpu >= 1100 + int(length)
        assert cfg.actor_rollout_ref.model.use_fused_kernels == command.name.startswith("grpo_fused")
