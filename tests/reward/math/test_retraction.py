r"""A box taken back later in prose (issue 48): a sentence after the last commitment that says the reply erred (a
strong cue: "messed up", "scratch that", "that can't be right", "not $5$"), or one that reopens it ("wait",
"actually") and then concludes another value, replaces the answer with the value it concludes, or leaves none. A
check or restatement of the boxed value, a remark about another value, and a side remark keep the box."""
from __future__ import annotations

import pytest

from reward.math.answer import final_answer

FIVE = r"So the answer is $\boxed{5}$."


@pytest.mark.parametrize("tail, new", [
    (" Wait, no: recounting gives 7.", "7"),
    (" Hmm, that can't be right; recounting, I get 7.", "7"),
    (" Wait, I think I messed up. Let me recount: the total is 7.", "7"),
    ("\n\nActually, wait. The total is 7.", "7"),
    (" Hmm, I mis-added; it's 7.", "7"),
    (" Correction: the sum is 7.", "7"),
    (" No wait, 3 + 4 = 7, so it's 7.", "7"),
    (" Hmm, that doesn't look right. It's $7$.", "7"),
    (" Scratch that: the total is 7.", "7"),
    (" Oh wait, I forgot the last term, so the total is 7.", "7"),
    (" That is not right: $3 + 4 = 7$.", "7"),
    (" But wait, I double counted one edge, so there are only 4.", "4"),
    (" I realize I misread the problem; the answer is 7 instead.", "7"),
    (" On second thought, it is 7.", "7"),
    ("\n\nWait, I overlooked the case $n = 0$, which adds two more, giving $7$.", "7"),
    (r" Let me double-check: $3 + 4 = 7$, not $5$. So the correct total is $7$.", "7"),
    (r" Hmm, no. Recomputing: $2 \cdot 3 + 1 = 7$.", "7"),
    (" Hmm, wait, that's not correct. The total is 7.", "7"),
    (" Hmm, no, that's off. The count is 15.", "15"),
    (" Hold on, I counted the diagonal twice. Removing it gives 11.", "11"),
    ("\n\nActually, the edges should number 15, not 5.", None),
    (r" Oh no, I misapplied the formula. Redoing it: $n(n-1)/2 = 15$.", "15"),
    (r" Wait, I missed the case $k=0$. Including it, the total is 13.", "13"),
    (" Hmm, that isn't right. The total is $13$.", "13"),
    (" Upon reflection, 5 is incorrect; the right count is 13.", "13"),
    (" Actually, I need to recount. There are 13.", "13"),
    (" Wait, this is wrong.", None),
    (" Hmm, I made a slip somewhere. Let me redo it.", None),
    (" Oops, that can't be right.", None),
])
def test_a_box_taken_back_for_another_value(tail, new):
    assert final_answer(FIVE + tail) == new


@pytest.mark.parametrize("tail", [
    r" Let me verify: $2 + 3 = 5$. Correct.",
    r" Wait, let me double-check: $2 + 3 = 5$. Yes.",
    r" Checking: plugging in $x = 5$ gives $25 - 25 = 0$, as required.",
    r" Wait, let me check by substituting: $f(5) = 10 - 10 = 0$. Good.",
    r" Hmm, is that right? $10 / 2 = 5$. Yes, it is.",
    " A common mistake is to answer 7 by counting the endpoints.",
    " Actually, this also follows from symmetry: the two halves each give 2.5.",
    r" In fact, $5$ is the only value that works.",
    r" Wait, let me recount the pairs: there are $10$ pairs, half of them valid, so $5$.",
    r" Hmm, let me verify with $n=2$: the formula gives $2 \cdot 2 + 1 = 5$. Good.",
    " I first thought it was 7, but that was wrong.",
    " Wait, the question asks for the number of pairs, which is 5; the number of points is 10.",
    " Hmm, interesting: the digits sum to 5 as well.",
    r" Note that $x = 7$ would be wrong since $7 > 6$.",
    " Yes, no mistake: each of the 5 rows was counted once.",
    " Actually, wait. Let me double-check: 2 + 3 = 5. Yes, it is 5.",
    r" To confirm, $2 + 3 = 5$.",
    " Wait, let me make sure: there are 5 rows of 1, which gives 5. Yes.",
    r" Actually, we can also see this as $10 / 2 = 5$.",
    r" Hold on, let me double check the edge case $n=1$: it gives 1 edge, consistent with the formula.",
    " Wait, does the problem count ordered pairs? Yes, so 5 is right.",
    " Actually, this matches the known result for a pentagon, which has 5 sides.",
    " Note: if we counted vertices twice, we would get 10 instead.",
    " Wait, is it 5 or 6? Recounting: 5. Yes, 5.",
    " Hmm, one might worry we missed a case, but there are none.",
])
def test_a_check_or_remark_keeps_the_box(tail):
    assert final_answer(FIVE + tail) == "5"
