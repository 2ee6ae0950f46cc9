r"""Whether two final answers are the same mathematical object: our normaliser, then a whole-string sympy parse.

Contract: `answers_equal(prediction, reference)` is True only when both strings, after `canonical`, are equal as
text or parse *completely* (latex2sympy over the whole string; no prefix of it) to objects that math-verify's
comparison calls equal. A side that does not parse completely can only match as text. Model output is never
evaluated as code. No time limit here: `reward.math_grader` runs this in a worker process it can kill.

Deliberate normalisations (MATH's conventions; each is a departure from plain math-verify):
- units: a trailing `\text{..}`/`\mbox{..}` group or a unit word after a number is dropped ("10\text{ cm}^2" = 10);
  `\mathrm{e}`, `\mathrm{i}`, `\text{i}` stay the constants (math-verify drops them as units: "3+4\mathrm{i}" = 7);
- percent: "p\%" (or "p percent") equals p and p/100 when only one side has the sign: "20\%" = 20 = 0.2, since MATH
  references state percentages both ways; with the sign on both sides the numbers compare;
- degrees: "90^\circ" = 90; dollars: "\$5.00" = 5; thousands separators: "12{,}000" = "12,\!000" = 12000, while
  "32, 349" (a space after the comma) is a list;
- repeating decimals: "0.\overline{45}" = 5/11 (math-verify parses the prefix "0");
- a leading "x \in" is dropped ("x \in [1,2]" = [1,2]); "x = 5" = 5 and sets = relations ("x > 3" = (3, \infty))
  are math-verify's own rules;
- text answers ("\text{Evelyn}", "(C)", "odd") compare as lower-case text, never as products of symbols; an answer
  that is one number word ("six", "twelve") is that number; two bare letters are equal only with the same case.
"""
from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache

_DELIMITERS = re.compile(r"\\\$|\$|(?<!\\)\\[()\[\]]|\\displaystyle|\\left\.|\\right\.|\\left|\\right|\\limits")
_THIN_SPACE = re.compile(r"(?<!\\)\\!\s*|(?<!\\)\\,|\{,\}")
_NUMBER_TEXT = re.compile(r"\\(?:text|mbox|textnormal|textrm)\s*\{([^{}]*\d[^{}]*)\}")
_WIDE_SPACE = re.compile(r"(?<!\\)\\[;: ]|\\q?quad\b|~")
_FRAC = re.compile(r"\\[dtc]frac")
_DEGREES = re.compile(r"\^\s*\{?\s*\\circ\s*\}?|\\circ\b|°|\\degree\b")
_PERCENT = re.compile(r"\s*(?:\\%|%|\\text\{\s*%\s*\}|\s(?:percent|percentage|pct)\b)")
_ONE_LETTER_TEXT = re.compile(r"\\(?:mathrm|text|textrm|textnormal|mbox|mathit|operatorname)\s*\{\s*([A-Za-z])\s*\}")
_TEXT_AND = re.compile(r"\s*(?:\\(?:text|mbox|textnormal|textrm)\{\s*(?:,\s*)?(?:and|or)\s*\}|\b(?:and|or)\b)\s*")
_TEXT_GROUP = r"\\(?:text|mbox|textnormal|textrm|mathrm|textbf|textit)\s*\{[^{}]*\}"
_UNIT_WORDS = (
    "square units|sq units|units|unit|square feet|square inches|square meters|square centimeters|square cm|sq ft|"
    "cubic feet|cubic inches|cubic units|cubic centimeters|degrees|degree|dollars|dollar|cents|cent|inches|inch|"
    "feet|foot|ft|yards|yard|miles|mile|mph|meters|meter|km|cm|mm|hours|hour|hrs|minutes|minute|mins|seconds|"
    "second|days|day|weeks|years|pounds|pound|lbs|ounces|grams|kg|liters|gallons|people|students|ways|points|"
    "cookies|marbles|handshakes|games|tiles|cups|coins|apples|pages|steps|times|numbers|integers|digits|m|s|g")
_TRAILING_UNIT = re.compile(rf"\s*(?:{_TEXT_GROUP}|(?<![A-Za-z\\])(?:{_UNIT_WORDS})\b)\s*(?:\^\s*\{{?[23]\}}?)?\s*\.?$")
_MEMBER_OF = re.compile(r"^\s*[A-Za-z](?:_\{?[A-Za-z0-9]+\}?)?\s*\\in\b\s*")
_THOUSANDS = re.compile(r"-?\d{1,3}(?:,\d{3})+(?:\.\d+)?")
_REPEATING = re.compile(r"(-?)(\d*)\.(\d*)\\overline\{(\d+)\}")
_TEXT_ONLY = re.compile(rf"^(?:{_TEXT_GROUP}|[A-Za-z ,.'()-])+$")
_WORD = re.compile(r"(?<!\\)\b[A-Za-z]{2,}\b")
_NUMBER_WORDS = {w: str(i) for i, w in enumerate(
    ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
     "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"])}


def _repeating_to_fraction(match: re.Match) -> str:
    sign, whole, fixed, repeat = match.groups()
    value = Fraction(int(whole or "0")) + Fraction(int(fixed or "0"), 10 ** len(fixed)) \
        + Fraction(int(repeat), 10 ** len(fixed) * (10 ** len(repeat) - 1))
    return f"{sign}\\frac{{{value.numerator}}}{{{value.denominator}}}"


def _unwrap_box(answer: str) -> str:
    match = re.fullmatch(r"\s*\\(?:boxed|fbox)\s*\{(.*)\}\s*", answer, re.DOTALL)
    return match.group(1) if match else answer


@lru_cache(maxsize=4096)
def canonical(answer: str) -> str:
    """The answer with presentation removed (see the module docstring); spaces kept where TeX needs them."""
    text = _unwrap_box(answer.strip())
    text = _DELIMITERS.sub("", text)
    text = _FRAC.sub(r"\\frac", text)
    text = _THIN_SPACE.sub(lambda m: "," if m.group(0) == "{,}" else "", text)
    text = _WIDE_SPACE.sub(" ", text)
    text = text.strip().rstrip(".").strip()
    text = _ONE_LETTER_TEXT.sub(r"\1", text)
    text = _NUMBER_TEXT.sub(r"\1", text)
    text = _DEGREES.sub("", text)
    text = _PERCENT.sub("", text)
    text = _TEXT_AND.sub(", ", text) if re.search(r"\d|\\", text) else text
    for _ in range(3):
        stripped = _TRAILING_UNIT.sub("", text).strip()
        if not stripped or stripped == text or not re.search(r"[\d}]", stripped):
            break
        text = stripped
    text = _MEMBER_OF.sub("", text, count=1)
    if _THOUSANDS.fullmatch(text):
        text = text.replace(",", "")
    text = _REPEATING.sub(_repeating_to_fraction, text)
    text = re.sub(r",(?:\s*,)+", ",", text)
    text = re.sub(r"\s+", " ", text).strip(" ,")
    return _NUMBER_WORDS.get(text.lower(), text)


def has_percent(answer: str) -> bool:
    """Whether the answer carries a percent sign or word (see `canonical`)."""
    return bool(_PERCENT.search(answer))


def _is_text(answer: str) -> bool:
    """Whether an answer is text (a name, "odd", a choice "(C)" or "\\text{C}"), not a formula."""
    return bool(_TEXT_ONLY.match(answer)) and not re.search(r"\d", answer) \
        and bool(_WORD.search(answer) or "(" in answer or "\\" in answer)


def _text_form(answer: str) -> str | None:
    """Lower-case words of a text-like answer, or None for a formula."""
    if re.search(r"\d", answer) or not _TEXT_ONLY.match(answer):
        return None
    words = re.sub(_TEXT_GROUP, lambda m: m.group(0)[m.group(0).index("{") + 1:-1], answer)
    words = re.sub(r"[^A-Za-z ,]", "", words).lower()
    return re.sub(r"\s+", " ", words).strip(" ,") or None


@lru_cache(maxsize=4096)
def to_sympy(answer: str):
    """The sympy object of a canonical answer, parsed whole, or None when any part of it does not parse."""
    from latex2sympy2_extended.latex2sympy2 import NormalizationConfig, latex2sympy

    config = NormalizationConfig(basic_latex=True, units=False, malformed_operators=True, nits=True, boxed="all",
                                 equations=False)
    try:
        return latex2sympy(answer, normalization_config=config)
    except Exception:  # any parse failure means "not an expression"; never a crash of the reward
        return None


def answers_equal(prediction: str | None, reference: str) -> bool:
    """Whether `prediction` states the same answer as `reference` (see the module docstring)."""
    if prediction is None or not prediction.strip() or not reference.strip():
        return False
    pred, ref = canonical(prediction), canonical(reference)
    if re.sub(r"\s", "", pred) == re.sub(r"\s", "", ref):
        return True
    if re.fullmatch(r"[A-Za-z]", pred) and re.fullmatch(r"[A-Za-z]", ref):
        return False  # two different letters (x and X are different variables; math-verify ignores the case)
    if _is_text(pred) or _is_text(ref):
        return _text_form(pred) is not None and _text_form(pred) == _text_form(ref)
    golds, guesses = [ref], [pred]
    if has_percent(reference) != has_percent(prediction):
        scaled = ref if has_percent(reference) else pred
        (golds if has_percent(reference) else guesses).append(f"\\frac{{{scaled}}}{{100}}")
    from math_verify import verify

    for gold_text in golds:
        for guess_text in guesses:
            gold, guess = to_sympy(gold_text), to_sympy(guess_text)
            if gold is not None and guess is not None and verify(gold, guess, timeout_seconds=None,
                                                                 allow_set_relation_comp=True):
                return True
    return False
