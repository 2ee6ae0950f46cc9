"""Final-answer extraction: think blocks, box groups, answer phrases, trailing formulas, linear time."""
from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reward.math.answer import answer_tag, final_answer, reference_answer
from reward.math.boxes import boxes, last_box_group, matching_braces
from reward.math.reply import visible_reply


@pytest.mark.parametrize("reply, expected", [
    ("a</think>b</think> tail", " tail"),
    ("<think>never closed", None),
    ("plain", "plain"),
    ("x<|im_end|>\n<|im_start|>user\nmore", "x"),
    ("Final Answer: 3. I hope it is correct.", "Final Answer: 3."),
])
def test_visible_reply(reply, expected):
    assert visible_reply(reply) == expected


def test_matching_braces_skips_escaped_braces():
    text = r"{a\{b}{c{d}}"
    assert matching_braces(text) == {0: 5, 6: 11, 8: 10}


@pytest.mark.parametrize("text, contents", [
    (r"\boxed{\frac{1}{2}}", [r"\frac{1}{2}"]),
    (r"\boxed{\{1, 2\}} and \fbox{3}", [r"\{1, 2\}", "3"]),
    (r"$\boxed 5$.", ["5"]),
    (r"\boxed {7}", ["7"]),
    (r"\boxed{3} then \boxed{\frac{1}{2}", ["3"]),
    (r"\boxedx{1}", []),
])
def test_boxes(text, contents):
    assert [c for _, _, c in boxes(text)] == contents


@pytest.mark.parametrize("text, joined", [
    (r"The solutions are $\boxed{-2}$ and $\boxed{1}$.", "-2, 1"),
    (r"$x = \boxed{1}$, $y = \boxed{2}$", "1, 2"),
    (r"\[ \boxed{-2} \quad \text{and} \quad \boxed{1}. \]", "-2, 1"),
    (r"\boxed{5}. So \boxed{5}", "5"),
    (r"\boxed{3}. For the second part, after a long computation we find \boxed{4}", "4"),
    (r"\boxed{\boxed{5}}", "5"),
])
def test_last_box_group(text, joined):
    assert last_box_group(text)[1] == joined


@pytest.mark.parametrize("reply, answer", [
    ("Final Answer: The final answer is $[2,5)$. I hope it is correct.", "[2,5)"),
    ("Final Answer: The volume of the prism is 120.", "120"),
    ("**Final Answer**\n\n7", "7"),
    ("**Answer:** 7", "7"),
    ("Reasoning.\nAnswer: $\\frac{1}{2}$", "\\frac{1}{2}"),
    ("The answer is 3.5.", "3.5"),
    ("So the total is $5 + 3 = 8$ dollars.", "8"),
    (r"We first get \boxed{5}.\n\nFinal Answer: 12", "12"),
    (r"Final Answer: 12. Check: \boxed{5} was part (a).", "5"),
    ("The final answer is correct. We showed the sum is 4.", "4"),
    ("The rectangle is 4 by 6, so its area is $24$.", "24"),
    ("Solving, we get $x = 7$.", "7"),
    ("Therefore, there are 12 sequences that meet the conditions.", "12"),
    ("There are 3 cases with 4 ways each", None),
    ("Let $x = 7$ and then we compute the", None),
    ("I could not solve this problem.", None),
    ("", None),
    (None, None),
])
def test_final_answer(reply, answer):
    assert final_answer(reply) == answer


@pytest.mark.parametrize("reply", [
    "\\boxed{" * 20_000,
    "\\[" * 20_000 + "x",
    "$$" * 20_000 + "x",
    "Final Answer: " * 20_000,
    "{" * 50_000 + "\\boxed{1}",
    "\\boxed{1} and " * 20_000,
    ("The answer is " + "1" * 10 + " and ") * 5_000,
    "9" * 100_000 + ".",
    "1 1/" * 20_000 + ".",
    "\n1." * 20_000 + "\n2",
    "√" * 20_000 + "2.",
    "\nProblem:" * 20_000,
    "The answer is " + "twenty one " * 5_000 + ".",
    "\\boxed{1} hence a+b= " * 10_000,
    "<answer>" * 20_000 + "</answer>",
    "<answer>1</answer>" * 10_000,
    "\\boxed{1" + " " * 20_000 + "2}",
    "So \\boxed{5}. " + "actually " * 10_000,
    "So \\boxed{5}. " + "That is wrong. " * 5_000,
    "So \\boxed{5}. " + "Wait, the total is 7. " * 5_000,
    "So \\boxed{5}. " + "not $5$, " * 5_000,
    "So \\boxed{5}. Wait" + " is 7" * 10_000,
    "#### " * 20_000 + "1",
])
def test_extraction_is_linear_time(reply):
    start = time.perf_counter()
    final_answer(reply)
    final_answer(reply * 2)
    assert time.perf_counter() - start < 2.0


@pytest.mark.parametrize("reference, answer", [
    ("7", "7"),
    (r"\boxed{7}", "7"),
    (r"Solving, $x = 1/5$, or $\boxed{20}$ percent.", "20"),
    (r"\(\boxed{1}\) and \(\boxed{-2}\).", "1, -2"),
    (r"\boxed{}", r"\boxed{}"),
])
def test_reference_answer(reference, answer):
    assert reference_answer(reference) == answer


_fragment = st.sampled_from(["<think>", "</think>", "\\boxed{", "\\boxed ", "\\fbox{", "}", "{", "\\{", "$", "$$",
                             "\\[", "\\]", "Final Answer:", "The answer is", "Answer:", "**", " is ", "=", ".", "\n",
                             "\n\n", "7", "-3.5", "\\frac{1}{2}", "x", "<|im_end|>", "I hope it is correct.",
                             "and", ","])


@settings(max_examples=300, deadline=None)
@given(st.lists(_fragment, max_size=30).map("".join))
def test_final_answer_never_raises_and_returns_text_of_the_reply(reply):
    answer = final_answer(reply)
    assert answer is None or (isinstance(answer, str) and answer.strip())


@pytest.mark.parametrize("text, content", [
    ("r</think> <answer> 5 </answer>", " 5 "),
    ("<answer>4</answer> then <answer>5</answer>", "5"),
    ("<answer>5</answer> No, the answer is 6.", None),
    ("<answer>5</answer> so $\\boxed{6}$", None),
    ("<answer>5", None),
    ("5</answer>", None),
])
def test_answer_tag(text, content):
    """Open-Reasoner-Zero's format ("... </think> <answer> X </answer>"): the last complete block, unless a later box
    or phrase takes it back."""
    assert answer_tag(text) == content
