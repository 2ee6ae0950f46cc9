"""The plugin's typed config blocks get verl's key check: a `+` override with a typo under `sdpo` or
`actor_rollout_ref.actor.sdpo` names the closest field, before Ray starts."""
from __future__ import annotations

import pytest

from sdpo_ext.startup.checks import UnknownConfigKeyError, check_config_keys, plugin_unknown_keys, unknown_keys
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


def test_ray_init_takes_ray_inits_keywords_and_names_the_closest_for_a_typo():
    """verl passes `ray_kwargs.ray_init` to ray.init: its keywords are valid (the discovery job's start-up cut turns
    the dashboard off), a typo is named with ray.init's closest keyword, and what is under a keyword is free-form."""
    ok = compose_recipe("grpo_demo", ("+ray_kwargs.ray_init.include_dashboard=false", "ray_kwargs.ray_init.num_cpus=8",
                                      "+ray_kwargs.ray_init.runtime_env.env_vars.X=1"))
    assert unknown_keys(ok) == []
    typo = compose_recipe("grpo_demo", ("+ray_kwargs.ray_init.include_dashbord=false",))
    assert unknown_keys(typo) == [("ray_kwargs.ray_init.include_dashbord", ["include_dashboard"])]


def test_a_typo_under_sdpo_ttrl_is_an_unknown_key_with_the_closest_not_a_check_that_stopped(tmp_path, monkeypatch):
    from sdpo_data import toy_lean
    from sdpo_ext.startup.checks import data_content_problems, ttrl_problems

    toy_lean.write(tmp_path / "toy")
    monkeypatch.setenv("SDPO_TOY_DATA_DIR", str(tmp_path / "toy"))
    cfg = compose_recipe("sdpo_toy_lean", ("+sdpo.ttrl.theorm=toy_add_7_5",))
    assert plugin_unknown_keys(cfg) == [("sdpo.ttrl.theorm", ["theorem", "theorems"])]
    assert ttrl_problems(cfg) == [] and data_content_problems(cfg) == []   # filed once, under the key check
