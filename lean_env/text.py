"""Lean source text helpers: comment blanking and suspicious characters."""
from __future__ import annotations

import re
import unicodedata

from lean_env.lexer import blank, lex

# Bidi overrides/isolates, zero-width characters, BOM and word joiner (they can make text read differently from how
# Lean parses it), control characters other than tab/newline/CR, and lone surrogates (not encodable as UTF-8).
_SUSPICIOUS = re.compile("[\u200b\u200c\u200d\u2060\ufeff\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c"
                         "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")


def blank_comments(text: str) -> str:
    """Return `text` with every Lean comment (`-- …`, nested `/- … -/`, doc comments) replaced by spaces.

    Newlines are kept and the length is unchanged, so offsets and line numbers still refer to the original text.
    Comments are found by `lean_env.lexer`, so a `--` inside a string, char literal or `«»` is not a comment.
    An unterminated block comment blanks to the end of the text.
    """
    return blank(text, lex(text), frozenset({"comment", "error"}))


def suspicious_character(text: str) -> str | None:
    """Name of the first invisible/bidi/control character or lone surrogate in `text`, or None."""
    m = _SUSPICIOUS.search(text)
    if m is None:
        return None
    ch = m.group()
    kind = "lone surrogate" if "\ud800" <= ch <= "\udfff" else "control character"
    return f"U+{ord(ch):04X} {unicodedata.name(ch, kind)}"
