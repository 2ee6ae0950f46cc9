"""Qwen3.5-4B's generation prompt decides `prompt_opens_think`, and the MATH recipes for it agree.

The fixture is the `add_generation_prompt` branch of Qwen/Qwen3.5-4B's chat template
(https://huggingface.co/Qwen/Qwen3.5-4B/blob/main/chat_template.jinja; vLLM's Qwen3ReasoningParser,
vllm/reasoning/qwen3_reasoning_parser.py, describes the same: "Starting with Qwen3.5, the chat template places <think>
in the prompt", and "<think>\\n\\n</think>\\n\\n" when thinking is disabled). Only that fragment is quoted: the rest
of the template renders the messages before it. Qwen3.5-2B's template differs (closed by default), so this covers 4B.
"""
from __future__ import annotations

import pytest
from jinja2.sandbox import ImmutableSandboxedEnvironment
from omegaconf import OmegaConf

from reward.math.score import compute_score
from tests.recipes.test_recipes import compose_recipe

QWEN3_5_4B_GENERATION_PROMPT = """\
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\\n' }}
    {%- if enable_thinking is defined and enable_thinking is false %}
        {{- '<think>\\n\\n</think>\\n\\n' }}
    {%- else %}
        {{- '<think>\\n' }}
    {%- endif %}
{%- endif %}"""

USER_TURN = "<|im_start|>user\nWhat is $10 + 32$?<|im_end|>\n"

# A thinking-mode reply as Qwen3.5 writes it after that prompt: the reasoning, one "</think>", then the answer.
THOUGHT_THROUGH = ("Okay, I need 10 + 32. A first guess of \\boxed{41} is off by one: 10 + 32 = 42.\n</think>\n\n"
                   "Adding the two numbers gives $10 + 32 = 42$.\n\n$$\\boxed{42}$$")
# The same reply cut off by the token budget while thinking: no "</think>", so no answer yet.
CUT_OFF = "Okay, I need 10 + 32. A first guess would be \\boxed{41}."
# A non-thinking reply (enable_thinking=false): the prompt already closed the block.
DIRECT = "Adding the two numbers gives $10 + 32 = \\boxed{42}$."


def render(**chat_template_kwargs) -> str:
    """The prompt as transformers renders it (its sandbox and block trimming), from the user turn on."""
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    return USER_TURN + env.from_string(QWEN3_5_4B_GENERATION_PROMPT).render(add_generation_prompt=True,
                                                                           **chat_template_kwargs)


def opens_think(prompt: str) -> bool:
    return prompt.rfind("<think>") > prompt.rfind("</think>")


def test_the_generation_prompt_opens_think_unless_thinking_is_disabled():
    assert render().endswith("<|im_start|>assistant\n<think>\n") and opens_think(render())
    assert render(enable_thinking=True) == render()
    assert render(enable_thinking=False).endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")
    assert not opens_think(render(enable_thinking=False))


@pytest.mark.parametrize("recipe", [f"{a}_math_qwen3_5_4b" for a in ("grpo", "sdpo", "srpo", "sc_sdpo")])
def test_math_recipes_set_prompt_opens_think_from_the_prompt_they_render(recipe):
    """The recipe's data.apply_chat_template_kwargs (what verl's dataset and agent loop pass to the template) decide
    whether the prompt ends inside <think>; reward_kwargs.prompt_opens_think must say the same."""
    cfg = compose_recipe(recipe)
    template_kwargs = OmegaConf.to_container(cfg.data.get("apply_chat_template_kwargs") or OmegaConf.create({}))
    reward_kwargs = OmegaConf.to_container(cfg.reward.custom_reward_function.reward_kwargs)
    assert reward_kwargs["prompt_opens_think"] is opens_think(render(**template_kwargs)) is True
    assert compute_score("math", THOUGHT_THROUGH, "42", **reward_kwargs)["score"] == 1.0
    assert compute_score("math", CUT_OFF, "41", **reward_kwargs)["verdict"] == "no_answer"


def test_replies_shaped_like_qwen3_5s_are_read_by_the_prompt_they_follow():
    """Thinking on: the answer is after the one "</think>", and a reply cut off while thinking has none (read as if
    the prompt had not opened <think>, its guess would be graded). Thinking off: no tag in the reply at all."""
    opened = {"prompt_opens_think": True}
    assert compute_score("math", THOUGHT_THROUGH, "42", **opened)["extracted"] == "42"
    assert compute_score("math", CUT_OFF, "41", **opened)["verdict"] == "no_answer"
    assert compute_score("math", CUT_OFF, "41", prompt_opens_think=False)["score"] == 1.0  # the misreading
    assert compute_score("math", DIRECT, "42", prompt_opens_think=False)["score"] == 1.0
    assert compute_score("math", DIRECT, "42", **opened)["verdict"] == "no_answer"
