r"""Answer phrases and the value a sentence states (pure string scanning, linear in the text's length).

An answer phrase is "Final Answer: ...", "the final answer is ...", "the answer is ...", "the correct option is ...",
"Answer: ...", PRM800K's "# Answer" heading or GSM8K's "#### 72" line. A phrase's value runs to the end of its
sentence (`sentence_end`); a sentence ("The volume of the prism is 120.") states the part after its last "is" or
"=" (`sentence_answer`), and a judgement word ("correct", "wrong", "below") states nothing.
"""
from __future__ import annotations

import re

from reward.math.boxes import BOX

_PHRASE = re.compile(
    r"(?:\bfinal\s+answer\b(?:\s*(?:is|:|\*\*|#|\\\]|\\\)|\$)+)?|\bthe\s+(?:correct\s+)?(?:answer|option|choice)\s+is\b"
    r"|(?<![\w-])answer\s*(?:\*\*)?\s*:|^[ \t]*#{1,6}[ \t]*answer[ \t]*$"
    # GSM8K's "#### 72": a line of the mark and a number (and at most two unit words; not "#### 3. Setup")
    r"|^[ \t]*####(?=[ \t]*\$?-?[\d.,]*\d(?:[ \t]*\\?%)?(?:[ \t]+[a-z]+){0,2}[ \t]*\.?[ \t]*$))",
    re.IGNORECASE | re.MULTILINE)
GSM8K_LINE = re.compile(r"^[ \t]*####[ \t]*(\$?-?[\d.,]*\d(?:[ \t]*\\?%)?)[ \t]*\.?\s*\Z", re.MULTILINE)
_PHRASE_SKIP = re.compile(r"(?:\s|\*\*|#|:|\b(?:is|therefore|thus|hence|then|now|indeed|really|becomes|reads|"
                          r"should\s+(?:read|be)|would\s+be|will\s+be)\b)*", re.IGNORECASE)
MATH_SPAN = re.compile(r"\$\$(.+?)\$\$|\\\[(.+?)\\\]|\\\((.+?)\\\)|\$([^$]+?)\$", re.DOTALL)
UNIT_WORD = (r"zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|"
             r"sixteen|seventeen|eighteen|nineteen")
TENS_WORD = r"twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety"
_NUMBER_WORDS = re.compile(rf"(?:(?:{UNIT_WORD}|{TENS_WORD}|hundred|thousand|million|billion|and|a)\b[\s-]*)+",
                           re.IGNORECASE)
_LAST_WORD_IS = re.compile(r".*(?:\bis\b|=|\bare\b|\bequals\b)\s*(?::\s*)?", re.DOTALL)
_FIRST_STATING = re.compile(r"[^=]*?(?:\b(?:is|are)\b|:)\s*")
_CONNECTIVE = re.compile(r"^(?:so|thus|hence|therefore|then|and)\b,?\s*", re.IGNORECASE)
_JOINERS = re.compile(r"\s*(?:,\s*(?:or|and)\b|\bor\b|\band\b|,)\s*")
_ONE_SOLUTION = re.compile(r"([A-Za-z])\s*=\s*([^=,]+)")
MAX_SENTENCE = 1000        # an answer sentence longer than this is prose, not an answer
PHRASES_TRIED = 5          # the last phrases whose values are checked (bounded work on phrase-heavy replies)
_NOT_AN_ANSWER = {"correct", "right", "wrong", "incorrect", "below", "above", "as follows", "the following", "not",
                  "reasonable", "clear", "that", "this", "unknown"}
# A clause after an unboxed equality that only comments on it (", which matches the number of edges.").
COMMENT_CLAUSE = re.compile(r"(?:\s+(?!(?:is|are|was|not)\b)[A-Za-z]+){0,3}\s*,\s*"   # "$..$ dollars a day, which"
                            r"(?:which|as|since|because|where|confirming|matching|and this|that is)\b[^$\\\d]*")


def sentence_end(text: str, start: int) -> int:
    """Index where the sentence that starts at `start` ends: a newline, or a '.' followed by a space or the end,
    outside math and braces (so '3.5', '$x.$' and '\\frac{1}{2}.' stay whole). Display math is one unit."""
    depth, dollars, i, n = 0, 0, start, len(text)
    while i < n:
        c = text[i]
        if c == "\\" and text.startswith("\\[", i):
            close = text.find("\\]", i)
            i = n if close == -1 else close + 2
            continue
        if c == "$" and text.startswith("$$", i):
            close = text.find("$$", i + 2)
            i = n if close == -1 else close + 2
            continue
        if c == "\\":
            i += 2
            continue
        if c == "$":
            dollars ^= 1
        elif c == "{":
            depth += 1
        elif c == "}":
            depth = max(0, depth - 1)
        elif (c == "\n" and (not dollars or text.startswith("\n\n", i))) or \
                (c == "." and not dollars and depth == 0 and (i + 1 == n or text[i + 1].isspace())):
            return i
        i += 1
    return n


def _strip_value(value: str) -> str:
    """A stated value without its math delimiters, bold marks, end punctuation and a trailing "instead"."""
    value = re.sub(r"(?<!\\)\$(?!\$)", " ", value) if value.count("$") % 2 else value
    value = re.sub(r"\s+instead\s*[.,;!]*\s*$", "", value)   # "the answer is 7 instead"
    value = value.strip().strip("*").strip()
    for left, right in (("$$", "$$"), ("\\[", "\\]"), ("\\(", "\\)"), ("$", "$")):
        if value.startswith(left) and value.endswith(right) and len(value) >= len(left) + len(right):
            value = value[len(left):len(value) - len(right)].strip()
    return value.rstrip(".,;").strip()


def sentence_answer(sentence: str) -> str | None:
    """The answer a short sentence states: the part after its last "is" / "=" / "equals" if it has one (a
    "The volume is 120" sentence), else the sentence itself; None for an empty value or a non-answer word."""
    sentence = sentence.strip().strip("*").strip()
    spans = [m for m in MATH_SPAN.finditer(sentence)]
    rest = sentence[spans[-1].end():] if spans else ""
    comment = bool(spans) and COMMENT_CLAUSE.fullmatch(rest) is not None
    if spans and (comment or not rest.strip(" .,;*")):
        last = next(g for g in spans[-1].groups() if g is not None)
        prose = sentence[:spans[-1].start()]
        if not prose.strip() or re.search(r"(?:\bis|=|\bare|\bequals|:)\s*$", prose):
            return _strip_value(right_side(last) if comment else last) or None
    listed = solution_list(sentence)
    if listed is not None:
        return listed
    stated = _LAST_WORD_IS.match(sentence)
    value = _strip_value(sentence[stated.end():] if stated and sentence[stated.end():].strip() else sentence)
    return value if _looks_like_answer(value) else None


def solution_list(sentence: str) -> str | None:
    """The values of a list of solutions of one unknown ("x = 3 or x = 5", "$x=1$, $x=2$, or $x=3$", also after
    "the solutions are"), joined by ", " as a reference lists them; None for anything else."""
    head = _FIRST_STATING.match(sentence)
    text = _CONNECTIVE.sub("", (sentence[head.end():] if head else sentence).replace("$", " ").strip())
    parts = _JOINERS.split(text.rstrip(".").strip())
    if len(parts) < 2:
        return None
    solved = [_ONE_SOLUTION.fullmatch(p.strip()) for p in parts]
    if not all(solved) or len({m.group(1) for m in solved if m}) != 1:
        return None
    return ", ".join(m.group(2).strip() for m in solved if m)


def _looks_like_answer(value: str) -> bool:
    """A stated value, not prose: it has a digit or TeX, is number words, or is at most three words and not a
    judgement word."""
    if not value or value.lower() in _NOT_AN_ANSWER:
        return False
    return bool(re.search(r"[\\\d^_=<>()\[\]{}]", value)) or len(value.split()) <= 3 or \
        bool(_NUMBER_WORDS.fullmatch(value))


def last_phrase(text: str) -> tuple[int, str] | None:
    """(position, value) of the last answer phrase that states a value ("Final Answer: 7", "The answer is $x$")."""
    for match in list(_PHRASE.finditer(text))[::-1][:PHRASES_TRIED]:
        start = _PHRASE_SKIP.match(text, match.end()).end()
        value = sentence_answer(text[start:sentence_end(text, start)][:MAX_SENTENCE])
        if value is not None:
            return match.start(), value
        if text[start:start + 1] == "\\" and BOX.match(text, start):
            return None  # "Final Answer: \boxed{..}": the box speaks
    return None


def right_side(formula: str) -> str:
    """The last side of an equality chain ("3 \\times 4 = 12" -> "12"); a list ("x = 1, y = 2") stays whole."""
    return formula.rsplit("=", 1)[1].strip() if "=" in formula and "," not in formula else formula
