r"""The part of a MATH reply that can hold its answer: reasoning, chat special tokens and made-up later turns
removed (pure string scanning, stdlib only, linear in the reply's length).

Contract: `visible_reply(text, prompt_opens_think)` is None when the reply is still thinking: a `<think>` that never
closes (also one reopened after the last `</think>`), or no `</think>` at all when `prompt_opens_think` (the prompt
ended inside `<think>`, so the reply starts there). A `</think>` counts only before the reply's own end of turn
(`<|im_end|>`, `<|im_start|>`, `<|eot_id|>`, `</s>`, ...): one in a turn the model made up after it closes nothing.
Otherwise it is the text after the last `</think>`, cut at its first end-of-turn token and at a few-shot
continuation (a later line opening "Problem:", "Question:" or "Q:", then one opening "Solution:", "Answer:" or "A:";
a lone "Question:" may be the reply questioning itself); other special tokens and Minerva's "I hope it is
correct." are dropped; a Unicode minus reads as "-".
"""
from __future__ import annotations

import re

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
_MINUS = str.maketrans({"\u2212": "-", "\uff0d": "-"})     # U+2212 and the full-width hyphen-minus
_NEXT_PROBLEM = re.compile(r"\n[ \t]*(?:\*\*|#+[ \t]*)?(?:Problem|Question|Q)(?:[ \t]*\d+)?(?:\*\*)?[ \t]*(?:\*\*)?:")
_ITS_SOLUTION = re.compile(r"\n[ \t]*(?:\*\*|#+[ \t]*)?(?:Solution|Answer|A)(?:\*\*)?[ \t]*(?:\*\*)?:")
_END_OF_TURN = re.compile(
    r"<\|(?:im_end|im_start|eot_id|endoftext|end_of_text|end)\|>|</s>|<end_of_turn>|<｜end▁of▁sentence｜>"
)
_SPECIAL_TOKEN = re.compile(r"<\|[^|<>]{1,40}\|>|<s>")
_HOPE = re.compile(r"(?<!\s)\s*I hope (?:it|this|that) is correct\.?", re.IGNORECASE)   # one start per run


def visible_reply(text: str, prompt_opens_think: bool = False) -> str | None:
    """The reply without its reasoning block, chat special tokens and made-up later turns or problems; None if a
    `<think>` block never closes before the reply's end of turn (the prompt's own `<think>` when
    `prompt_opens_think`)."""
    end = _END_OF_TURN.search(text)
    if end:  # first: a `</think>` in a turn the model made up after its own end closes nothing
        text = text[:end.start()]
    close = text.rfind(THINK_CLOSE)
    if close != -1:
        text = text[close + len(THINK_CLOSE):]
    elif prompt_opens_think:
        return None
    if THINK_OPEN in text:  # a think block (re)opened after the last `</think>` that never closes
        return None
    start = len(text) - len(text.lstrip())
    follow_up = _NEXT_PROBLEM.search(text, start + 1)  # a reply may restate its own problem first
    if follow_up and _ITS_SOLUTION.search(text, follow_up.end()):  # a new problem with its own solution
        text = text[:follow_up.start()]
    return _HOPE.sub("", _SPECIAL_TOKEN.sub(" ", text.translate(_MINUS)))
