"""A misspelt recipe or key gets the closest names from Hydra's own errors, and never the advice to add `+` when it is
a typo of an existing key; a key close to none keeps Hydra's `+` advice (it is a new key)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hydra.errors import ConfigCompositionException, MissingConfigException

from tests.recipes.test_recipes import compose_recipe


def test_a_misspelt_recipe_gets_the_closest_recipes_not_all_of_them():
    with pytest.raises(MissingConfigException) as error:
        compose_recipe("sdpo_kimina_1_7")
    message = str(error.value)
    assert message.startswith("Could not find recipe 'sdpo_kimina_1_7' (did you mean: sdpo_kimina_1_7b")
    assert "Available options" not in message and "grpo_demo" not in message


@pytest.mark.parametrize("override, meant", [
    ("sdpo.ttrl.theorm=x", "sdpo.ttrl.theorem"),
    ("sdpo.ttr.theorem=x", "sdpo.ttrl.theorem"),
    ("data.train_batch_sise=3", "data.train_batch_size"),
    ("actor_rollout_ref.actor.sdpo.alpah=0.5", "actor_rollout_ref.actor.sdpo.alpha"),
])
def test_a_misspelt_key_at_any_depth_gets_the_closest_key_and_no_plus(override, meant):
    with pytest.raises(ConfigCompositionException) as error:
        compose_recipe("sdpo_toy_lean", (override,))
    message = str(error.value)
    assert f"(did you mean {meant}?)" in message and "+" not in message


def test_a_new_key_keeps_hydras_advice_to_add_a_plus():
    with pytest.raises(ConfigCompositionException, match=r"To append to your config use \+sdpo.zzzz_new=1"):
        compose_recipe("sdpo_toy_lean", ("sdpo.zzzz_new=1",))


def test_main_ppo_prints_the_closest_recipe(tmp_path):
    root = str(Path(__file__).parents[3])
    proc = subprocess.run([sys.executable, "-m", "verl.trainer.main_ppo", "+recipe=sdpo_kimina_1_7"],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": root, "HF_HUB_OFFLINE": "1"})
    assert proc.returncode == 1
    assert "Could not find recipe 'sdpo_kimina_1_7' (did you mean: sdpo_kimina_1_7b" in proc.stderr, proc.stderr[-2000:]
    assert "Available options" not in proc.stderr
