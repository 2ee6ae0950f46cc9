"""bench/step_time/step_time_fair.py ratios each method to GRPO's fastest setting over steps 2..N;
bench/step_time/run_step_time.sh's full-pipeline commands compose."""
from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from sdpo_ext.config import run_config, sdpo_loss_selected
from sdpo_ext.startup.checks import check_config_keys, sdpo_setting_errors
from tests.recipes.test_recipes import compose_recipe

ROOT = Path(__file__).resolve().parents[2]


def write_phases(folder: Path, algo: str, updates: list[float], length: str = "2048") -> None:
    """bench/step_time/step_phases.py's output: one entry per step; old log-prob 5 s, prepare 0.5 s,
    advantages 0.1 s."""
    nested = {"sdpo_teacher_forward": 4.0, "sdpo_ema_update": 0.01} if algo.startswith("sdpo") else {}
    steps = [{"sdpo_prepare": 0.5, "old_log_prob": 5.0, "adv": 0.1, "update_actor": u, "peak_allocated_gb": 40.0 + i,
              "peak_reserved_gb": 50.0, "alloc_retries": 3 * i, **nested} for i, u in enumerate(updates)]
    run = {"algo": algo, "init_s": 30.0, "overrides": [f"+recipe={algo}"], "lengths": {length: {
        "iterations": steps, "samples": 64, "prompt_tokens": 64_000, "response_tokens": 128_000, "metrics": {}}}}
    (folder / f"phases_{algo}.json").write_text(json.dumps(run))


def summarise(out: Path, *folders: Path) -> subprocess.CompletedProcess:
    jobs = [arg for i, folder in enumerate(folders) for arg in ("--phases", str(folder), "--call", f"job {i}")]
    return subprocess.run([sys.executable, "bench/step_time/step_time_fair.py", *jobs, "--out", str(out)], cwd=ROOT,
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})


def job_folder(parent: Path, name: str, gen_s: float = 14.4, length: str = "2048") -> Path:
    folder = parent / f"step_phases_{name}"
    folder.mkdir()
    rollouts = {"engine_start_s": 90.0, "lengths": {length: {"gen_s": gen_s, "tokens_per_s": 9000.0}}}
    (folder / "rollouts.json").write_text(json.dumps(rollouts))
    return folder


def test_ratios_use_grpos_fastest_configuration_and_steps_after_the_first(tmp_path):
    folder = job_folder(tmp_path, "a")
    write_phases(folder, "grpo", [90.0, 40.0, 40.0])
    write_phases(folder, "grpo_fused", [80.0, 30.0, 32.0])   # faster: the reference
    write_phases(folder, "sdpo", [70.0, 35.0, 35.0])
    write_phases(folder, "srpo", [70.0, 33.0, 33.0])
    out = tmp_path / "fair"
    assert summarise(out, folder).returncode == 0
    summary = json.loads(out.with_suffix(".json").read_text())
    row = summary["2048"]
    assert summary["lengths"] == ["2048"]
    assert summary["jobs"] == {"a": {"call": "job 0", "rollout_engine_start_s": 90.0}}
    assert row["grpo"]["algo"] == "grpo_fused" and row["grpo_config"] == row["grpo"]["config"]
    assert row["sdpo"]["algo"] == "sdpo" and row["srpo"]["algo"] == "srpo"
    fused_step = 14.4 + 0.5 + 5.0 + 0.1 + 31.0                         # steps 2..N, step 1 is warm-up
    assert row["grpo"]["phase_s"]["step"] == round(fused_step, 3)
    assert row["jobs"]["a"]["grpo"]["phase_s"]["step"] == round(14.4 + 5.6 + 40.0, 3)   # kept, not chosen
    assert row["ratio_sdpo_over_grpo"] == round((14.4 + 5.6 + 35.0) / fused_step, 3)  # nested phases not added
    assert row["sdpo"]["phase_s"]["sdpo_teacher_forward"] == 4.0
    assert row["ratio_srpo_over_grpo"] == round((14.4 + 5.6 + 33.0) / fused_step, 3)
    assert row["sdpo"]["tokens_per_s"] == round(192_000 / (14.4 + 5.6 + 35.0), 1)
    assert row["sdpo"]["peak_allocated_gb"] == 42.0                     # the largest of the measured steps
    assert row["sdpo"]["alloc_retries_per_step"] == [3, 6]             # steps 2..N, not the warm-up
    assert out.with_suffix(".png").stat().st_size > 0


def test_each_ratio_is_to_the_grpo_of_its_own_job_and_the_last_job_that_measured_the_method(tmp_path):
    first, second = job_folder(tmp_path, "first"), job_folder(tmp_path, "second")
    write_phases(first, "grpo_fused", [80.0, 30.0])
    write_phases(first, "sdpo", [70.0, 36.0])
    write_phases(first, "srpo", [70.0, 34.0])
    write_phases(second, "grpo_fused", [80.0, 40.0])                    # a slower machine
    write_phases(second, "srpo", [70.0, 45.0])
    write_phases(second, "sdpo", [70.0])                                # warm-up only: the first job's counts
    out = tmp_path / "fair"
    assert summarise(out, first, second).returncode == 0
    row = json.loads(out.with_suffix(".json").read_text())["2048"]
    assert (row["grpo"]["job"], row["sdpo"]["job"], row["srpo"]["job"]) == ("second", "first", "second")
    assert row["ratio_sdpo_over_grpo"] == round(56.0 / 50.0, 3)         # first job: 20 + 36 over 20 + 30
    assert row["sdpo"]["grpo_step_s_same_job"] == 50.0
    assert row["ratio_srpo_over_grpo"] == round(65.0 / 60.0, 3)         # second job: 20 + 45 over 20 + 40
    assert set(row["jobs"]) == {"first", "second"}


def test_a_call_per_job_is_required(tmp_path):
    folder = job_folder(tmp_path, "a")
    write_phases(folder, "grpo_fused", [80.0, 30.0])
    proc = subprocess.run([sys.executable, "bench/step_time/step_time_fair.py", "--phases", str(folder),
                           "--phases", str(folder), "--call", "x", "--out", str(tmp_path / "fair")], cwd=ROOT,
                           capture_output=True, text=True)
    assert proc.returncode == 2 and "2 --phases but 1 --call" in proc.stderr


def test_no_grpo_step_is_an_error_naming_the_length(tmp_path):
    folder = job_folder(tmp_path, "a", gen_s=90.0, length="8192")
    write_phases(folder, "sdpo", [70.0, 35.0], length="8192")
    write_phases(folder, "grpo", [70.0], length="8192")             # warm-up only: not a measurement
    proc = summarise(tmp_path / "fair", folder)
    assert proc.returncode != 0 and "no GRPO configuration finished two steps at 8192 tokens" in proc.stderr


@pytest.mark.parametrize("length", ["2048", "8192"])
def test_every_benchmark_command_composes_with_known_keys(tmp_path, length):
    env = {**os.environ, "DRY_RUN": "1", "OUT": str(tmp_path), "RESPONSE_LEN": length}
    subprocess.run(["bash", "bench/step_time/run_step_time.sh"], cwd=ROOT, env=env, check=True, capture_output=True)
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
