"""Boxed-answer extraction and math-verify grading on tricky cases; reward.math contract."""
from __future__ import annotations

import pytest

from reward.math import compute_score
from sdpo_eval.answers import extract_answer, grade, is_equivalent, last_boxed


@pytest.mark.parametrize("text, expected", [
    (r"so the answer is $\boxed{\frac{1}{2}}$.", r"\frac{1}{2}"),
    (r"first \boxed{1}, finally \boxed{\{1, 2\}}", r"\{1, 2\}"),
    (r"nested \boxed{\sqrt{\frac{a^{2}}{b}}} done", r"\sqrt{\frac{a^{2}}{b}}"),
    (r"\fbox{42}", "42"),
    (r"\boxed 5$ and more", "5"),
    (r"\boxed{3} then a broken \boxed{\frac{1}{2}", "3"),
    (r"\boxed{} empty", ""),
])
def test_last_boxed(text, expected):
    assert last_boxed(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("Adding gives 7. The answer is $7$.", "7"),
    ("Final Answer: The final answer is $[2,5)$. I hope it is correct.", "[2,5)"),
    (r"The answer is 3, but \boxed{4} is boxed", "4"),
    ("no conclusion at all", None),
    ("", None),
    (None, None),
])
def test_extract_answer(text, expected):
    assert extract_answer(text) == expected


@pytest.mark.parametrize("prediction, reference, equal", [
    ("1/2", r"\frac{1}{2}", True),
    (r"\dfrac{3}{4}", r"\frac34", True),
    ("0.5", r"\frac{1}{2}", True),
    (r"10\text{ cm}", "10", True),
    (r"90^\circ", "90", True),
    (r"\$5.00", "5", True),
    ("[2,5)", "[2,5)", True),
    ("(2,5]", "[2,5)", False),
    (r"\left( -\infty, 3 \right)", r"(-\infty,3)", True),
    (r"\frac{\sqrt{2}}{2}", r"\sqrt{2}/2", True),
    ("x^2+1", "1+x^2", True),
    ("3", "4", False),
    (r"\frac{1}{3}", "0.33", False),
    ("", "1", False),
    (None, "1", False),
    (r"\text{(C)}", r"\text{(C)}", True),
])
def test_is_equivalent(prediction, reference, equal):
    assert is_equivalent(prediction, reference) is equal


def test_grade_never_executes_model_output(tmp_path):
    marker = tmp_path / "pwned"
    payload = f"__import__('pathlib').Path({str(marker)!r}).touch()"
    correct, extracted = grade(rf"\boxed{{{payload}}}", "1")
    assert not correct and extracted == payload and not marker.exists()


def test_reward_math_compute_score():
    assert compute_score("math", r"Thus $\boxed{\dfrac{1}{2}}$.", r"\frac12") == {"score": 1.0, "extracted": r"\dfrac{1}{2}"}
    assert compute_score("math", r"\boxed{3}", r"\boxed{4}") == {"score": 0.0, "extracted": "3"}
    assert compute_score("math", "I do not know", "4", extra_info={"index": 0}) == {"score": 0.0, "extracted": ""}
    assert compute_score("math", None, "4")["score"] == 0.0


def test_grading_off_the_main_thread():
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        assert pool.submit(grade, r"\boxed{0.25}", r"\frac{1}{4}").result() == (True, "0.25")
