"""The visible reply (issue 48): a reply cut off inside the think block the prompt opened has no answer, also when a
`</think>` follows in a turn the model made up after its own end of turn."""
from __future__ import annotations

import pytest

from reward.math.answer import final_answer
from reward.math.reply import visible_reply

THINKING = r"Okay, 3 * 4 = 12, so the answer is $\boxed{12}$."


@pytest.mark.parametrize("end_of_turn", ["<|im_end|>\n<|im_start|>assistant\n", "</s>", "<|eot_id|>",
                                         "<\uff5cend\u2581of\u2581sentence\uff5c>", "<|endoftext|>", "<end_of_turn>"])
def test_a_close_after_the_end_of_turn_is_not_the_replys(end_of_turn):
    reply = THINKING + end_of_turn + "</think>\nThe answer is $\\boxed{12}$."
    assert visible_reply(reply, prompt_opens_think=True) is None
    assert final_answer(reply, prompt_opens_think=True) is None


@pytest.mark.parametrize("reply", [
    THINKING, THINKING + "\n</think>", THINKING + "\n<answer>12</answer>", THINKING + " Let me double-check",
    "<think>\n" + THINKING, THINKING + "</think>\n<think>\nrecheck: \\boxed{12}",
])
def test_a_reply_still_thinking_has_no_answer(reply):
    assert final_answer(reply, prompt_opens_think=True) is None


@pytest.mark.parametrize("reply", [
    THINKING + "\n</think>\n\nThe answer is $\\boxed{12}$.",
    "<think>\n" + THINKING + "\n</think>\n\nThe answer is $\\boxed{12}$.",   # the opening tag repeated
    THINKING + "\n</think>\n\nThe answer is $\\boxed{12}$.<|im_end|>\n<|im_start|>user\nthanks</think> 13",
])
def test_a_closed_think_block_keeps_its_answer(reply):
    assert final_answer(reply, prompt_opens_think=True) == "12"


def test_without_the_option_a_reply_after_its_end_of_turn_is_ignored():
    assert final_answer("<think>\n" + THINKING + "<|im_end|></think> \\boxed{12}") is None
    assert final_answer(r"The answer is $\boxed{12}$.<|im_end|><|im_start|>assistant</think> \boxed{13}") == "12"
