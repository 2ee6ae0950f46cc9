"""Extract the proof answer from a model output.

Contract: the answer is the *last* complete ```lean4 (or ```lean) block after the last
`</think>`. A `<think>` without `</think>`, an unterminated lean block, or
`finish_reason == "length"` means the output was truncated.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from lean_env.lexer import lex

_FENCE = re.compile(r"```")
_LEAN_INFO = re.compile(r"(?i)^(lean4|lean)\b")


@dataclass(frozen=True)
class Extracted:
    """The answer of a model output: status `ok` with its `code`, or `no_answer` / `truncated` with the `reason`."""

    status: Literal["ok", "no_answer", "truncated"]
    code: str | None
    reason: str


def _has_code(text: str) -> bool:
    """Whether `text` holds anything but comments (lexes only when it starts with a comment)."""
    stripped = text.lstrip()
    if not stripped.startswith(("--", "/-")):
        return bool(stripped)
    return any(t.kind != "comment" for t in lex(text))


def extract_answer(model_output: str | None, finish_reason: str | None = None) -> Extracted:
    """Return the last lean code block of `model_output` or why there is none."""
    if not isinstance(model_output, str) or not model_output.strip():
        return Extracted("no_answer", None, "empty output")
    if finish_reason == "length":
        return Extracted("truncated", None, "generation stopped at the length limit")
    text = model_output
    if "</think>" in text:
        text = text.rsplit("</think>", 1)[1]
    elif "<think>" in text:
        return Extracted("truncated", None, "<think> without </think>")
    last: str | None = None
    pos = 0
    while True:
        m = _FENCE.search(text, pos)
        if m is None:
            break
        eol = text.find("\n", m.end())
        info = text[m.end(): eol if eol >= 0 else len(text)].strip()
        close = _FENCE.search(text, eol + 1) if eol >= 0 else None
        is_lean = bool(_LEAN_INFO.match(info))
        if close is None:
            if is_lean:
                return Extracted("truncated", None, "unterminated ```lean block")
            break
        if is_lean:
            last = text[eol + 1: close.start()]
        pos = close.end()
    if last is None:
        return Extracted("no_answer", None, "no ```lean4 block after the reasoning")
    if not _has_code(last):
        return Extracted("no_answer", None, "the ```lean4 block is empty")
    return Extracted("ok", last, "")
