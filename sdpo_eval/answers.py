"""Final-answer extraction from MATH-style solutions and equivalence grading with math-verify.

Extraction order: the last `\\boxed{...}` or `\\fbox{...}` (balanced, nested braces; also `\\boxed 5`),
else the last "The answer is X" / "final answer is X" phrase. Grading parses both sides with
math-verify (sympy-based, never `eval` of model output) and falls back to a normalised string match
when math-verify cannot parse either side.
"""
from __future__ import annotations

import re
import threading

_BOX_COMMANDS = ("\\boxed", "\\fbox")
_ANSWER_PHRASE = re.compile(r"(?:final answer|the answer)\s*(?:is|:)", re.IGNORECASE)
_PHRASE_VALUE = re.compile(r"\s*:?\s*(.+?)(?:\.\s|\.$|\n|$)")


def _braced(text: str, open_at: int) -> tuple[str, int] | None:
    """Content of the brace group opening at `text[open_at] == '{'` and the index after it
    (escaped `\\{` / `\\}` are literal braces), or None when it never closes."""
    depth, i = 0, open_at
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return text[open_at + 1:i], i + 1
        i += 1
    return None


def last_boxed(text: str) -> str | None:
    """Content of the last complete `\\boxed{...}` / `\\fbox{...}` (or `\\boxed X`), or None."""
    best: tuple[int, str] | None = None
    for command in _BOX_COMMANDS:
        start = text.rfind(command)
        while start != -1:
            after = start + len(command)
            rest = text[after:]
            stripped = rest.lstrip()
            content = None
            if stripped.startswith("{"):
                got = _braced(text, after + len(rest) - len(stripped))
                content = got[0] if got else None
            elif rest[:1] == " " and stripped:
                content = re.match(r"[^\s$]+", stripped).group(0)
            if content is not None:
                if best is None or start > best[0]:
                    best = (start, content)
                break
            start = text.rfind(command, 0, start)
    return best[1].strip() if best else None


def extract_answer(text: str | None) -> str | None:
    """The model's final answer: last boxed content, else the last "The answer is ..." phrase."""
    if not text:
        return None
    boxed = last_boxed(text)
    if boxed is not None:
        return boxed
    phrases = list(_ANSWER_PHRASE.finditer(text))
    value = _PHRASE_VALUE.match(text, phrases[-1].end()) if phrases else None
    if value is None:
        return None
    return value.group(1).strip().strip("$").strip() or None


def _normalise(answer: str) -> str:
    answer = re.sub(r"\\text\{\s*([^{}]*)\}", r"\1", answer)
    answer = re.sub(r"\\(?:left|right|!|,|;|:|\s)", "", answer)
    answer = answer.replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac").replace("$", "")
    return re.sub(r"\s+", "", answer).rstrip(".")


def is_equivalent(prediction: str | None, reference: str) -> bool:
    """Whether two final answers are mathematically equal (math-verify), else equal after normalisation."""
    if prediction is None or not prediction.strip():
        return False
    from math_verify import parse, verify

    on_main = threading.current_thread() is threading.main_thread()
    timeout = 5 if on_main else None  # math-verify's timeouts use SIGALRM, which only works on the main thread
    gold = parse(f"${reference}$", parsing_timeout=timeout)
    pred = parse(f"${prediction}$", parsing_timeout=timeout)
    if gold and pred and verify(gold, pred, timeout_seconds=timeout):
        return True
    return _normalise(prediction) == _normalise(reference)


def grade(solution: str | None, reference: str) -> tuple[bool, str | None]:
    """(correct, extracted answer) for a full model solution against a reference answer."""
    extracted = extract_answer(solution)
    return is_equivalent(extracted, reference), extracted
