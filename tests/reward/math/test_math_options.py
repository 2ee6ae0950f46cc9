"""MathGradingOptions: the one typed home of the MATH grading options (verl reward_kwargs, recipe, math_eval flags)."""
from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import pytest
import yaml

from reward.math.options import FLAG_PREFIX, MathGradingOptions, prompt_opens_think
from sdpo_options.flags import add_flags, from_flags


def test_defaults_and_kwargs():
    assert MathGradingOptions() == MathGradingOptions(timeout_s=5.0, prompt_opens_think=False)
    assert MathGradingOptions.from_kwargs({"prompt_opens_think": True}).prompt_opens_think
    with pytest.raises(ValueError, match=r"unknown MATH reward option\(s\) \['timeout'\]; known: \['timeout_s', "):
        MathGradingOptions.from_kwargs({"timeout": 3})


@pytest.mark.parametrize("kwargs, message", [
    ({"timeout_s": 0}, "timeout_s must be a positive number"),
    ({"timeout_s": True}, "timeout_s must be a positive number"),
    ({"timeout_s": "5"}, "timeout_s must be a positive number"),
    ({"prompt_opens_think": "false"}, "prompt_opens_think must be true or false"),
    ({"prompt_opens_think": 1}, "prompt_opens_think must be true or false"),
])
def test_fields_are_type_checked(kwargs, message):
    with pytest.raises(ValueError, match=message):
        MathGradingOptions(**kwargs)


def test_cli_flags_are_built_from_the_fields():
    parser = argparse.ArgumentParser()
    add_flags(parser, MathGradingOptions, prefix=FLAG_PREFIX)
    assert from_flags(MathGradingOptions, parser.parse_args([]), prefix=FLAG_PREFIX) == MathGradingOptions()
    args = parser.parse_args(["--grading-timeout-s", "2.5", "--grading-prompt-opens-think", "yes"])
    assert from_flags(MathGradingOptions, args, prefix=FLAG_PREFIX) == MathGradingOptions(timeout_s=2.5,
                                                                                         prompt_opens_think=True)
    flags = {a.option_strings[0] for a in parser._actions if a.option_strings and a.dest.startswith("grading_")}
    assert flags == {"--grading-" + f.name.replace("_", "-") for f in dataclasses.fields(MathGradingOptions)}


def test_the_math_recipe_sets_every_option():
    """recipes/sdpo_task/math.yaml passes each field as a reward_kwarg (so a model part can override it)."""
    with open(Path(__file__).resolve().parents[3] / "recipes" / "sdpo_task" / "math.yaml") as f:
        kwargs = yaml.safe_load(f)["reward"]["custom_reward_function"]["reward_kwargs"]
    assert set(kwargs) == {f.name for f in dataclasses.fields(MathGradingOptions)}
    assert MathGradingOptions.from_kwargs(kwargs) == MathGradingOptions()


@pytest.mark.parametrize("prompt, opens", [
    ("<|im_start|>assistant\n<think>\n", True),
    ("<|im_start|>assistant\n<think>\n\n</think>\n\n", False),
    ("<|im_start|>assistant\n", False),
    ("Assistant: <think> earlier </think> then <think>", True),
    ("<｜Assistant｜><think>\n", True),
])
def test_a_prompt_opens_think_when_its_last_think_is_unclosed(prompt, opens):
    assert prompt_opens_think(prompt) is opens
    problem = MathGradingOptions(prompt_opens_think=not opens).template_problem(prompt, "--grading-prompt-opens-think")
    assert problem and problem.endswith(f"(--grading-prompt-opens-think={str(opens).lower()})")
    assert MathGradingOptions(prompt_opens_think=opens).template_problem(prompt, "x") is None
