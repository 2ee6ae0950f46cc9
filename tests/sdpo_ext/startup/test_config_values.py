"""The pre-flight checks the type and range of every value of the plugin's typed blocks from their dataclasses, and
reports them in the one message with the machine's problems (issue 50, item 2)."""
from __future__ import annotations

import dataclasses
import typing

import pytest

from sdpo_ext.config import RunConfig, SDPOConfig, SDPOTeacherConfig, TTRLConfig
from sdpo_ext.startup.checks import startup_problems
from sdpo_ext.startup.config_values import block_problems, config_value_problems
from sdpo_ext.teacher.reprompt import RepromptConfig
from tests.recipes.test_recipes import compose_recipe

SDPO = "actor_rollout_ref.actor.sdpo"


def doc(cls: type, name: str) -> str:
    """The one-line doc of a field (its `option`), which a wrong type's message repeats."""
    return next(f.metadata["doc"] for f in dataclasses.fields(cls) if f.name == name)


@pytest.fixture(autouse=True)
def _env(monkeypatch, tmp_path):
    monkeypatch.setenv("SDPO_TOY_DATA_DIR", str(tmp_path / "toy"))
    monkeypatch.setenv("SDPO_OUTPUT_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


@pytest.mark.parametrize("value, words", [
    ("abc", f"{SDPO}.alpha=abc: expected a number (default 0.5; {doc(SDPOConfig, 'alpha')})"),
    ("2.0", f"{SDPO}.alpha=2.0: must be in [0, 1], got 2.0"),
])
def test_a_wrong_sdpo_value_is_in_the_one_message_with_the_machines_problems(value, words):
    problems = startup_problems(compose_recipe("sdpo_toy_lean", ("trainer.n_gpus_per_node=0", f"{SDPO}.alpha={value}")))
    assert f"ConfigValue: {words}" in problems
    assert any(p.startswith("NotEnoughGPUs: trainer.n_gpus_per_node=0") for p in problems)
    assert any(p.startswith("MissingData: ") for p in problems)


def test_the_recipes_as_written_have_no_wrong_value():
    for recipe in ("sdpo_toy_lean", "srpo_kimina_1_7b", "sc_sdpo_demo", "grpo_math_qwen3_5_4b"):
        assert config_value_problems(compose_recipe(recipe)) == [], recipe


def test_nested_blocks_and_the_run_block_are_checked_and_their_rules_keep_their_messages():
    problems = config_value_problems(compose_recipe("sdpo_toy_lean", (
        f"{SDPO}.teacher.update_rate=fast", f"{SDPO}.reprompt.max_reprompt_len=0", "sdpo.ttrl.max_attempts=lots")))
    assert problems == [f"{SDPO}.teacher.update_rate=fast: expected a number (default 0.05; r of the ema and "
                        "trust_region teachers, in [0, 1])",
                        f"{SDPO}.reprompt.max_reprompt_len=0: max_reprompt_len must be >= 1, got 0",
                        "sdpo.ttrl.max_attempts=lots: expected a whole number or null (default null; "
                        f"{doc(TTRLConfig, 'max_attempts')})"]
    (problem,) = config_value_problems(compose_recipe("sdpo_toy_lean", (f"{SDPO}.distillation_mode=token",)))
    assert problem.startswith(f"{SDPO}.distillation_mode=token: ") and problem.endswith(f"set {SDPO}.alpha=1.0")


WRONG = {bool: "maybe", int: "1.5", float: "x", str: 3}   # a value of another type for each field type


def _wrong_for(hint):
    args = [a for a in typing.get_args(hint) if a is not type(None)] or [hint]
    return WRONG.get(typing.get_origin(args[0]) or args[0])


@pytest.mark.parametrize("cls", [SDPOConfig, SDPOTeacherConfig, RepromptConfig, RunConfig, TTRLConfig])
def test_every_scalar_field_of_the_dataclasses_is_type_checked(cls):
    """Derived from the dataclasses, not listed by hand: a field added later is checked too."""
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        wrong = _wrong_for(hints[f.name])
        if wrong is None or f.name == "_target_":   # verl's BaseConfig field, not a setting
            continue
        (problem,) = block_problems("blk", {f.name: wrong}, cls, "blk")
        assert problem.startswith(f"blk.{f.name}={wrong}: expected "), problem


def test_settings_sdpo_refuses_are_in_the_one_message_too():
    """The README's "settings SDPO refuses, in one message": SDPOTrainer's refusals come before Ray as well."""
    problems = startup_problems(compose_recipe("sdpo_toy_lean", ("actor_rollout_ref.actor.use_kl_loss=true",
                                                                 "trainer.n_gpus_per_node=0")))
    assert any(p.startswith("SDPOSetting: actor_rollout_ref.actor.use_kl_loss=true: the reference slot holds")
               for p in problems)
    assert any(p.startswith("NotEnoughGPUs: ") for p in problems)
    assert not any(p.startswith("SDPOSetting") for p in startup_problems(compose_recipe(
        "grpo_toy_lean", ("actor_rollout_ref.actor.use_kl_loss=true",))))
