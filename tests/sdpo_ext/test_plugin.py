"""The plugin registers itself on `import verl` in a fresh process, and its small pieces behave as documented."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from omegaconf import OmegaConf

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("first", ["verl", "sdpo_ext.config", "sdpo_ext.trainer", "sdpo_ext.worker",
                                   "sdpo_ext.ttrl.dataset", "sdpo_ext.ttrl.hooks"])
def test_registrations_happen_on_import_verl_in_a_fresh_process(tmp_path, first):
    """Also when a process imports one of our modules first: it imports verl, whose plugin loading imports the
    trainer while that module may be half-initialised (the trainer-first case used to lose every registration)."""
    code = (
        f"import json, {first}, verl\n"
        "from verl.trainer.ppo import core_algos\n"
        "from verl.trainer.ppo.v1 import get_trainer_cls\n"
        "from omegaconf import OmegaConf\n"
        "print(json.dumps({'adv': 'grpo_valid' in core_algos.ADV_ESTIMATOR_REGISTRY,"
        " 'loss': 'sdpo' in core_algos.POLICY_LOSS_REGISTRY,"
        " 'trainer': get_trainer_cls('sync').__module__,"
        " 'resolver': OmegaConf.has_resolver('sdpo.ttrl_pick')}))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "VERL_USE_EXTERNAL_PLUGINS"}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])   # this checkout, not the install
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got == {"adv": True, "loss": True, "trainer": "sdpo_ext.trainer", "resolver": True}


def test_the_plugin_leaves_verls_trainers_unimported_until_a_process_imports_them(tmp_path):
    """A worker, reward or server process imports verl but never the v1 trainers (about 500 modules, 1.3 s of CPU a
    process on this box: bench/ttrl/README.md, start-up); the plugin registers SDPOTrainer when they are imported."""
    code = ("import sys, verl, verl.workers.engine_workers\n"
            "print('verl.trainer.ppo.v1' in sys.modules, 'sdpo_ext.trainer' in sys.modules)")
    env = {k: v for k, v in os.environ.items() if k != "VERL_USE_EXTERNAL_PLUGINS"}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "False False"


def test_plugin_can_be_disabled_like_any_verl_plugin(tmp_path):
    code = ("import verl\nfrom verl.trainer.ppo import core_algos\n"
            "print('grpo_valid' in core_algos.ADV_ESTIMATOR_REGISTRY)")
    env = {**os.environ, "VERL_USE_EXTERNAL_PLUGINS": "none"}
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.stdout.strip().splitlines()[-1] == "False"


def test_datasets_folder_never_shadows_the_pypi_package():
    out = subprocess.run([sys.executable, "-c", "import datasets; print(datasets.__file__)"], cwd=REPO,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "site-packages" in out.stdout and not list((REPO / "datasets").glob("*.py"))


def test_grpo_valid_excludes_masked_samples_from_the_baseline():
    from sdpo_ext.loss.advantage import grpo_valid_advantage

    rewards = torch.zeros(5, 3)
    rewards[:, -1] = torch.tensor([1.0, 0.0, 0.0, 0.0, 1.0])
    mask = torch.ones(5, 3)
    mask[3] = 0  # infra failure in group "a": must not count as a 0
    adv, _ = grpo_valid_advantage(rewards, mask, np.array(["a", "a", "a", "a", "b"]))
    a = torch.tensor([1.0, 0.0, 0.0])
    expected = (a - a.mean()) / (a.std() + 1e-6)
    torch.testing.assert_close(adv[:3, 0], expected)
    assert torch.all(adv[3] == 0)
    assert torch.allclose(adv[4], torch.ones(3))  # single valid member: mean 0, std 1 (verl's rule)


@pytest.mark.parametrize("norm", [True, False])
def test_grpo_valid_reads_the_std_switch_from_verls_algorithm_config(norm):
    """verl hands registered estimators only `config`; Dr.GRPO's norm_adv_by_std_in_grpo=false must reach us,
    and match verl's own grpo on a batch without infra samples."""
    from omegaconf import OmegaConf
    from verl.trainer.config import AlgoConfig
    from verl.trainer.ppo.core_algos import compute_grpo_outcome_advantage
    from verl.utils.config import omega_conf_to_dataclass

    from sdpo_ext.loss.advantage import grpo_valid_advantage

    config = omega_conf_to_dataclass(OmegaConf.create({"_target_": "verl.trainer.config.AlgoConfig",
                                                       "norm_adv_by_std_in_grpo": norm}))
    assert isinstance(config, AlgoConfig)
    rewards = torch.zeros(4, 2)
    rewards[:, -1] = torch.tensor([1.0, 0.0, 0.0, 0.0])
    mask, index = torch.ones(4, 2), np.array(["a"] * 4)
    ours, _ = grpo_valid_advantage(rewards, mask, index, config=config)
    verls, _ = compute_grpo_outcome_advantage(rewards, mask, index, norm_adv_by_std_in_grpo=norm)
    torch.testing.assert_close(ours, verls)


def test_resolvers_switch_modes_on_the_whole_ttrl_block():
    from sdpo_ext.config import TTRLConfig
    from sdpo_ext.resolvers import ttrl_pick, ttrl_prompts

    blocks = {"full": {"theorem": None, "theorems": None, "split": None},
              "theorem": {"theorem": "mathd_algebra_10", "theorems": None, "split": None},
              "theorems": {"theorem": None, "theorems": ["a", "b", "c"], "split": None},
              "many": {"theorem": None, "theorems": [f"p{i}" for i in range(40)], "split": None},
              "split": {"theorem": None, "theorems": None, "split": "val"}}
    picks = {mode: ttrl_pick(OmegaConf.create(block), "ttrl", "full") for mode, block in blocks.items()}
    assert picks == {"full": "full", "theorem": "ttrl", "theorems": "ttrl", "many": "ttrl", "split": "ttrl"}
    prompts = {mode: ttrl_prompts(OmegaConf.create(block), 32) for mode, block in blocks.items()}
    assert prompts == {"full": 32, "theorem": 1, "theorems": 3, "many": 32, "split": 32}
    # the resolvers and the typed block agree on the mode: one rule
    for mode, block in blocks.items():
        assert TTRLConfig(**block, max_attempts=8).active == (picks[mode] == "ttrl")


def test_a_resumed_trainer_continues_the_attempt_counts_of_its_checkpoint(tmp_path, monkeypatch):
    """The run id travels with each checkpoint; a new process resuming from it continues the numbering
    (a fresh process would otherwise start at attempt 1 under a new id and flatter attempts-to-success)."""
    from types import SimpleNamespace

    from verl.trainer.ppo.v1.trainer_sync import PPOTrainerSync

    from sdpo_attempts.log import AttemptLog
    from sdpo_ext.trainer import SDPOTrainer

    monkeypatch.setattr(PPOTrainerSync, "_save_checkpoint", lambda self: None)
    ckpt_dir, path = tmp_path / "run", tmp_path / "run" / "attempts.jsonl"
    sample = dict(response_tokens=5, score=0.0, verdict="lean_error", infra=0.0, problem="p")

    def trainer(run_id, global_steps, resume_mode="auto"):
        t = object.__new__(SDPOTrainer)
        t.config = SimpleNamespace(trainer=SimpleNamespace(default_local_dir=str(ckpt_dir), resume_mode=resume_mode,
                                                           resume_from_path=str(ckpt_dir / "global_step_2")))
        t.attempt_log = AttemptLog(str(path), method="sdpo", run_id=run_id, seed=0)
        t.global_steps = global_steps
        return t

    first = trainer("first-aaaa", global_steps=2)
    first.attempt_log.record(1, [sample] * 3)
    first.attempt_log.record(2, [sample] * 3)
    first._save_checkpoint()
    first.attempt_log.record(3, [sample] * 3)  # judged after the checkpoint, then the process died

    for mode in ("auto", "resume_path"):
        resumed = trainer(f"second-{mode}", global_steps=0, resume_mode=mode)
        monkeypatch.setattr(PPOTrainerSync, "_load_checkpoint", lambda self: setattr(self, "global_steps", 2))
        resumed._load_checkpoint()
        assert resumed.attempt_log.run_id == "first-aaaa"
        assert resumed.attempt_log.record(3, [sample])[0]["attempt"] == 10
        path.write_text("".join(line + "\n" for line in path.read_text().splitlines()[:9]))  # undo for the next mode

    fresh = trainer("fresh-bbbb", global_steps=0)
    monkeypatch.setattr(PPOTrainerSync, "_load_checkpoint", lambda self: None)
    fresh._load_checkpoint()
    assert fresh.attempt_log.run_id == "fresh-bbbb" and fresh.attempt_log.record(1, [sample])[0]["attempt"] == 1


def test_ttrl_dataset_selects_one_theorem_by_name(tmp_path, smollm2_tokenizer):
    from omegaconf import OmegaConf

    from sdpo_data.addition_rows import write_data
    from sdpo_ext.ttrl.dataset import TheoremFilterDataset

    train, test = write_data(tmp_path, n_train=12, n_test=4)
    base = {"prompt_key": "prompt", "max_prompt_length": 256, "return_raw_chat": True, "filter_overlong_prompts": False,
            "cache_dir": str(tmp_path / "cache")}
    full = TheoremFilterDataset([str(train)], smollm2_tokenizer,
                                OmegaConf.create({**base, "sdpo_ttrl": {"theorem": None}}))
    assert len(full) == 12
    one = TheoremFilterDataset([str(train)], smollm2_tokenizer, OmegaConf.create(
        {**base, "sdpo_ttrl": {"theorem": "add_test_2", "files": [str(train), str(test)]}}))
    assert len(one) == 1 and one.dataframe[0]["extra_info"]["name"] == "add_test_2"
    with pytest.raises(ValueError, match="add_test_2"):
        TheoremFilterDataset([str(train)], smollm2_tokenizer, OmegaConf.create(
            {**base, "sdpo_ttrl": {"theorem": "add_tset_2", "files": [str(train), str(test)]}}))


def test_importing_verl_prints_no_optional_engine_warnings():
    """The plugin (loaded by `import verl`) silences verl's five 'X engine is not available' warnings, not others."""
    code = "import warnings, verl, verl.workers.engine; warnings.warn('a warning of our own')"
    err = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stderr
    assert "engine is not available" not in err and "a warning of our own" in err
