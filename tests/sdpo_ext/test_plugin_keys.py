"""The plugin's typed config blocks get verl's key check: a `+` override with a typo under `sdpo` or
`actor_rollout_ref.actor.sdpo` names the closest field, before Ray starts."""
from __future__ import annotations

import pytest

from sdpo_ext.startup.checks import UnknownConfigKeyError, check_config_keys, plugin_unknown_keys
from tests.recipes.test_recipes import compose_recipe


@pytest.mark.parametrize("recipe", ["sdpo_kimina_1_7b", "srpo_demo", "sc_sdpo_toy_lean", "grpo_kimina_1_7b",
                                    "sdpo_math_qwen3_5_4b"])
def test_the_recipes_own_blocks_have_no_unknown_keys(recipe):
    assert plugin_unknown_keys(compose_recipe(recipe)) == []


def test_a_typo_in_an_sdpo_block_gets_the_closest_field():
    cfg = compose_recipe("sdpo_kimina_1_7b", ("+actor_rollout_ref.actor.sdpo.alpah=0.5",
                                              "+actor_rollout_ref.actor.sdpo.teacher.updte_rate=0.1",
                                              "+sdpo.prompt_stlye=kimina"))
    assert sorted(plugin_unknown_keys(cfg)) == [("actor_rollout_ref.actor.sdpo.alpah", ["alpha"]),
                                                ("actor_rollout_ref.actor.sdpo.teacher.updte_rate", ["update_rate"]),
                                                ("sdpo.prompt_stlye", ["prompt_style"])]
    with pytest.raises(UnknownConfigKeyError, match=r"sdpo\.alpah  \(did you mean: alpha\?\)"):
        check_config_keys(cfg)
