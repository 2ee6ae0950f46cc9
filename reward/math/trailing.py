r"""The answer of a reply without a box or answer phrase: the last formula ($..$, \(..\), \[..\], $$..$$) or,
failing that, the last number of the reply's last sentence, but only when that sentence is finished: it ends in '.',
'!' or display math, or its last line is the number alone after balanced braces (a reply that trails off
mid-derivation commits to nothing). A number is a whole token: "-5", "7 3/4" (a mixed number), "3√2", "2.5 million",
never the "2" of "√2". An equality chain followed by a comment clause without math ("$3 \times 4 = 12$, which matches
...") gives its last side.
"""
from __future__ import annotations

import re

from reward.math.phrases import (
    COMMENT_CLAUSE,
    MATH_SPAN,
    MAX_SENTENCE,
    TENS_WORD,
    UNIT_WORD,
    right_side,
    solution_list,
)

_NUMBER = re.compile(r"(?<![\w.√\\^_{/])-?(?:\d+[ \t]+\d+[ \t]*/[ \t]*\d+|\d*√\d+|\d[\d,]*(?:\.\d+)?(?:\s*/\s*\d+)?%?"
                     r"(?:[ \t]+(?:thousand|million|billion|trillion)\b)?|\.\d+)(?![\w√^_])")
_STATES = re.compile(r"\b(?:is|are|was|were|equals|gives|get|got|makes|totals)\b|=", re.IGNORECASE)
_STATED_WORD = re.compile(rf"\b(?:is|are|was|were|equals)\s+((?:{TENS_WORD})(?:[- ](?:{UNIT_WORD}))?|{UNIT_WORD}|"
                          r"(?:a|one) hundred)\s*[.!]?\s*$", re.IGNORECASE)
TAIL = 2000                # the last formula / number is looked for only in the reply's last characters


def _last_sentence_start(text: str) -> int:
    body = text.rstrip()
    ends = [m.end() for m in re.finditer(r"[.!?](?=\s)|\n\s*\n", body)]
    ends = [e for e in ends if body[e:].strip(" .\n*")]
    return ends[-1] if ends else 0


def trailing_formula(text: str) -> str | None:
    """The last formula, or else the number, of the reply's last sentence, when that sentence is finished (ends in
    '.', '!' or a display formula) and the formula or number closes it (at most three words follow) or is its only
    number and follows a verb that states it ("there are 12 sequences that ..."); a sentence that ends "is six." gives
    the number word."""
    body = text.rstrip()[-TAIL:]
    if not body or not (body.endswith((".", "!", "\\]", "$")) or _ends_in_a_lone_number(body)):
        return None
    start = _last_sentence_start(body)
    listed = solution_list(body[start:].strip()[:MAX_SENTENCE])   # "the solutions are $x = 3$ or $x = 5$."
    if listed is not None:
        return listed
    spans = [m for m in MATH_SPAN.finditer(body) if m.end() > start]
    if spans:
        formula = next(g for g in spans[-1].groups() if g is not None).strip()
        rest = body[spans[-1].end():]
        if _closes_sentence(rest) or "=" in formula and COMMENT_CLAUSE.fullmatch(rest):
            return right_side(formula).rstrip(".,;").strip() or None
    word = _STATED_WORD.search(body, start)
    if word:
        return word.group(1).lower()
    numbers = list(_NUMBER.finditer(body, start))
    closing = [m for m in numbers if _closes_sentence(body[m.end():])]
    stated = len(numbers) == 1 and _STATES.search(body[start:numbers[0].start()])
    chosen = closing[-1] if closing else numbers[0] if stated else None
    return chosen.group(0).rstrip(",") if chosen else None


def _ends_in_a_lone_number(body: str) -> bool:
    """Whether the last line is only a number ("**12**") after text whose braces and dollars all close, and is not
    the next label of a numbered list ("2. ...\n3": a reply cut off mid-list)."""
    head, _, last = body.rpartition("\n")
    if not re.fullmatch(r"[*\s]*" + _NUMBER.pattern + r"[*\s]*", last):
        return False
    label = re.search(r"(?:^|\n)[ \t]*(\d+)[.)][^\n]*\s*$", head)
    if label and last.strip(" *") == str(int(label.group(1)) + 1):
        return False
    return head.count("{") == head.count("}") and head.count("$") % 2 == 0


def _closes_sentence(rest: str) -> bool:
    return bool(re.fullmatch(r"[\s.,;!*]*(?:[A-Za-z]+[\s.,;!*]*){0,3}", rest))
