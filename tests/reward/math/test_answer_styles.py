r"""Issue 40's classes: answer styles of GSM8K, OlympiadBench, AMC and reasoning traces, one test per rule, written
from the sources' own formats and graders (read, not copied):
- GSM8K: openai/grade-school-math `grade_school_math/dataset.py` (`ANS_RE`: the answer is the number after "#### ");
- OlympiadBench: OpenBMB/OlympiadBench `inference/code/math_judger.py` (`special_signal_map`: "，" -> ",",
  `\approx` -> "="; `\mathrm{~m}` unwrapped; precision 1e-8 unless the problem states its own error);
- math-verify `grader.py` (`sympy_numeric_eq`: a float and an exact number are equal when both round to 6 decimals,
  "we want 1/3 == 0.333333 to work"): the tolerance class, where we depart (docs/eval.md says why);
- AMC answer keys (`\textbf{(C)}\ 12`: letter and value);
- reasoning traces: DeepScaleR's rule-based reward (a reply without `</think>` scores 0, the answer is read after the
  last `</think>`) and Open-Reasoner-Zero's "Assistant: <think>" prompt; a think block reopened after `</think>` and
  cut off is the same unfinished reasoning.
"""
from __future__ import annotations

import pytest

from reward.math.answer import final_answer, reference_answer
from reward.math.equal import answers_equal


def graded(reply: str, reference: str, prompt_opens_think: bool = False) -> bool:
    answer = final_answer(reply, prompt_opens_think)
    return answer is not None and answers_equal(answer, reference)


# --- 1. GSM8K's answer line ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("reply, answer", [
    ("Janet sells 16 - 3 - 4 = 9 eggs.\nShe makes 9 * 2 = 18 dollars.\n#### 18", "18"),
    ("He pays 1,200 + 400 = 1,600 dollars in all.\n#### 1,600", "1,600"),
    ("The change is -3 degrees.\n\n#### -3", "-3"),
    ("So each box holds 2.5 kg.\n####  2.5\n", "2.5"), ("It takes 10 / 2 = 5 hours.\n#### 5 hours", "5 hours"),
])
def test_gsm8k_answer_line_is_the_answer(reply, answer):
    """grade-school-math dataset.py: the final answer is the number that follows "#### " on the solution's last
    line (commas removed when compared)."""
    assert final_answer(reply) == answer


@pytest.mark.parametrize("reference, answer", [
    ("Natalia sold 48/2 = <<48/2=24>>24 clips in May.\nNatalia sold 48+24 = <<48+24=72>>72 clips.\n#### 72", "72"),
    ("The total is 2 * 800 = <<2*800=1600>>1600 dollars.\n#### 1,600", "1,600"),
])
def test_a_gsm8k_solution_as_reference_gives_its_answer_line(reference, answer):
    """A GSM8K record's `answer` field is the worked solution; its answer is the "#### " line (dataset.py)."""
    assert reference_answer(reference) == answer


@pytest.mark.parametrize("reply", [
    "#### 3. Count the remaining eggs\nShe keeps the rest",
    "#### Step 2\nNow we multiply by the price",
])
def test_a_markdown_heading_is_no_gsm8k_answer(reply):
    """A level-4 markdown heading ("#### 3. Count ...") is a section title, not GSM8K's answer line: only a line that
    holds nothing but "####" and a number is one."""
    assert final_answer(reply) is None


# --- 2. A correction in prose after the box -----------------------------------------------------------------------

@pytest.mark.parametrize("reply, answer", [
    (r"So the answer is $\boxed{12}$. Wait, I miscounted the corners: the total is actually 14.", "14"),
    (r"Thus $\boxed{36}$. Hmm, the side should be 5, so the area should be $25$.", "25"),
    (r"Hence the sum is $\boxed{210}$. Actually, the last term was counted twice, so the sum is 190.", "190"),
])
def test_a_correction_after_the_box_replaces_it(reply, answer):
    """A later sentence that retracts the box and states a value ("is actually 14", "should be 25") is the
    reply's last commitment, as an answer phrase would be."""
    assert final_answer(reply) == answer


@pytest.mark.parametrize("reply", [
    r"So the answer is $\boxed{12}$. Wait, that is wrong: I mixed up the edges and the faces.",
    r"So the answer is $\boxed{12}$. Oops, I made a mistake in the second step.",
    r"So the answer is $\boxed{12}$. Hmm, I made an arithmetic error somewhere.",
    r"So the answer is $\boxed{12}$. Hold on, this is incorrect.",
])
def test_a_retraction_without_a_new_value_leaves_no_answer(reply):
    """A box the reply takes back without stating another value is no commitment (a false negative at worst)."""
    assert final_answer(reply) is None


@pytest.mark.parametrize("reply", [
    r"So the answer is $\boxed{12}$. This is actually a neat way to count the edges.",
    r"So the answer is $\boxed{12}$. Let me double-check for errors: $3 \cdot 4 = 12$. No mistake.",
    r"So the answer is $\boxed{12}$. I checked it twice and found no error.",
    r"So the answer is $\boxed{12}$. This avoids the common error of counting each corner twice.",
    r"So the answer is $\boxed{12}$. A frequent mistake is to count the faces instead.",
])
def test_a_remark_or_a_check_after_the_box_keeps_it(reply):
    assert final_answer(reply) == "12"


def test_a_retraction_of_another_value_keeps_the_box():
    """"choosing 4 would be wrong" names another value before the cue: a remark, not a retraction of 12."""
    assert final_answer(r"So the answer is $\boxed{12}$. Note that choosing 4 would be wrong.") == "12"
    assert final_answer(r"So the answer is $\boxed{12}$. Hmm, 12 is wrong.") is None


# --- 3. Selection sentences between candidate boxes ---------------------------------------------------------------

@pytest.mark.parametrize("reply, answer", [
    (r"The roots are $\boxed{3}$ and $\boxed{5}$; the largest is $\boxed{5}$.", "5"),
    (r"Candidates: $\boxed{-2}$, $\boxed{4}$. Only the positive one works: $\boxed{4}$", "4"),
    (r"We get $\boxed{6}$ or $\boxed{8}$, and the smallest is $\boxed{6}$.", "6"),
    (r"Both $\boxed{1}$ and $\boxed{2}$ satisfy the equation, but only the valid one is $\boxed{2}$.", "2"),
])
def test_a_selection_between_boxes_picks_one(reply, answer):
    """A short phrase that picks one candidate ("the largest is", "only the positive one") ends the box group."""
    assert final_answer(reply) == answer


def test_a_comparative_between_boxes_selects():
    assert final_answer(r"So $x = \boxed{3}$ or $x = \boxed{5}$; the larger root is $\boxed{5}$.") == "5"


def test_boxes_joined_by_and_still_form_a_list():
    assert final_answer(r"So $x = \boxed{1}$ and $y = \boxed{2}$.") == "1, 2"


# --- 4. An unboxed chained equality followed by a clause ----------------------------------------------------------

@pytest.mark.parametrize("reply, answer", [
    (r"So the total is $3 \times 4 = 12$, which matches the number of edges of a cube.", "12"),
    (r"Altogether $n = 2 + 5 + 9 = 16$, as we wanted to show in the beginning of the proof.", "16"),
    (r"The answer is $\frac{6}{8} = \frac{3}{4}$, since the numerator and the denominator share a factor.",
     r"\frac{3}{4}"),
])
def test_a_chained_equality_before_a_clause_is_the_answer(reply, answer):
    assert final_answer(reply) == answer


def test_unit_words_may_sit_between_the_equality_and_its_clause():
    assert final_answer(r"She earns $9 \cdot 2 = 18$ dollars a day, which is what the question asks.") == "18"


@pytest.mark.parametrize("reply", [
    r"So the total is $3 \times 4 = 12$, which simplifies to 4 after dividing by 3.",
    r"So the total is $3 \times 4 = 12$, which we then divide by $3$ to get the number of groups.",
])
def test_a_clause_that_goes_on_computing_keeps_no_equality(reply):
    """A trailing clause with its own number or formula may derive something else: the equality is not the answer."""
    assert final_answer(reply) != "12"


# --- 5. Normalisation gaps ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("prediction, reference", [
    ("1，2，3", "1, 2, 3"), ("1、2、3", "1, 2, 3"), ("(1，2)", "(1, 2)"),
])
def test_non_ascii_list_separators(prediction, reference):
    """OlympiadBench math_judger `special_signal_map` maps the full-width comma to ","; the ideographic comma is
    the same separator."""
    assert answers_equal(prediction, reference)


def test_a_full_width_comma_is_a_list_not_thousands():
    assert not answers_equal("1，234", "1234")


@pytest.mark.parametrize("prediction, reference, equal", [
    (r"\approx 1.5", "1.5", True), ("≈ 2.72", "2.72", True), (r"v \approx 3.0", "3", True),
    (r"\approx 1.6", "1.5", False), (r"\frac{\sqrt{3}}{2} \approx 0.866", r"\frac{\sqrt{3}}{2}", True),
    (r"\frac{\sqrt{3}}{2} \approx 0.866", r"\frac{\sqrt{2}}{2}", False),
])
def test_an_approximation_sign_before_the_value(prediction, reference, equal):
    r"""OlympiadBench reads `\approx` as "="; an exact value followed by its rounding is the exact value."""
    assert answers_equal(prediction, reference) is equal


@pytest.mark.parametrize("prediction, reference, equal", [
    ("2.5", r"2.5 \mathrm{~m} / \mathrm{s}", True),
    (r"2.5 \mathrm{~m/s}", r"2.5 \mathrm{~m} \cdot \mathrm{s}^{-1}", True), ("40", r"40 \mathrm{~J}", True),
    (r"1.2 \times 10^{3}", r"1.2 \times 10^{3} \mathrm{~kg} \cdot \mathrm{m}^{-3}", True),
    ("9.8", r"9.8 \mathrm{~m} / \mathrm{s}^{2}", True), ("2.6", r"2.5 \mathrm{~m} / \mathrm{s}", False),
])
def test_olympiadbench_units_in_the_reference(prediction, reference, equal):
    r"""OlympiadBench writes units as split `\mathrm{~..}` groups joined by "/" or `\cdot`; math_judger unwraps
    `\mathrm{~m}`. A compound unit after the number is dropped as a simple one is."""
    assert answers_equal(prediction, reference) is equal


@pytest.mark.parametrize("prediction, reference", [
    (r"1.5 \mathrm{~km} / \mathrm{s}", r"1.5 \mathrm{~m} / \mathrm{s}"), (r"3 \text{ cm}", "3 m"),
])
def test_two_different_units_are_different_answers(prediction, reference):
    """A unit is dropped only to compare the numbers; two different units (no conversion) are unequal."""
    assert not answers_equal(prediction, reference)


@pytest.mark.parametrize("prediction, reference", [
    (r"5 \text{ cm}^2", r"5 \text{ square cm}"), ("3 miles", r"3 \text{ mile}"), ("2 feet", "2 foot"),
    (r"2.5 \mathrm{~m/s}", r"2.5 \mathrm{~m} \cdot \mathrm{s}^{-1}"),
    (r"5 \text{ cm}^2", r"5 \text{ square centimeters}"), ("3 hours", r"3 \text{ h}"), ("4 inches", r"4 \text{ in}"),
    ("60 mph", r"60 \text{ mi/h}"), (r"10 \text{ square units}", r"10 \text{ cm}^2"), ("7 seconds", r"7 \text{ s}"),
    ("2 kilograms", r"2 \text{ kg}"), ("30 minutes", r"30 \text{ min}"),
])
def test_one_unit_written_two_ways(prediction, reference):
    assert answers_equal(prediction, reference)


# --- 6. Words inside the box --------------------------------------------------------------------------------------

@pytest.mark.parametrize("prediction, reference", [
    (r"f(x) = 2x \text{ for all } x", "f(x)=2x"), (r"f(x)=x^2 \text{ for all real } x", "x^2"),
    (r"f(x) = x + 1 \quad \forall x \in \mathbb{R}", "f(x)=x+1"), (r"f(x)=3x", r"f(x) = 3x \text{ for all } x"),
])
def test_a_universal_quantifier_inside_the_box(prediction, reference):
    """Omni-MATH functional-equation answers carry "for all x"; the quantifier over every x adds nothing."""
    assert answers_equal(prediction, reference)


@pytest.mark.parametrize("prediction, reference", [
    (r"f(x) = 2x \text{ for all } x", "f(x)=3x"), (r"f(x) = x \text{ for all } x > 0", "f(x)=x"),
])
def test_a_quantifier_does_not_hide_a_difference(prediction, reference):
    """A different function stays different; a restricted domain ("x > 0") is a condition, not dropped."""
    assert not answers_equal(prediction, reference)


# --- 7. Multiple choice by value ----------------------------------------------------------------------------------

@pytest.mark.parametrize("prediction, reference, equal", [
    ("12", r"\textbf{(C)}\ 12", True), (r"\frac{1}{2}", r"\textbf{(B) }\frac12", True),
    ("13", r"\textbf{(C)}\ 12", False), ("12", r"\textbf{(C)}", False), ("(C)", r"\textbf{(C) }12", True),
    (r"\textbf{(B)}\ 25", "25", True), (r"\textbf{(B)}\ 25", "26", False),
])
def test_a_choice_reference_accepts_its_value(prediction, reference, equal):
    """An AMC answer key holds the letter and the value; a reply that states only the value names the same
    option. A bare letter reference says nothing about the value (a value reply is then a false negative)."""
    assert answers_equal(prediction, reference) is equal


# --- 8. Numeric tolerance -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("prediction, reference, equal", [
    ("0.142857", r"\frac{1}{7}", False), ("0.333333", r"\frac{1}{3}", False), ("1.414214", r"\sqrt{2}", False),
    ("2.0000001", "2", False), ("0.5", r"\frac{1}{2}", True), ("0.125", r"\frac18", True), ("2.0", "2", True),
    (r"\approx 0.1429", r"\frac{1}{7}", True), (r"\approx 0.1427", r"\frac{1}{7}", False),
    (r"\approx 0.14", r"\frac{1}{7}", False), (r"\approx 1.414", r"\sqrt{2}", False),
    ("0.0833333333333333", r"\frac{1}{12}", True), ("0.08333333333", r"\frac{1}{12}", True),
    ("0.083333333", r"\frac{1}{12}", False), ("0.08333333334", r"\frac{1}{12}", True),
    ("(0.142857, 1)", r"(\frac{1}{7}, 1)", False), ("(0.5, 1)", r"(\frac{1}{2}, 1)", True),
    (r"\frac{1}{3}", "0.333333", True), ("0.333333", "0.333333", True), ("1.5", "1.50", True),
    ("0.1000001", "0.1", False), (r"\approx 1.52", "1.5", False),
])
def test_an_exact_reference_needs_an_exact_or_clearly_rounded_answer(prediction, reference, equal):
    """math-verify rounds a float and an exact number to 6 decimals before comparing, so 0.142857 = 1/7. We read
    a decimal against an exact reference (no decimal point) as the exact rational it writes; it may be a rounding
    (or truncation) of the reference when it says so (an approximation sign) with at least 3 significant digits, or
    without the sign with at least 10, each right. A decimal reference is itself rounded: math-verify's rule stays.
    Since issue 48 a rounding of an irrational reference (1.414 with a sign, for the square root of 2) is never its
    answer by default (tests/reward/math/test_decimals.py)."""
    assert answers_equal(prediction, reference) is equal


# --- 9. Cut off inside a thinking block ---------------------------------------------------------------------------

@pytest.mark.parametrize("reply, prompt_opens_think", [
    ("</think> The answer is \\boxed{5}. <think> hmm, let me recheck the count: \\boxed{6}", False),
    ("first pass \\boxed{4}</think>\n<think>\nsecond pass, maybe \\boxed{4}", True),
    ("2 + 3 = 5, so \\boxed{5}", True),
    ("<think>2 + 3 = 5 so the answer is 5", False),
])
def test_a_reply_cut_off_while_thinking_has_no_answer(reply, prompt_opens_think):
    """A think block that never closes (one the prompt opened, or one the reply reopened after `</think>`) is
    unfinished reasoning: the reply was cut off and commits to nothing."""
    assert final_answer(reply, prompt_opens_think) is None


def test_a_closed_second_think_block_is_reasoning_too():
    assert final_answer("</think> draft \\boxed{5} <think> recheck \\boxed{6} </think> So \\boxed{6}.") == "6"
