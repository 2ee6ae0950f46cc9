r"""Answer lines of issue 57: GSM8K's `####` line with a percentage, and PRM800K's `# Answer` line that lists the
solutions joined by "or" (`x = 3 or x = 5`) against a comma-separated reference. Formats from the sources: GSM8K's
`ANS_RE` reads the text after "#### " (openai/grade-school-math `dataset.py`); PRM800K's replies end with a
"# Answer" heading and the answer on the following line (openai/prm800k, `grading/grader.py` reads it as given)."""
from __future__ import annotations

import pytest

from reward.math.answer import final_answer, reference_answer
from reward.math.equal import answers_equal


def graded(reply: str, reference: str) -> bool:
    answer = final_answer(reply)
    return answer is not None and answers_equal(answer, reference_answer(reference))


@pytest.mark.parametrize("reply, reference, correct", [
    ("She saves 5 of every 20 dollars, 5 / 20 = 25%.\n#### 25%", "25", True),
    ("So a quarter of them.\n#### 25 %", "25", True),
    ("The discount is 12.5 percent.\n#### 12.5%", "12.5", True),
    ("The share grew by 40%.\n#### 40\\%", "40", True),
    ("Half of them left.\n#### 50%", "The share is 50 / 100 = 50%.\n#### 50%", True),
    ("So 25% of them.\n#### 30%", "25", False),
    ("So 25% of them.\n#### 25%", "30", False),
])
def test_a_gsm8k_line_with_a_percentage(reply, reference, correct):
    assert graded(reply, reference) is correct


@pytest.mark.parametrize("reply, reference, correct", [
    ("Factoring gives (x - 3)(x - 5) = 0.\n\n# Answer\n\nx = 3 or x = 5", "3, 5", True),
    ("So the roots follow.\n\n# Answer\n\n$x = 3$ or $x = 5$", "5, 3", True),
    ("# Answer\n\n$x=-1$ or $x=4$", "-1,4", True),
    ("# Answer\n\nx = \\frac{1}{2} or x = -3", "-3, \\frac{1}{2}", True),
    ("# Answer\n\nx = 1, x = 2, or x = 3", "1, 2, 3", True),
    ("# Answer\n\n3 or 5", "3, 5", True),
    ("# Answer\n\nx = 3 or x = 5", "3", False),
    ("# Answer\n\nx = 3 or x = 4", "3, 5", False),
    ("# Answer\n\nx = 3 or y = 5", "3, 5", False),   # two unknowns: a pair, not a list of solutions
])
def test_a_prm800k_answer_listing_solutions_with_or(reply, reference, correct):
    assert graded(reply, reference) is correct


@pytest.mark.parametrize("reply, reference, correct", [
    ("Solving the quadratic, the solutions are $x = 3$ or $x = 5$.", "3, 5", True),
    ("Therefore $x = -2$ or $x = 2$.", "2, -2", True),
    ("Therefore $x = -2$ or $x = 2$.", "2", False),
    ("We check the values $x = 1$ and $y = 2$.", "1, 2", False),   # two unknowns: no list of solutions
])
def test_a_last_sentence_listing_solutions(reply, reference, correct):
    assert graded(reply, reference) is correct
