"""Each config block has one typed home: the YAML repeats a default only where Hydra needs the key, and then agrees."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from sdpo_ext.config import RunConfig, SDPOConfig, SDPOTeacherConfig, TTRLConfig, run_config, sdpo_loss_selected
from sdpo_ext.teacher.reprompt import RepromptConfig
from tests.recipes.test_recipes import compose_recipe

RECIPES = Path(__file__).resolve().parents[2] / "recipes"


def _defaults(cls) -> dict:
    return {f.name: f.default if f.default is not dataclasses.MISSING else f.default_factory()
            for f in dataclasses.fields(cls) if f.name != "_target_"}


def _leaves_differing(block: dict, cls) -> list[str]:
    defaults, out = _defaults(cls), []
    for key, value in block.items():
        if key == "_target_":
            continue
        if isinstance(value, dict):
            out += [f"{key}.{k}" for k in _leaves_differing(value, type(defaults[key]))]
        elif value != defaults[key]:
            out.append(f"{key}: yaml {value!r} != {cls.__name__} {defaults[key]!r}")
    return out


def test_the_sdpo_algorithm_part_repeats_only_dataclass_defaults():
    block = OmegaConf.to_container(OmegaConf.load(RECIPES / "sdpo_algorithm" / "sdpo.yaml"))
    sdpo = block["actor_rollout_ref"]["actor"]["sdpo"]
    assert sdpo["_target_"] == "sdpo_ext.config.SDPOConfig"
    assert sdpo["teacher"]["_target_"] == "sdpo_ext.config.SDPOTeacherConfig"
    assert sdpo["reprompt"]["_target_"] == "sdpo_ext.teacher.reprompt.RepromptConfig"
    assert _leaves_differing(sdpo, SDPOConfig) == []


def test_the_task_parts_repeat_no_run_default_but_the_ttrl_switches():
    for name in ("lean_minif2f", "math", "demo_addition"):
        sdpo = OmegaConf.to_container(OmegaConf.load(RECIPES / "sdpo_task" / f"{name}.yaml"))["sdpo"]
        assert sdpo["_target_"] == "sdpo_ext.config.RunConfig"
        defaults = _defaults(RunConfig)
        repeated = [k for k, v in sdpo.items() if k not in ("ttrl", "_target_") and v is not None and v == defaults[k]]
        assert repeated == [], name
        # theorem: interpolated by the data and trainer sections; theorems, split (set-TTRL), stop_on_success and
        # protocol: overridden without `+`
        assert {k for k, v in sdpo["ttrl"].items() if v == _defaults(TTRLConfig)[k]} == {
            "theorem", "theorems", "split", "stop_on_success", "protocol"}


@pytest.mark.parametrize("recipe, algorithm", [("sdpo_kimina_1_7b", "sdpo"), ("grpo_toy_lean", "grpo"),
                                               ("srpo_demo", "srpo"), ("grpo_math_qwen3_5_4b", "grpo")])
def test_every_task_part_gives_a_typed_run_block(recipe, algorithm):
    cfg = compose_recipe(recipe, ("sdpo.ttrl.theorem=t1", "sdpo.ttrl.max_attempts=32"))
    run = run_config(cfg)
    assert isinstance(run, RunConfig) and isinstance(run.ttrl, TTRLConfig)
    assert (run.ttrl.theorem, run.ttrl.max_attempts, run.ttrl.stop_on_success) == ("t1", 32, True)
    assert run.algorithm_name == algorithm
    assert run.attempt_log.endswith("/attempts.jsonl") and "${" not in run.attempt_log


def test_a_mistyped_run_key_names_the_block():
    cfg = compose_recipe("grpo_toy_lean", ("+sdpo.ttrl.theorm=t1",))
    with pytest.raises(ValueError, match=r"`sdpo` block .*theorm"):
        run_config(cfg)
    assert run_config(OmegaConf.create({"trainer": {}})) is None


def test_sdpo_config_types_its_teacher_and_reprompt_blocks():
    assert SDPOConfig().reprompt == RepromptConfig() and SDPOConfig().teacher == SDPOTeacherConfig()
    built = SDPOConfig(reprompt={"_target_": "sdpo_ext.teacher.reprompt.RepromptConfig", "max_reprompt_len": 64})
    assert built.reprompt == RepromptConfig(max_reprompt_len=64)
    with pytest.raises(ValueError, match="sdpo.reprompt"):
        SDPOConfig(reprompt=None)
    with pytest.raises(ValueError, match="sdpo.teacher.mode"):
        SDPOTeacherConfig(mode="trust-region")
    with pytest.raises(ValueError, match="sdpo.teacher.update_rate"):
        SDPOTeacherConfig(update_rate=-0.1)
    assert not SDPOTeacherConfig(mode="live").needs_reference_model
    for mode in ("trust_region", "live"):  # their teacher weights change during the update: no cached prefix
        with pytest.raises(ValueError, match="share_prompt_prefix"):
            SDPOTeacherConfig(mode=mode, share_prompt_prefix=True)
    assert SDPOTeacherConfig(mode="frozen", share_prompt_prefix=True).share_prompt_prefix


@pytest.mark.parametrize("policy_loss, expected", [({"loss_mode": "sdpo"}, True), ({"loss_mode": "vanilla"}, False),
                                                   ({}, False)])
def test_one_test_of_the_sdpo_loss(policy_loss, expected):
    assert sdpo_loss_selected(policy_loss) is expected
