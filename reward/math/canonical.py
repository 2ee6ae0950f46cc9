r"""The normal form of a final answer (`canonical`): presentation removed, spaces kept where TeX needs them, so that
equal answers compare equal as text or parse to the same sympy object (`reward.math.equal`). Stdlib only; every
regex is linear in the answer's length (whitespace runs are cut to one space first).

Deliberate normalisations (MATH's conventions; each is a departure from plain math-verify):
- units: a trailing unit after a number is dropped ("10\text{ cm}^2" = 10): a unit word ("cm", "miles", "square
  units"), or a `\text{..}`/`\mbox{..}`/`\mathrm{..}` group holding a unit word or unit symbol ("\text{ m}",
  "\text{s}"), also compound (OlympiadBench's "2.5 \mathrm{~m} / \mathrm{s}", "\mathrm{~kg} \cdot \mathrm{m}^{-3}").
  A bare letter is a variable, not a unit ("4s" is 4s, not 4), and a text group that is not a unit stays
  ("7 \text{ or more}" is not 7). `\mathrm{e}`, `\mathrm{i}`, `\text{i}` stay the constants (math-verify drops them
  as units: "3+4\mathrm{i}" = 7);
- percent, one way: a reference "q\%" accepts q and q/100 (MATH references state percentages both ways); a
  prediction "p\%" against a reference q without the sign is the number p/100, or p when |q| > 1 (a reference that
  left the sign off a percentage: "20" for "what percent"), so "0.5\%" is not 0.5 but "50\%" is; with the sign on
  both sides the numbers compare;
- an approximation sign before the value is dropped ("\approx 1.5" = 1.5), and so is the rounding after an exact
  value ("\frac{\sqrt3}{2} \approx 0.866" is the exact value); a quantifier over every x after a function
  ("f(x) = 2x \text{ for all } x", "\forall x \in \mathbb{R}") is dropped, a restricted one ("for all x > 0") stays;
- Unicode: the full-width and ideographic commas separate a list ("1，2" = "1, 2"); "−5" = -5, "3√2" = 3\sqrt{2},
  "π", "∞", "≤", "×", "·" as their TeX; a mixed number "7 3/4" (or "7\frac{3}{4}") = 31/4; scale words
  "2.5 million" = 2500000;
- degrees: "90^\circ" = 90; dollars: "\$5.00" = 5; thousands separators: "12{,}000" = "12,\!000" = 12000, while
  "32, 349" (a space after the comma) is a list;
- repeating decimals: "0.\overline{45}" = 5/11 (math-verify parses the prefix "0");
- a leading "x \in" is dropped ("x \in [1,2]" = [1,2]); "x = 5" = 5 and sets = relations ("x > 3" = (3, \infty))
  are math-verify's own rules;
- a numeral in a base ("204_5", "1011_{2}") is its digits and base: a different base or digits is a different
- an answer written in number words ("six", "twenty-five", "one hundred") is that number.
`unit_of` gives the unit `canonical` dropped, so two different units can be told apart (1.5 km/s is not 1.5 m/s).
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
_UNIT_WORDS = (
    "square units|sq units|units|unit|square feet|square inches|square meters|square centimeters|square cm|sq ft|"
    "cubic feet|cubic inches|cubic units|cubic centimeters|degrees|degree|radians|radian|dollars|dollar|cents|cent|"
    "inches|inch|feet|foot|ft|yards|yard|miles|mile|mph|meters|meter|kilometers|kilometer|centimeters|centimeter|"
    "millimeters|millimeter|kilograms|kilogram|km|cm|mm|hours|hour|hrs|minutes|minute|mins|"
    "seconds|second|days|day|weeks|years|pounds|pound|lbs|ounces|grams|kg|liters|gallons|yuan|people|students|ways|"
    "points|cookies|marbles|handshakes|games|tiles|cups|coins|apples|pages|steps|times|numbers|integers|digits")
# Units only inside a text group; OlympiadBench's physics answers add J, N, W, K, Pa, V, A, C, Hz, eV, mol, T.
_UNIT_SYMBOLS = ("m|s|g|h|l|L|mL|ml|hr|min|sec|rad|mi|lb|oz|in|yd|km/h|mi/h|m/s|J|kJ|N|W|kW|K|Pa|kPa|V|A|C|Hz|"
                 "eV|MeV|mol|T|nm|mg|ms")
_TEXT_UNIT = (rf"\\(?:text|mbox|textnormal|textrm|mathrm|textbf|textit)\s*\{{\s*(?:{_UNIT_WORDS}|{_UNIT_SYMBOLS})"
              r"\s*(?:\^\s*\{?[23]\}?)?\s*\}")
# One unit at the end, with its power and the "/" or "\cdot" that joins it to the unit before it (a compound unit
# "\mathrm{~m} / \mathrm{s}^{2}" goes one unit per pass).
_TRAILING_UNIT = re.compile(rf"\s*(?:(?:/|\\cdot)\s*)?(?:{_TEXT_UNIT}|(?<![A-Za-z\\])(?:{_UNIT_WORDS})\b)\s*"
                            r"(?:\^\s*\{?-?[1-3]\}?)?\s*\.?$")
# A unit's names as one symbol, so "3 hours" and "3 \text{ h}" carry the same unit (`unit_of`).
_UNIT_SYMBOL = {"centimeter": "cm", "meter": "m", "metre": "m", "kilometer": "km", "millimeter": "mm", "inch": "in",
                "foot": "ft", "feet": "ft", "yard": "yd", "mile": "mi", "second": "s", "sec": "s", "minute": "min",
                "hour": "h", "hr": "h", "hrs": "h", "day": "d", "gram": "g", "kilogram": "kg", "liter": "L", "l": "L",
                "pound": "lb", "lbs": "lb", "ounce": "oz", "radian": "rad", "degree": "deg"}
_COMPOUND_UNIT = {"mph": ("mi", "h"), "kmh": ("km", "h")}
_MEMBER_OF = re.compile(r"^\s*[A-Za-z](?:_\{?[A-Za-z0-9]+\}?)?\s*\\in\b\s*")
_THOUSANDS = re.compile(r"-?\d{1,3}(?:,\d{3})+(?:\.\d+)?")
_REPEATING = re.compile(r"(-?)(?<![\d.])(\d*)\.(\d*)\\overline\{(\d+)\}")   # starts only where a number does
_UNICODE = str.maketrans({"\u2212": "-", "\uff0d": "-", "π": "\\pi ", "∞": "\\infty ", "×": "\\times ",
                          "·": "\\cdot ", "≤": "\\le ", "≥": "\\ge ", "≠": "\\ne ", "≈": "\\approx ",
                          "，": ", ", "、": ", ", "；": "; "})   # full-width and ideographic commas list (", ")
_UNICODE_ROOT = re.compile(r"√\s*(?:\(([^()]*)\)|\{([^{}]*)\}|([A-Za-z0-9.]+))")
_MIXED_NUMBER = re.compile(r"(-?)(\d+)(?:\s+(\d+)\s*/\s*(\d+)|\s*\\frac\{(\d+)\}\{(\d+)\})")
_SCALED = re.compile(r"(-?\d+(?:\.\d+)?)\s*(?:\\text\{\s*)?(thousand|million|billion|trillion)\s*\}?")
_SCALES = {"thousand": 10 ** 3, "million": 10 ** 6, "billion": 10 ** 9, "trillion": 10 ** 12}
_SMALL_NUMBERS = {w: i for i, w in enumerate(
    ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
     "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"])}
_TENS = {w: 10 * i for i, w in enumerate(["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"],
                                         start=2)}
# An approximation sign before the value ("\approx 1.5", "v \approx 3.0"; OlympiadBench reads it as "="), and the
# rounding an exact value is followed by ("\frac{\sqrt{3}}{2} \approx 0.866": the exact value is the answer).
_APPROX = re.compile(r"^(?:[A-Za-z](?:_\{?\w+\}?)?\s*)?(?:\\approx|\\simeq|\\sim(?![A-Za-z]))\s*")
_ROUNDED_TAIL = re.compile(r"(?<=\S)\s*(?:\\approx|\\simeq)\s*-?\d*\.?\d+$")
# A quantifier over every x after a function answer ("f(x) = 2x \text{ for all } x", "\forall x \in \mathbb{R}"); a
# restricted domain ("for all x > 0") stays.
_FOR_ALL = re.compile(r"\s*,?\s*(?:\\(?:text|mbox|textnormal|textrm)\s*\{\s*for\s+(?:all|every|any)(?:\s+real)?"
                      r"(?:\s+numbers?)?\s*\}|\bfor\s+(?:all|every|any)(?:\s+real)?(?:\s+numbers?)?|\\forall)\s*"
                      r"[A-Za-z](?:\s*\\in\s*\\mathbb\s*\{?[RQZNC]\}?)?\s*\.?$")


def _repeating_to_fraction(match: re.Match) -> str:
    sign, whole, fixed, repeat = match.groups()
    value = Fraction(int(whole or "0")) + Fraction(int(fixed or "0"), 10 ** len(fixed)) \
        + Fraction(int(repeat), 10 ** len(fixed) * (10 ** len(repeat) - 1))
    return f"{sign}\\frac{{{value.numerator}}}{{{value.denominator}}}"


def _number_from_words(text: str) -> str | None:
    """"twenty-five" -> "25", "one hundred and five" -> "105", "six" -> "6"; None unless every word is a number word."""
    words = re.split(r"[\s-]+", text.lower().strip())
    total, current, seen = 0, 0, False
    for i, word in enumerate(words):
        if word in _SMALL_NUMBERS or word in _TENS:
            current, seen = current + _SMALL_NUMBERS.get(word, _TENS.get(word, 0)), True
        elif word == "hundred" and (seen or i == 1 and words[0] == "a"):
            current, seen = max(current, 1) * 100, True
        elif word in _SCALES and seen:
            total, current = total + max(current, 1) * _SCALES[word], 0
        elif not (word == "and" and seen or word == "a" and i == 0):
            return None
    return str(total + current) if seen else None


def _exact(value: Fraction) -> str:
    """An exact rational as TeX: "31" or "\\frac{31}{4}" (sign in the numerator)."""
    return str(value.numerator) if value.denominator == 1 else f"\\frac{{{value.numerator}}}{{{value.denominator}}}"


def _mixed_or_scaled(text: str) -> str:
    """A whole answer that is a mixed number ("7 3/4", "7\\frac{3}{4}") or a scaled number ("2.5 million"), exactly."""
    mixed = _MIXED_NUMBER.fullmatch(text)
    if mixed:
        sign, whole, *parts = mixed.groups()
        top, bottom = (int(p) for p in (parts[:2] if parts[0] else parts[2:]))
        if 0 < top < bottom:
            value = int(whole) + Fraction(top, bottom)
            return ("-" if sign else "") + _exact(value)
    scaled = _SCALED.fullmatch(text)
    if scaled:
        return _exact(Fraction(scaled.group(1)) * _SCALES[scaled.group(2)])
    return text


def _unicode_to_tex(text: str) -> str:
    """Unicode math a model writes ("−5", "3√2", "√(x+1)", "2π", "≤") as the TeX the parser reads."""
    text = text.translate(_UNICODE)
    return _UNICODE_ROOT.sub(lambda m: f"\\sqrt{{{next(g for g in m.groups() if g is not None)}}}", text)


def _unwrap_box(answer: str) -> str:
    match = re.fullmatch(r"\s*\\(?:boxed|fbox)\s*\{(.*)\}\s*", answer, re.DOTALL)
    return match.group(1) if match else answer


def canonical(answer: str) -> str:
    """The answer with presentation removed (see the module docstring); spaces kept where TeX needs them."""
    return _canonical_and_unit(answer)[0]


def unit_of(answer: str) -> frozenset[str]:
    """The words of the unit `canonical` dropped ("\\mathrm{~km} / \\mathrm{s}" -> {km, s}), singular, without
    powers or "square"/"cubic"; empty when it dropped none."""
    return _canonical_and_unit(answer)[1]


def _unit_words(pieces: list[str]) -> frozenset[str]:
    """Unit symbols of the dropped pieces; {"unit"} (a generic "units") matches any unit."""
    text = re.sub(r"\\[A-Za-z]+|\^\s*\{?-?\d\}?", " ", " ".join(pieces))
    words = {w[:-2] if w.endswith("ches") else w[:-1] if len(w) > 3 and w.endswith("s") else w
             for w in re.findall(r"[A-Za-z]+", text) if w not in ("square", "cubic", "sq")}
    symbols = frozenset(_UNIT_SYMBOL.get(w, w) for w in words)
    return frozenset(s for unit in symbols for s in _COMPOUND_UNIT.get(unit, (unit,)))


@lru_cache(maxsize=4096)
def _canonical_and_unit(answer: str) -> tuple[str, frozenset[str]]:
    # One space per run first: the patterns below open with \s*, quadratic in the length of a whitespace run.
    text = re.sub(r"\s+", " ", _unicode_to_tex(_unwrap_box(answer.strip())))
    text = _DELIMITERS.sub("", text)
    text = _FRAC.sub(r"\\frac", text)
    text = _THIN_SPACE.sub(lambda m: "," if m.group(0) == "{,}" else "", text)
    text = _WIDE_SPACE.sub(" ", text)
    text = text.strip().rstrip(".").strip()
    text = _ROUNDED_TAIL.sub("", _APPROX.sub("", text, count=1))
    text = _FOR_ALL.sub("", text)
    text = _NUMBER_TEXT.sub(r"\1", text)
    text = _DEGREES.sub("", text)
    text = _PERCENT.sub("", text)
    units = []
    for _ in range(4):
        unit = _TRAILING_UNIT.search(text)
        stripped = text[:unit.start()].strip() if unit else ""
        if not stripped or not re.search(r"[\d}]", stripped):
            break
        text = stripped
        units.append(unit.group(0))
    text = _ONE_LETTER_TEXT.sub(r"\1", text)
    text = _TEXT_AND.sub(", ", text) if re.search(r"\d|\\", text) else text
    text = _MEMBER_OF.sub("", text, count=1)
    if _THOUSANDS.fullmatch(text):
        text = text.replace(",", "")
    text = _REPEATING.sub(_repeating_to_fraction, text)
    text = re.sub(r",(?:\s*,)+", ",", text)
    text = _mixed_or_scaled(re.sub(r"\s+", " ", text).strip(" ,"))
    return _number_from_words(text) or text, _unit_words(units)


def is_rounded(answer: str) -> bool:
    """Whether the answer says it is a rounding: an approximation sign before its value ("\\approx 0.143")."""
    return bool(_APPROX.match(_DELIMITERS.sub("", _unicode_to_tex(_unwrap_box(answer.strip()))).strip()))


def has_percent(answer: str) -> bool:
    """Whether the answer carries a percent sign or word (see `canonical`)."""
    return bool(_PERCENT.search(re.sub(r"\s+", " ", answer)))   # one space per run: _PERCENT opens with \s*
