r"""A box followed by prose that corrects the same quantity to another value (issue 57): 24 phrasings written for the
issue before the fix, none taken from `test_retraction.py`. Each reply boxes 12 and then states the quantity is 14;
its final answer is 14. Controls: a check, a restatement or a remark about another value keeps the box.
Before the fix the grader read 4 of the 24 (16 kept the box, so a reference of 12 was paid; 3 read a garbled value
such as "should read 14", 1 none); after it 24/24, which overstates it (the fix was written against them).
Two later batches measure it: batch 2 (11 phrasings, box 7 then 9, written after the first fix) was read 5/11 on
its first run, batch 3 (12 phrasings, box 20 then 24, written after the second) 5/12; the cues were widened after
each, to 11/11 and 11/12. The miss left (`PLUG_BACK`) checks the box by plugging it in, naming it, before it
concludes another value, which the rule reads as a restatement of the box. Every batch's controls keep the box."""
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


LATER_NINE = [   # box 7, then 9 (batch 2)
 r"$\boxed{7}$\n\nRevisiting the problem statement, the question wants the number of integers, which is 9.",
 r"The answer is $\boxed{7}$. Having checked the endpoints again, I need to include both, so the count is 9.",
 r"$\boxed{7}$. I think I was off by two: the actual count is 9.",
 r"Thus the minimum value is $\boxed{7}$. Correcting an arithmetic slip above, the minimum value is 9.",
 r"\boxed{7}\n\nP.S. The sum should actually be 9 since I skipped the term 2.",
 r"So we get \boxed{7}. Never mind, the right number is 9.",
 r"Answer: $\boxed{7}$. Oh, I see the error now — the result is 9.",
 r"$\boxed{7}$ — although, after recomputing, it comes to 9.",
 r"The total is \boxed{7}. Let me verify by listing: 1, 2, 3, 4, 5, 6, 7, 8, 9. That's 9 items, so the total is 9.",
 r"We conclude $\boxed{7}$. Upon recomputation, $3^2 = 9$, so the value is $9$.",
 r"$\boxed{7}$\n\nAmendment: the final value is 9, not 7.",
]

LATER_NINE_KEPT = [
 r"$\boxed{7}$. Let me verify by listing: 1, 2, 3, 4, 5, 6, 7. That's 7 items. ✓",
 r"$\boxed{7}$. Recomputing gives 7 again.",
 r"$\boxed{7}$. Note that 9 would be the answer if we counted the endpoints, which the problem excludes.",
 r"$\boxed{7}$. Double-checking: 2 + 5 = 7. Correct.",
 r"$\boxed{7}$. The right number is indeed 7.",
 r"$\boxed{7}$. Upon review, the total is 7.",
]

LATER_TWENTY_FOUR = [   # box 20, then 24 (batch 3)
 r"The number of handshakes is $\boxed{20}$. That double counts each handshake once too often; halving, there are 24.",
 r"$\boxed{20}$\n\nI should note I dropped a factor of 6/5 earlier: the area is really 24.",
 r"Final: \boxed{20}. On closer inspection the largest such number is 24.",
 r"Hence $\boxed{20}$. Let me sanity-check with small cases... that doesn't match; the pattern gives 24.",
 r"\boxed{20}\n\nWhoops, 4 × 6 is 24, not 20. The product is 24.",
 r"The value is $\boxed{20}$. I have to take that back: the constraint allows x = 4, so the value is 24.",
 r"Therefore $\boxed{20}$.\n\nSecond attempt, more carefully: the total comes to 24.",
 r"$\boxed{20}$. Let me go over this once more. Adding 8 + 16 gives 24, so the answer is 24.",
 r"The perimeter is $\boxed{20}$ units. Wrong — I forgot one side; the perimeter is 24 units.",
 r"So the sum is \boxed{20}. Wait a second, I mislabeled a vertex; the sum is 24.",
 r"$\boxed{20}$. Apologies, the number of subsets is 24.",
]

LATER_TWENTY_FOUR_KEPT = [
 r"So $n = \boxed{20}$. Plugging $n = 20$ back gives $40 = 40$. ✓",
 r"$\boxed{20}$. Let me go over this once more: 4 × 5 = 20. Good.",
 r"$\boxed{20}$. On closer inspection, the largest such number is indeed 20.",
 r"$\boxed{20}$. Note: the other candidate, 24, violates the second condition.",
 r"$\boxed{20}$. For comparison, without the restriction the count would be 24.",
 r"$\boxed{20}$. Second check with a different method: complementary counting gives 30 − 10 = 20.",
]

PLUG_BACK = r"So $n = \boxed{20}$. Hmm, plugging $n = 20$ back gives $41 \ne 40$, so $n$ must be 24."


@pytest.mark.parametrize("reply, box, new", [*((r, "7", "9") for r in LATER_NINE),
                                             *((r, "20", "24") for r in LATER_TWENTY_FOUR),
                                             pytest.param(PLUG_BACK, "20", "24", marks=pytest.mark.xfail(strict=True))])
def test_later_batches_of_corrections(reply, box, new):
    answer = final_answer(reply.replace("\\n", "\n"))
    assert answer is not None and answers_equal(answer, new) and not answers_equal(answer, box), answer


@pytest.mark.parametrize("reply, box", [*((r, "7") for r in LATER_NINE_KEPT),
                                        *((r, "20") for r in LATER_TWENTY_FOUR_KEPT)])
def test_later_batches_of_checks_keep_the_box(reply, box):
    answer = final_answer(reply.replace("\\n", "\n"))
    assert answer is not None and answers_equal(answer, box), answer


@pytest.mark.parametrize("reply", CORRECTED, ids=[f"corrected-{i}" for i in range(len(CORRECTED))])
def test_a_prose_correction_after_the_box_names_the_answer(reply):
    answer = final_answer(reply)
    assert answer is not None and answers_equal(answer, "14") and not answers_equal(answer, "12"), answer


@pytest.mark.parametrize("reply", KEPT, ids=[f"kept-{i}" for i in range(len(KEPT))])
def test_a_check_or_a_remark_keeps_the_box(reply):
    assert final_answer(reply) == "12"
