r"""Whether the text after a reply's last commitment takes it back, and for which value (pure string scanning).

Contract: `correction(tail, answer)` returns (retracted, the value stated instead or None). Three kinds of cue, read
from the last one back; the first that retracts decides:
- a value cue puts a new value in its own sentence: "is actually 14", "should be $25$", "actually 14", "7 instead";
- a retraction cue says the reply erred: "I made a mistake", "I messed up", "I mis-added", "I forgot / overlooked",
  "I double counted", "that is wrong", "that can't be right", "that doesn't look right", "that's not correct",
  "scratch that", "correction:", "on second thought", "wait, no", "not $5$" (the answer itself negated). It always
  retracts; the new value is the one the tail's last stating sentence gives after it, else none;
- a second look ("Wait, ...", "Actually, ...", "Hold on") retracts only when it concludes another value: its last
  sentence that states one with "is", "=", "get" or "gives" names neither the answer nor a part ("each give 2.5"),
  and no confirmation follows ("Yes.", "Good.", "as required").
Negated cues ("no mistake", "not wrong") are none, and so is a retraction about a number other than `answer` named
before it in its sentence ("choosing 4 would be wrong"). A check or restatement of the answer keeps it. Only the last
`PHRASES_TRIED` cues are read, each over the bounded tail.
"""
from __future__ import annotations

import re

from reward.math.phrases import MAX_SENTENCE, PHRASES_TRIED, sentence_answer, sentence_end

_VALUE_CUE = re.compile(r"\b(?:(?:is|are|was|were)\s+(?:actually|in fact|really)|"
                        r"should\s+(?:actually\s+|really\s+)?(?:be|have been|read)|"
                        r"actually(?=\s+[-$\\\d])|instead(?!\s+of)|I\s+meant|"
                        r"the\s+(?:correct|right|valid|true|actual|real)\s+(?:[\w-]+\s+){0,4}?(?:is|are|equals))\b",
                        re.IGNORECASE)
# A retraction says the reply itself erred ("I made a mistake", "that is wrong", "12 is incorrect"), not that an error
# exists somewhere ("this avoids the common error", "a frequent mistake is ...").
_RETRACTION_CUE = re.compile(
    r"\b(?:oops|mis-?(?:calculat|count|add|read|appl|understo|copi|judg)\w*|scratch that|on second thought|"
    r"correction(?=\s*:)|(?:wait|hmm+|oh|hold on)\W{0,3}no\b|no\W{0,3}wait|"
    r"(?:I|we)\s+(?:have\s+|must\s+have\s+)?(?:(?:made|make)\s+(?:a|an|some)\s+(?:\w+\s+)?"
    r"(?:mistakes?|errors?|slip|blunder|typo)|(?:messed|screwed)\s+up|forgot|overlooked|missed|double[- ]?counted)|"
    r"(?:that|this|it|which|my answer|the answer|[\d.]+)\s*(?:is|was|'s)\s+(?:wrong|incorrect|not (?:right|correct))|"
    r"(?:that|this|it)\s+(?:can't|cannot|couldn't|can not)\s+be\s+(?:right|correct)|"
    r"(?:that|this|it)\s+(?:doesn't|does not|didn't)\s+(?:look|seem|sound)\s+(?:right|correct)|"
    r"(?:that|this|it)\s+isn't\s+(?:right|correct)|my\s+(?:mistake|bad|error)|sorry|erratum|"
    r"(?:that|this|it)\s+(?:was|is)\s+(?:an?\s+)?(?:error|mistake|slip)|take\s+(?:that|it|this)\s+back|apolog\w*|"
    r"whoops)\b",
    re.IGNORECASE)
_SECOND_LOOK = re.compile(r"(?:^|(?<=[.!?;\n])|(?<=\bbut))\s*(?:oh,?\s+|no,?\s+)?(?:wait|actually|hold on|hang on)\b",
                          re.IGNORECASE)
# A revision: the reply looks at its work again ("recounting", "upon review", "Edit:", "this overlooks", "verifying",
# "correcting", "never mind", "I see the error"). Like a second look, it retracts only when it concludes another value.
_REVISION_CUE = re.compile(
    r"\b(?:re-?(?:count|check|calculat|comput|examin|evaluat|do|visit|view)\w*|double[- ]?check\w*|"
    r"(?:up)?on\s+(?:reflection|review|a\s+second\s+(?:check|look))|second\s+check|looking\s+(?:again|back)|"
    r"(?:update|edit)(?=\s*:)|revis\w+|overlook\w*|fails|correct(?:ing|ed|ion)|verif\w*|amend\w*|"
    r"check(?:ed|ing)?\s+(?:[\w-]+\s+){0,3}?again|never\s*mind|off\s+by|P\.\s*S\.|"
    r"(?:my|an|that|this)\s+(?:[\w-]+\s+)?(?:error|slip)|I\s+see\s+the\s+(?:error|mistake|problem)|"
    r"(?:error|slip)\s+(?:above|earlier|now)|realiz\w*|after\s+all|closer\s+(?:inspection|look)|sanity[- ]check\w*|"
    r"second\s+attempt|more\s+carefully|once\s+more|double[- ]?count\w*|(?:doesn't|does\s+not)\s+match)\b",
    re.IGNORECASE)
# "14, not 12", "14 rather than 12", "14 instead of 12": the value named after the contrast is the one given up.
_CONTRAST = re.compile(r"\s*,?\s*\b(?:rather\s+than|instead\s+of|and\s+not|not)\s+\$?[-\w.,/\\{}]+?\$?"
                       r"(?=\s*(?:[.;,!?]|$))", re.IGNORECASE)
_RIGHT_ANSWER = re.compile(r"^(?:so\s+|thus\s+|hence\s+)?(.+?)\s+is\s+(?:the\s+)?(?:right|correct|final|true|actual)\s+"
                           r"(?:answer|value|result|total|count)\b", re.IGNORECASE)
# A cue after a negation ("no mistake", "not wrong") or a doubt it dismisses ("one might worry we missed") is none;
# "oh no" and "wait, no" are exclamations, not negations.
_NEGATED = re.compile(r"\b(?<!oh )(?<!oh, )(?:no|not|nothing|never(?!\s*mind)|any|without|for|of)\W+(?:\w+\W+){0,2}$|"
                      r"n't\W+(?:\w+\W+){0,2}$|\b(?:if|whether|worry|worried|ensure|make sure)\W+(?:\w+\W+){0,3}$",
                      re.IGNORECASE)
_CONFIRMED = re.compile(r"(?:^|[.!?;:]\s*)(?:yes|good|correct|right|great|confirmed|checks out)\b|\bas (?:required|"
                        r"expected)\b|\bchecks out\b|\bwhich (?:matches|confirms)\b|\b(?:consistent|agrees) with\b|✓",
                        re.IGNORECASE)
# A conclusion states its value with one of these; the last one in a stated value starts the value proper.
_STATING = re.compile(r"(?:\b(?:is|are|was|were|equals|gives?|giving|gets?|got|makes|totals?|yields?|becomes|meant|"
                      r"comes\s+(?:out\s+)?to|works\s+out\s+to)\b|'s\b|=)\s*",
                      re.IGNORECASE)
_PART = re.compile(r"\b(?:each|per|apiece|every)\b", re.IGNORECASE)
_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n")
_CLAUSES = re.compile(r";\s*|,\s+(?=(?:so|since|because|as|which|but)\b)|\s+(?=(?:since|because)\b)")


def correction(tail: str, answer: str | None = None) -> tuple[bool, str | None]:
    """(whether `tail`, the text after the last commitment, takes it back; the value it states instead or None)."""
    negation = _answer_negated(answer)
    cues = [*_VALUE_CUE.finditer(tail), *_RETRACTION_CUE.finditer(tail), *_SECOND_LOOK.finditer(tail),
            *_REVISION_CUE.finditer(tail), *(negation.finditer(tail) if negation else ())]
    for cue in sorted(cues, key=lambda m: m.start())[::-1][:PHRASES_TRIED]:   # bounded work on cue-heavy tails
        if _NEGATED.search(tail[max(0, cue.start() - 40):cue.start()]):
            continue
        kind = {_VALUE_CUE: "value", _SECOND_LOOK: "second look", _REVISION_CUE: "second look",
                _RETRACTION_CUE: "retraction"}.get(cue.re, "negation")
        retracted, value = _read_cue(tail, cue, kind, answer)
        if retracted:
            return True, value
    return False, None


def _read_cue(tail: str, cue: re.Match, kind: str, answer: str | None) -> tuple[bool, str | None]:
    """(whether this cue retracts the answer, the value it states instead)."""
    end = sentence_end(tail, cue.end())
    if kind == "value":   # the value right after the cue, up to its clause's end ("should be 14, because …")
        value = _stated_value(_CLAUSES.split(tail[cue.end():end])[0])
        return value is not None, value
    value = _clause_value(tail[cue.end():end])
    if kind == "second look":
        return _concludes_another(tail[cue.start():], answer)
    if kind == "negation":   # "the sum is 14, not 12": the value its own sentence states besides the negated one
        start = max(tail.rfind(". ", 0, cue.start()) + 1, tail.rfind("\n", 0, cue.start()) + 1)
        stated = _stated_value(tail[start:end])
        if stated is not None and stated != answer:
            return True, stated
    before = re.split(r"[.!?\n]", tail[max(0, cue.start() - 200):cue.start()])[-1]
    if kind == "retraction" and value is None and answer and re.search(r"\d", before) and answer not in before:
        return False, None   # "choosing 4 would be wrong": about another value, not the answer
    for sentence in reversed(_SENTENCES.split(tail[end:])):
        stated = _clause_value(sentence)
        if stated is not None:
            return True, stated
    return True, value


def _clause_value(sentence: str) -> str | None:
    """The value the last clause of `sentence` that states one states ("…, which is 14" -> 14), or None."""
    return next(filter(None, map(_stated_value, reversed(_CLAUSES.split(sentence)))), None)


def _concludes_another(text: str, answer: str | None) -> tuple[bool, str | None]:
    """Whether a second look (`text` from its cue on) ends on another value: its last stating sentence gives one
    with a stating verb, names neither the answer nor (in its concluding clause) a part, and no confirmation
    follows it."""
    sentences = _SENTENCES.split(text)
    for index in range(len(sentences) - 1, -1, -1):
        value = _clause_value(sentences[index])
        if value is None:
            continue
        sentence, rest = _CONTRAST.sub("", sentences[index]), " ".join(sentences[index + 1:])
        mentions = answer is not None and re.search(rf"(?<![\w.]){re.escape(answer)}(?![\w.])", sentence)
        clause = next(c for c in reversed(_CLAUSES.split(sentences[index])) if _stated_value(c) is not None)
        if mentions or not _STATING.search(sentence) or _PART.search(clause) or \
                _CONFIRMED.search(sentence + " " + rest):
            return False, None
        return True, value
    return False, None


def _answer_negated(answer: str | None) -> re.Pattern | None:
    """The pattern of the answer negated ("not 5", "isn't $5$"), for a short answer; else None."""
    if not answer or len(answer) > 40:
        return None
    return re.compile(rf"(?:\bnot|n't)\s+(?:\$\s*)?{re.escape(answer)}(?!\w|\.\d)(?:\s*\$)?", re.IGNORECASE)


def _stated_value(sentence: str) -> str | None:
    """The value a sentence states when it is math (a digit or TeX) and short, else None: the part after its last
    stating word ("recounting gives 7" -> 7, "it's $7$" -> 7), without "only"."""
    sentence = _CONTRAST.sub("", sentence[:MAX_SENTENCE]).strip(" ,:;")
    right = _RIGHT_ANSWER.match(sentence)   # "so 14 is the right answer"
    value = sentence_answer(right.group(1) if right else sentence)
    if value is None or not re.search(r"[\d\\]", value):
        return None
    stating = list(_STATING.finditer(value))
    if stating:
        value = sentence_answer(value[stating[-1].end():]) or ""
    value = re.sub(r"^(?:only|just|exactly|really|actually|in fact|indeed|therefore|thus|then|now|still)\s+", "", value)
    prose = re.findall(r"(?<!\\)\b[A-Za-z]{2,}\b", re.sub(r"\\[A-Za-z]+\{[^{}]*\}|\$[^$]*\$", "", value))
    if len(prose) > 2:   # "14 for the total", "$14$ people at the table": the leading number is the value
        lead = re.fullmatch(r"\$?(-?\d[\d,]*(?:\.\d+)?)\$?(?:\s+[A-Za-z]+){1,4}", value)
        return lead.group(1) if lead else None
    return value if re.search(r"[\d\\]", value) else None
