r"""A box followed by prose that corrects the same quantity to another value (issue 57): 24 phrasings written for the
issue before the fix, none taken from `test_retraction.py`. Each reply boxes 12 and then states the quantity is 14;
its final answer is 14. Controls: a check, a restatement or a remark about another value keeps the box.
Before the fix the grader read 4 of the 24 (16 kept the box, so a reference of 12 was paid; 3 read a garbled value
such as "should read 14", 1 none)."""
from __future__ import annotations

import pytest

from reward.math.answer import final_answer
from reward.math.equal import answers_equal

CORRECTED = [
    r"So the answer is $\boxed{12}$."
    "\n\n" r"Hmm, recounting the apples gives 14, so the final answer should read 14.",
    r"$\boxed{12}$"
    "\n\n" r"Upon review, I see the total is 14 rather than 12.",
    r"Thus $\boxed{12}$. Let me double-check: 5 + 9 = 14. So the correct total is 14.",
    "Therefore the area is $\\boxed{12}$.\nEdit: the area is 14; I used the wrong base earlier.",
    r"\boxed{12}"
    "\n\n" r"On reflection, the number of ways is 14, since the two symmetric cases were left out.",
    r"Answer: $\boxed{12}$. Re-examining the last step, 3 × 4 + 2 = 14, so the sum comes to 14 instead of 12.",
    r"The result is $\boxed{12}$. Rechecking, I get 14 for the total, so 14 is the right answer.",
    r"$\boxed{12}$. Hmm, this overlooks the case n = 0; including it, the count is 14.",
    r"So $x = \boxed{12}$. However, plugging back in shows x = 12 fails; the valid solution is x = 14.",
    r"\boxed{12}"
    "\n\n" r"Update: after fixing the arithmetic error in step 2, the final value is 14.",
    r"Hence the answer is \boxed{12}."
    "\n\n" r"I need to revise this: the answer becomes 14.",
    r"The total is $\boxed{12}$. Sorry, I meant 14.",
    r"$\boxed{12}$"
    "\n\n" r"Looking again, the sum of the digits is 14, not 12.",
    r"We get $\boxed{12}$. Double-checking by direct counting: there are 14 such numbers, so the answer is 14.",
    r"The answer: \boxed{12}. Recalculating carefully, the total comes out to 14.",
    r"$\boxed{12}$. On a second check, the correct value of the expression is $14$.",
    r"\boxed{12}"
    "\n\n" r"My mistake: the distance is 14 miles.",
    r"\boxed{12}"
    "\n\n" r"I realize I misread the question: it asks for the total, which is 14.",
    r"So we have $\boxed{12}$. Let me redo the last step: 6 + 8 = 14. The answer is therefore 14.",
    r"The answer is $\boxed{12}$."
    "\n\n" r"Erratum: the final count should be 14, because the case k = 3 was missing.",
    r"$\boxed{12}$ is what I first got, but the correct answer is 14.",
    r"Answer: $\boxed{12}$"
    "\n\n" r"No, hang on: it's 14. I dropped a carry.",
    r"The perimeter is $\boxed{12}$. That was an error: the perimeter is in fact 14.",
    r"So $\boxed{12}$ people. Recount: there are really 14 people at the table.",
]

KEPT = [
    r"$\boxed{12}$. Let me double-check: 5 + 7 = 12. ✓ So the answer is 12.",
    r"$\boxed{12}$. Checking: each of the 6 pairs gives 2, so 6 × 2 = 12.",
    r"$\boxed{12}$. Note that forgetting the zero case would give 11, which is wrong.",
    r"$\boxed{12}$. Rechecking gives 12 again, so the answer stands.",
    r"\boxed{12}. (A common mistake is to answer 14 by double counting.)",
    r"The answer is $\boxed{12}$. In fact, 12 is the only value that works; 14 would exceed the bound.",
    r"$\boxed{12}$. The other root, 14, is outside the domain.",
]


@pytest.mark.parametrize("reply", CORRECTED, ids=[f"corrected-{i}" for i in range(len(CORRECTED))])
def test_a_prose_correction_after_the_box_names_the_answer(reply):
    answer = final_answer(reply)
    assert answer is not None and answers_equal(answer, "14") and not answers_equal(answer, "12"), answer


@pytest.mark.parametrize("reply", KEPT, ids=[f"kept-{i}" for i in range(len(KEPT))])
def test_a_check_or_a_remark_keeps_the_box(reply):
    assert final_answer(reply) == "12"
