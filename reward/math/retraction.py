r"""Whether the text after a reply's last commitment takes it back, and for which value (pure string scanning).

Contract: `correction(tail, answer)` returns (retracted, new value or None); see its docstring for the cues.
"""
from __future__ import annotations

import re

from reward.math.phrases import MAX_SENTENCE, PHRASES_TRIED, sentence_answer, sentence_end

# A sentence after the last commitment that takes it back: a value cue states the new value ("is actually 14",
# "should be 25"); a retraction cue only says it was wrong. A negation before a cue ("no mistake") is no retraction.
_VALUE_CUE = re.compile(r"\b(?:actually|in fact|should (?:be|have been)|instead)\b", re.IGNORECASE)
# A retraction says the reply itself erred ("I made a mistake", "that is wrong", "12 is incorrect"), not that an error
# exists somewhere ("this avoids the common error", "a frequent mistake is ...").
_RETRACTION_CUE = re.compile(
    r"\b(?:oops|miscalculat\w*|miscount\w*|(?:I|we)\s+(?:have\s+)?(?:made|make)\s+(?:a|an|some)\s+(?:\w+\s+)?"
    r"(?:mistakes?|errors?)|(?:that|this|it|which|my answer|the answer|[\d.]+)\s*(?:is|was|'s)\s+"
    r"(?:wrong|incorrect))\b",
    re.IGNORECASE)
_NEGATED = re.compile(r"\b(?:no|not|nothing|never|any|without|for|of)\W+(?:\w+\W+){0,2}$|n't\W+(?:\w+\W+){0,2}$",
                      re.IGNORECASE)


def correction(tail: str, answer: str | None = None) -> tuple[bool, str | None]:
    """(whether `tail`, the text after the last commitment, takes it back; the value it states instead or None).
    The last cue decides: a value cue ("is actually 14", "should be $25$") retracts only when a value follows it in
    its sentence; a retraction cue ("that is wrong", "I made a mistake") always does, and its value is the one a
    later sentence of the tail states, if any. A negated cue ("no mistake", "not wrong") is none, and so is one
    whose sentence names a number other than `answer` before it ("choosing 4 would be wrong"). Only the last
    `PHRASES_TRIED` cues are read."""
    cues = sorted([*_VALUE_CUE.finditer(tail), *_RETRACTION_CUE.finditer(tail)], key=lambda m: m.start())
    for cue in cues[::-1][:PHRASES_TRIED]:   # bounded work on cue-heavy tails
        if _NEGATED.search(tail[max(0, cue.start() - 40):cue.start()]):
            continue
        value = _stated_value(tail[cue.end():sentence_end(tail, cue.end())])
        before = re.split(r"[.!?\n]", tail[max(0, cue.start() - 200):cue.start()])[-1]
        if value is None and answer and re.search(r"\d", before) and answer not in before:
            continue   # "choosing 4 would be wrong": about another value, not the answer
        if _VALUE_CUE.fullmatch(cue.group(0)):
            if value is not None:
                return True, value
            continue
        end = sentence_end(tail, cue.end())
        for sentence in reversed(re.split(r"(?<=[.!?])\s+|\n", tail[end:])):
            stated = _stated_value(sentence)
            if stated is not None:
                return True, stated
        return True, value
    return False, None


def _stated_value(sentence: str) -> str | None:
    """The value a sentence states when it is math (a digit or TeX), else None."""
    value = sentence_answer(sentence[:MAX_SENTENCE].strip(" ,:;"))
    return value if value is not None and re.search(r"[\d\\]", value) else None
