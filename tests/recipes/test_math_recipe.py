"""The MATH recipes compose through verl's config, point the reward at reward.math, and verl's own reward manager
runs it (a sync compute_score in verl's executor thread) with the hard time limit."""
from __future__ import annotations

import asyncio
import time

import numpy as np
import pytest
import torch
import verl  # noqa: F401  (loads the sdpo-lean plugin: resolvers, registries)
from omegaconf import OmegaConf

from sdpo_ext.startup.checks import check_config_keys
from tests.recipes import test_recipes


def compose_recipe(name: str, overrides: tuple[str, ...] = ()):
    """The recipe as main_ppo composes it, key-checked and resolved."""
    cfg = test_recipes.compose_recipe(name, overrides)
    check_config_keys(cfg)
    OmegaConf.resolve(cfg)
    return cfg


@pytest.fixture(autouse=True)
def _env(monkeypatch, tmp_path):
    monkeypatch.setenv("SDPO_MATH_DATA_DIR", str(tmp_path / "math"))
    monkeypatch.setenv("SDPO_OUTPUT_DIR", str(tmp_path / "runs"))


@pytest.mark.parametrize("algorithm", ["sdpo", "grpo", "srpo", "sc_sdpo"])
def test_math_recipe_uses_reward_math_and_math_data(algorithm, tmp_path):
    cfg = compose_recipe(f"{algorithm}_math_qwen3_5_4b")
    assert cfg.reward.custom_reward_function.path == "pkg://reward.math"
    assert cfg.reward.custom_reward_function.name == "compute_score"
    assert cfg.reward.custom_reward_function.reward_kwargs.timeout_s == 5
    assert cfg.data.train_files == str(tmp_path / "math" / "math_train.parquet")
    assert cfg.data.val_files == str(tmp_path / "math" / "math_test.parquet")
    assert cfg.algorithm.adv_estimator == "grpo_valid"
    assert cfg.actor_rollout_ref.actor.policy_loss.loss_mode == ("vanilla" if algorithm == "grpo" else "sdpo")
    assert cfg.trainer.experiment_name == f"{algorithm}_math_qwen3_5_4b"
    if algorithm != "grpo":
        assert cfg.actor_rollout_ref.actor.sdpo.variant == algorithm


def test_math_ttrl_switch():
    cfg = compose_recipe("sdpo_math_qwen3_5_4b", ("sdpo.ttrl.theorem=math_test_algebra_3", "sdpo.ttrl.max_attempts=64"))
    assert (cfg.data.train_batch_size, cfg.actor_rollout_ref.rollout.n) == (1, 16)
    # the run's length is the trainer's, from the budget (TTRLSet.step_limit), not the YAML's
    assert cfg.trainer.total_training_steps is None


class CharTokenizer:
    """decode() of character codes: enough for verl's reward manager, which only decodes the response."""

    def decode(self, ids, skip_special_tokens=True):
        return "".join(chr(int(i)) for i in ids)


def _item(reply: str, truth: str):
    from verl import DataProto

    ids = torch.tensor([[ord(c) for c in reply]])
    return DataProto.from_dict(
        tensors={"responses": ids, "attention_mask": torch.ones_like(ids)},
        non_tensors={"data_source": np.array(["math"]), "reward_model": np.array([{"ground_truth": truth}]),
                     "extra_info": np.array([{"index": 0}])})


def test_verls_reward_manager_runs_reward_math_with_its_time_limit():
    from verl.experimental.reward_loop.reward_manager.naive import NaiveRewardManager
    from verl.trainer.ppo.reward import get_custom_reward_fn

    cfg = compose_recipe("grpo_math_qwen3_5_4b", ("reward.custom_reward_function.reward_kwargs.timeout_s=2",))

    async def main():
        manager = NaiveRewardManager(cfg, CharTokenizer(), get_custom_reward_fn(cfg))
        # Qwen3.5-4B's prompt opens <think> (the recipes' prompt_opens_think): an answer follows "</think>"
        replies = [("half.\n</think>\n\n" r"so \boxed{\frac{1}{2}}", "0.5"), ("</think>" r"\boxed{9^{9^{9^9}}}", "3"),
                   ("no idea", "3")]
        return await asyncio.gather(*(manager.run_single(_item(reply, truth)) for reply, truth in replies))

    start = time.monotonic()
    correct, tower, silent = asyncio.run(main())
    assert time.monotonic() - start < 30
    assert correct["reward_score"] == 1.0 and correct["reward_extra_info"]["verdict"] == "valid"
    # the reply's own pathological answer: score 0, trained on as a failure (issue 34), not masked as infrastructure
    assert tower["reward_score"] == 0.0
    assert tower["reward_extra_info"]["verdict"] == "grader_timeout" and tower["reward_extra_info"]["infra"] == 0.0
    assert silent["reward_extra_info"]["verdict"] == "no_answer" and silent["reward_extra_info"]["infra"] == 0.0
