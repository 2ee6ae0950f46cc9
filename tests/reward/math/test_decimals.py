r"""Decimals against an exact reference (issue 48): a rounding of an irrational reference (a surd, pi, e, a logarithm)
is never its answer unless the source's own grading accepts roundings (option `rounded_irrationals`); an exact
rational reference keeps issue 40's rule (a marked rounding with 3 right digits, or 10 right digits)."""
from __future__ import annotations

import pytest

from reward.math.equal import answers_equal
from reward.math.score import compute_score

ROUNDINGS_OF_IRRATIONALS = [
    (r"\approx 3.464", r"2\sqrt{3}"), (r"\approx 3.46", r"2\sqrt{3}"), ("3.464101615", r"2\sqrt{3}"),
    (r"s \approx 3.464", r"2\sqrt{3}"), (r"\approx 3.1416", r"\pi"), ("3.14159265359", r"\pi"),
    (r"\approx 0.693", r"\ln 2"), (r"\approx 1.260", r"\sqrt[3]{2}"), ("5.2360679775", r"3 + \sqrt{5}"),
    ("\u2248 1.414", r"\sqrt{2}"), (r"\sim 7.389", "e^{2}"), (r"\approx 0.866", r"\frac{\sqrt{3}}{2}"),
    (r"\approx 5.657\text{ cm}", r"4\sqrt{2}\text{ cm}"), (r"\approx -1.414", r"-\sqrt{2}"),
]


@pytest.mark.parametrize("prediction, reference", ROUNDINGS_OF_IRRATIONALS)
def test_a_rounding_never_matches_an_irrational_reference(prediction, reference):
    assert not answers_equal(prediction, reference)


@pytest.mark.parametrize("prediction, reference", ROUNDINGS_OF_IRRATIONALS[:10])
def test_a_source_that_accepts_roundings_gets_them(prediction, reference):
    assert answers_equal(prediction, reference, rounded_irrationals=True)


@pytest.mark.parametrize("prediction, reference", [
    (r"\approx 3.466", r"2\sqrt{3}"), ("3.464", r"2\sqrt{3}"), (r"\approx 3.4", r"2\sqrt{3}"),
    ("3.464102", r"2\sqrt{3}"),
])
def test_a_source_that_accepts_roundings_still_needs_them_right(prediction, reference):
    """The tolerance is issue 40's: the reference cut at the decimal's last digit, 3 digits with a sign, 10 without."""
    assert not answers_equal(prediction, reference, rounded_irrationals=True)


@pytest.mark.parametrize("prediction, reference", [
    (r"2\sqrt{3} \approx 3.464", r"2\sqrt{3}"), (r"\sqrt{12}", r"2\sqrt{3}"), (r"\approx 0.333", r"\frac{1}{3}"),
    (r"\approx 0.1429", r"\frac{1}{7}"), ("0.0833333333333", r"\frac{1}{12}"), ("0.5", r"\frac{1}{2}"),
    (r"\approx 1.5", "1.5"), (r"\frac{\sqrt{3}}{2} \approx 0.866", r"\frac{\sqrt{3}}{2}"),
])
def test_exact_answers_and_rational_references_keep_their_verdict(prediction, reference):
    assert answers_equal(prediction, reference)


def test_the_option_reaches_the_grader_through_compute_score():
    reply = r"So the final answer is \boxed{\approx 3.464}."
    assert compute_score("math", reply, r"2\sqrt{3}")["score"] == 0.0
    assert compute_score("math", reply, r"2\sqrt{3}", rounded_irrationals=True)["score"] == 1.0
