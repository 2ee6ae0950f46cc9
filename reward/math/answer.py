r"""The final answer of a MATH-style reply: pure string scanning, stdlib only, linear in the reply's length.

Contract: `final_answer(reply, prompt_opens_think)` returns the answer the reply commits to, or None when it commits
to none.
1. Reasoning is not the answer: only the visible reply counts (`reward.math.reply`); a reply still thinking (a
   `<think>` never closed, or no `</think>` when the prompt opened the block) has no answer.
2. The last commitment wins, by position: the last group of final boxes (`reward.math.boxes`) or the last answer
   phrase (`reward.math.phrases`), whichever comes later; a phrase inside the box group is part of the box, not a
   commitment of its own. An `<answer>..</answer>` block (Open-Reasoner-Zero, DeepSeek-R1-Zero) is the commitment,
   unless a box or phrase after it takes it back: its box group, its phrase, or else its content read as an answer
   sentence. A later sentence can take the commitment back (`reward.math.retraction`): "... is actually 14" gives
   14; "that is wrong" with no new value leaves no answer.
3. Otherwise the last formula or number of a finished last sentence (`reward.math.trailing`).
Every scan is one regex pass or one left-to-right brace match, so 20,000 unclosed `\boxed{` cost linear time.
"""
from __future__ import annotations

from reward.math.boxes import box_group_span, last_box_group
from reward.math.phrases import GSM8K_LINE, MAX_SENTENCE, last_phrase, sentence_answer, sentence_end
from reward.math.reply import visible_reply
from reward.math.retraction import correction
from reward.math.trailing import TAIL, trailing_formula

_ANSWER_OPEN, _ANSWER_CLOSE = "<answer>", "</answer>"


def reference_answer(reference: str) -> str:
    """The reference as given, or its final box group when it is a worked solution ("... so $\\boxed{20}$ percent."),
    or the number of its GSM8K answer line ("...\\n#### 72")."""
    group = last_box_group(reference)
    if group and group[1]:
        return group[1]
    gsm8k = GSM8K_LINE.search(reference)
    return gsm8k.group(1) if gsm8k else reference


def final_answer(reply: str | None, prompt_opens_think: bool = False) -> str | None:
    """The answer `reply` commits to (see the module docstring), or None."""
    if not reply:
        return None
    text = visible_reply(reply, prompt_opens_think)
    if text is None:
        return None
    tagged = answer_tag(text)
    text = text if tagged is None else tagged
    box = box_group_span(text)
    phrase = last_phrase(text)
    if box and (phrase is None or phrase[0] < box[1]):  # a phrase inside the box group is the box's
        answer, end = box[2] or None, box[1]
    elif phrase:
        answer, end = phrase[1], sentence_end(text, phrase[0])
    else:
        return trailing_formula(text) if tagged is None else sentence_answer(tagged[:MAX_SENTENCE])
    retracted, corrected = correction(text[end:][-TAIL:], answer)
    return corrected if retracted else answer


def answer_tag(text: str) -> str | None:
    """The content of the last complete `<answer>..</answer>` block (found from the end: linear), or None when there
    is none or a box or answer phrase after it takes the answer back."""
    close = text.rfind(_ANSWER_CLOSE)
    start = text.rfind(_ANSWER_OPEN, 0, close) if close != -1 else -1
    after = text[close + len(_ANSWER_CLOSE):]
    if start == -1 or last_box_group(after) or last_phrase(after):
        return None
    return text[start + len(_ANSWER_OPEN):close]
