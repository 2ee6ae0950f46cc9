r"""A decimal against an exact reference (one without a decimal point): the rational it writes, or a rounding.

Contract: a decimal is the rational it writes (0.5 = 1/2, 0.142857 != 1/7; math-verify rounds both to 6 decimals),
unless it is a rounding the reference accepts (`accepts_rounding`): the reference rounded or truncated at the
decimal's last digit (`rounds_to`) with at least `ROUNDED_DIGITS` significant digits and an approximation sign
("\approx 0.1429" for 1/7), or at least `MACHINE_DIGITS` without ("0.0833333333333333" = 1/12). Only a rational
reference accepts a rounding: one of an irrational reference (2\sqrt{3}, \pi, \ln 2; also one sympy cannot decide)
is never its answer ("\approx 3.464" is not 2\sqrt{3}), unless the source's own grading accepts roundings (option
`rounded_irrationals`, e.g. OlympiadBench's judge for a problem that states its error). A decimal reference is itself
rounded: math-verify's rule.
"""
from __future__ import annotations

import re

# Against an exact reference a decimal counts as a rounding of it only with this many significant digits, all right:
# 3 when it says it is rounded ("\approx 0.143"), 10 when it does not (a machine's 0.0833333333333333 for 1/12;
# 0.142857 for 1/7 is not accepted: six digits also fit a wrong exact answer).
ROUNDED_DIGITS, MACHINE_DIGITS = 3, 10
DECIMAL = re.compile(r"(?<![\d.])(\d*)\.(\d+)(?![\d.])")


def as_fractions(text: str) -> str:
    """Every decimal of `text` as the exact fraction it writes ("0.25" -> "\\frac{025}{100}")."""
    return DECIMAL.sub(lambda m: f"\\frac{{{m.group(1)}{m.group(2)}}}{{1{'0' * len(m.group(2))}}}", text)


def accepts_rounding(gold, rounded_irrationals: bool) -> bool:
    """Whether the exact reference `gold` (its sympy object, or None) can be answered by a rounding: a rational one
    always, an irrational one only when `rounded_irrationals` (the source's own grading accepts roundings)."""
    return gold is not None and (rounded_irrationals or getattr(gold, "is_rational", None) is True)


def rounds_to(decimal: str, gold, min_digits: int) -> bool:
    """Whether `decimal` is the exact reference `gold` (its sympy object, or None) cut to its own decimals (rounded
    or truncated): |gold - decimal| < 10^-decimals, with at least `min_digits` significant digits."""
    import sympy

    digits = decimal.lstrip("-").split(".")[1]
    if len(re.sub(r"\D", "", decimal).lstrip("0")) < min_digits:
        return False
    try:
        value = sympy.N(gold, 30) if gold is not None else None
        return bool(value is not None and value.is_real and value.is_number
                    and abs(value - sympy.Rational(decimal)) < sympy.Rational(1, 10 ** len(digits)))
    except (TypeError, ValueError, AttributeError):
        return False
