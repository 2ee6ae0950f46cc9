r"""Whether two final answers are the same mathematical object: our normaliser, then a whole-string sympy parse.

Contract: `answers_equal(prediction, reference)` is True only when both strings, after `canonical`, are equal as
text or parse *completely* (latex2sympy over the whole string; no prefix of it) to objects that math-verify's
comparison calls equal. A side that does not parse completely can only match as text. Model output is never
evaluated as code. No time limit here: `reward.math.grader` runs this in a worker process it can kill. An answer
longer than `MAX_CHARS` characters after normalising matches only as text, so a 100,000-digit literal or a
50,000-term list never reaches sympy (and every normalising regex is linear in the answer's length).
Normalisation is `reward.math.canonical`'s (units, percent, Unicode, number words, ...); a decimal against an exact
reference follows `reward.math.decimals`; the rest is here:
- a numeral in a base ("204_5", "1011_{2}") is its digits and base: a different base or digits is a different
  answer (a subscripted symbol for sympy, so "204_8" would equal "204_5"), and a side without the subscript matches
  the digits;
- a multiple-choice label with its value ("\textbf{(D)}\ 12", AMC's form) equals the bare label "(D)" and the bare
  value 12, and two labelled values need the same label and value;
- text answers ("\text{Evelyn}", "(C)", "odd") compare as lower-case text, never as products of symbols (words left
  in a formula, "0 \text{ or more}", make it no formula: it matches only as text, never through sympy); two bare
  letters are equal only with the same case.
"""
from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache

from reward.math.canonical import canonical, has_percent, is_rounded, unit_of
from reward.math.decimals import (
    DECIMAL,
    MACHINE_DIGITS,
    ROUNDED_DIGITS,
    accepts_rounding,
    as_fractions,
    rounds_to,
)

_TEXT_GROUP = r"\\(?:text|mbox|textnormal|textrm|mathrm|textbf|textit|mathbf|textsf|texttt|emph)\s*\{[^{}]*\}"
_BASE_NUMERAL = re.compile(r"((?=[0-9A-Za-z]*\d)[0-9A-Za-z]+)_\{?(\d+)\}?")     # "204_5", "A3_{16}": digits in a base
_CHOICE_TEXT = r"(?:\\(?:text|textbf|mathbf|mathrm|textrm)\s*\{\s*)?"
_CHOICE = re.compile(rf"{_CHOICE_TEXT}\(\s*([A-Ea-e])\s*\)\s*\}}?(?:\s*([-\d\\.][^()]*))?|{_CHOICE_TEXT}([A-E])\s*\}}?")
_TEXT_ONLY = re.compile(rf"^(?:{_TEXT_GROUP}|[A-Za-z ,.'()]|(?<=[A-Za-z])-(?=[A-Za-z]))+$")   # no sign: "-(Evelyn)"
_PROSE = re.compile(r"\\(?:text|mbox|textnormal|textrm|textbf|textit|mathrm)\s*\{[^{}]*[A-Za-z]{2}[^{}]*\}")
_WORD = re.compile(r"(?<!\\)\b[A-Za-z]{2,}\b")
MAX_CHARS = 1000            # no MATH answer is this long (matrices and tuple lists stay under 400); text only beyond


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


def _choice(answer: str) -> tuple[str, str] | None:
    """(letter, value) of a multiple-choice answer: "(D)", "\\textbf{(D)} 12", "\\text{D}", "D" (A-E upper-case only
    when bare, so the constant e is no choice); None otherwise."""
    match = _CHOICE.fullmatch(answer.strip())
    value = (match.group(2) or "").strip() if match else ""
    if match is None or re.search(r"(?<![\\A-Za-z])[A-Za-z]{2,}", value) or (value and not re.search(r"\d", value)):
        return None   # a value is a number or formula, not words ("(C) \text{ or more}")
    return (match.group(1) or match.group(3)).upper(), value


def _above_one(answer: str) -> bool:
    """Whether a canonical answer is a plain number of absolute value above 1."""
    return bool(re.fullmatch(r"-?\d+(?:\.\d+)?", answer)) and abs(Fraction(answer)) > 1


def answers_equal(prediction: str | None, reference: str, rounded_irrationals: bool = False) -> bool:
    """Whether `prediction` states the same answer as `reference` (see the module docstring); `rounded_irrationals`:
    the source's own grading accepts a rounding of an irrational reference (`reward.math.decimals`)."""
    if prediction is None or not prediction.strip() or not reference.strip():
        return False
    pred, ref = canonical(prediction), canonical(reference)
    pred_unit, ref_unit = unit_of(prediction), unit_of(reference)
    if pred_unit and ref_unit and pred_unit != ref_unit and "unit" not in pred_unit | ref_unit:
        return False   # "1.5 km/s" is not "1.5 m/s" (no conversion: 2.5 km against 2500 m is a false negative)
    pred_percent, ref_percent = has_percent(prediction), has_percent(reference)
    as_written = not pred_percent or ref_percent or _above_one(ref)  # "0.5\%" is not 0.5; "50\%" is 50
    if as_written and re.sub(r"\s", "", pred) == re.sub(r"\s", "", ref):
        return True
    if re.fullmatch(r"[A-Za-z]", pred) and re.fullmatch(r"[A-Za-z]", ref):
        return False  # two different letters (x and X are different variables; math-verify ignores the case)
    base_pred, base_ref = _BASE_NUMERAL.fullmatch(pred), _BASE_NUMERAL.fullmatch(ref)
    if base_pred or base_ref:   # a numeral in a base is its digits, never a subscripted symbol (sympy: 204_8 = 204_5)
        (digits_pred, in_pred), (digits_ref, in_ref) = (m.groups() if m else (text, None) for m, text in
                                                         ((base_pred, pred), (base_ref, ref)))
        return digits_pred.upper() == digits_ref.upper() and (in_pred is None or in_ref is None or in_pred == in_ref)
    pred_choice, ref_choice = _choice(pred), _choice(ref)
    if pred_choice and ref_choice and (pred_choice[1] or ref_choice[1]):   # "\textbf{(D)}\ 12" against "(D)"
        values = {v for v in (pred_choice[1], ref_choice[1]) if v}
        return pred_choice[0] == ref_choice[0] and (len(values) == 1 or answers_equal(*values, rounded_irrationals))
    if ref_choice and ref_choice[1] and not pred_choice:   # the option's value alone names the same option
        return answers_equal(prediction, ref_choice[1], rounded_irrationals)
    if pred_choice and pred_choice[1] and not ref_choice:   # "(B) 25" against 25: the value it names
        return answers_equal(pred_choice[1], reference, rounded_irrationals)
    if _is_text(pred) or _is_text(ref):
        return _text_form(pred) is not None and _text_form(pred) == _text_form(ref)
    if max(len(pred), len(ref)) > MAX_CHARS:
        return False  # unequal as text; sympy would spend seconds on a 100,000-digit literal
    if _PROSE.search(pred) or _PROSE.search(ref):
        return False  # words left in a formula ("7 \text{ or more}"): sympy would read them as a product of symbols
    exact = not DECIMAL.search(ref)
    if exact and DECIMAL.fullmatch(pred.lstrip("-")):
        gold = to_sympy(ref)
        if accepts_rounding(gold, rounded_irrationals) and \
                rounds_to(pred, gold, ROUNDED_DIGITS if is_rounded(prediction) else MACHINE_DIGITS):
            return True
    if exact or DECIMAL.search(pred):   # a decimal against an exact reference or another decimal is the rational
        pred = as_fractions(pred)         # it writes (0.142857 is not 1/7, 0.1000001 is not 0.1)
        ref = ref if exact else as_fractions(ref)
    one_sided = pred_percent != ref_percent
    golds = [ref] + ([f"\\frac{{{ref}}}{{100}}"] if one_sided and ref_percent else [])
    guesses = ([pred] if as_written else []) + ([f"\\frac{{{pred}}}{{100}}"] if one_sided and pred_percent else [])
    from math_verify import verify

    for gold_text in golds:
        for guess_text in guesses:
            gold, guess = to_sympy(gold_text), to_sympy(guess_text)
            if gold is not None and guess is not None and verify(gold, guess, timeout_seconds=None,
                                                                 allow_set_relation_comp=True):
                return True
    return False
