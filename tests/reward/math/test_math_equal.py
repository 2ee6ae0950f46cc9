"""Equivalence: the deliberate normalisations and the whole-string parse (no truncated-prefix matches)."""
from __future__ import annotations

import time

import pytest

from reward.math.canonical import canonical, has_percent
from reward.math.equal import answers_equal, to_sympy


@pytest.mark.parametrize("answer, expected", [
    (r"0.\overline{45}", r"\frac{5}{11}"),
    (r"-1.2\overline{3}", r"-\frac{37}{30}"),
    (r"\$16,\!386.20", "16386.20"),
    (r"12{,}000", "12000"),
    ("32, 349", "32, 349"),
    (r"15\mbox{ cm}^2", "15"),
    (r"3+4\mathrm{i}", "3+4i"),
    (r"90^{\circ}", "90"),
    (r"28\%", "28"),
    (r"\boxed{\dfrac{1}{2}}", r"\frac{1}{2}"),
    (r"x \in [1, 2]", "[1, 2]"),
    (r"\text{Evelyn}", r"\text{Evelyn}"),
    (r"6 \text{ and } 8", "6, 8"),
])
def test_canonical(answer, expected):
    assert canonical(answer) == expected


def test_percent_detection():
    assert has_percent(r"20\%") and has_percent("20 percent") and not has_percent("20")


@pytest.mark.parametrize("answer", [r"3+\frac{1}{", r"0.\overlin{45}", r"5)(", r"\frac{1}{2} \foo"])
def test_whole_string_parse_or_nothing(answer):
    """math-verify would keep a parsable prefix ("3", "0", "5"); the whole string must parse here."""
    assert to_sympy(answer) is None


@pytest.mark.parametrize("prediction, reference, equal", [
    (r"0.\overline{45}", r"0.\overline{36}", False),
    (r"0.\overline{36}", r"\frac{4}{11}", True),
    (r"3+4\mathrm{i}", "7", False),
    (r"3+\frac{1}{\mathrm{e}^2}", "3", False),
    (r"25\%", r"\frac{1}{4}", True),
    ("25", r"25\%", True),
    (r"2\%", r"20\%", False),
    (r"\text{(C)}", "C", True),
    ("ab", "ba", False),
    ("", "1", False),
    (None, "1", False),
    ("1", " ", False),
])
def test_answers_equal(prediction, reference, equal):
    assert answers_equal(prediction, reference) is equal


def test_model_output_is_never_executed(tmp_path):
    marker = tmp_path / "pwned"
    payload = f"__import__('pathlib').Path({str(marker)!r}).touch()"
    assert not answers_equal(payload, "1") and not marker.exists()


@pytest.mark.parametrize("answer", ["9" * 100_000, "1." * 50_000, "1," * 50_000, "7 " * 50_000 + "3/4",
                                    "\u221a" * 50_000, r"\text{ m}" * 10_000, "twenty " * 20_000])
def test_huge_answers_are_bounded_before_sympy(answer):
    """Issue 34: a 100,000-digit literal used the whole 5 s limit (the repeating-decimal regex was quadratic, then
    sympy parsed the literal). Normalising is linear, and an answer over MAX_CHARS never reaches sympy."""
    import time

    start = time.perf_counter()
    equal = answers_equal(answer, "3")
    assert not equal and time.perf_counter() - start < 1.0


@pytest.mark.parametrize("prediction, reference, equal", [
    (r"0.5\%", "0.5", False), (r"50\%", "0.5", True), (r"50\%", "50", True), ("0.5", r"50\%", True),
    ("4s", "4", False), (r"4\text{ s}", "4", True), (r"7 \text{ or more}", "7", False),
    ("7 3/4", r"\frac{31}{4}", True), ("twenty-one", "21", True), ("2.5 million", "2500000", True),
    ("\u22125", "-5", True), ("3\u221a2", r"3\sqrt{2}", True), (r"\textbf{(D)}", r"\text{(D)}", True),
    ("yes", r"\text{Yes}", True), ("no", "yes", False),
    ("204_8", "204_5", False), ("204_{5}", "204_5", True), ("1011", "1011_2", True), ("11", "1011_2", False),
    ("A3_{16}", "a3_16", True), ("x", "x_1", False), ("x_1", "x_2", False),
    (r"-(\text{Evelyn})", r"\text{Evelyn}", False), (r"\text{(C)}+1", r"\text{C}", False),
    (r"\text{(C)} \text{ or more}", r"\text{C}", False), (r"0 \text{ or more}", "0", False),
    ("well-known", r"\text{well-known}", True),
])
def test_round_two_equivalence(prediction, reference, equal):
    assert answers_equal(prediction, reference) is equal


@pytest.mark.parametrize("answer", ["1" + " " * 20_000 + "2", "1" + " \n" * 10_000 + "x", "1" + ", " * 10_000,
                                    "1" + " \\cdot" * 5_000, "\\approx " * 5_000 + "1"])
def test_normalising_is_linear_in_whitespace_runs(answer):
    """Patterns that open with \\s* are quadratic in a whitespace run (a 20,000-space box took 108 s in canonical);
    runs are cut to one space first."""
    start = time.perf_counter()
    canonical(answer), has_percent(answer)
    assert time.perf_counter() - start < 1.0
