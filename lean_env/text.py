"""Lean source text helpers: comment blanking, Unicode normalisation, suspicious characters."""
from __future__ import annotations

import unicodedata

# Bidi overrides/isolates, zero-width characters, BOM and word joiner: they can make text
# read differently from how Lean parses it.
_INVISIBLE = set("\u200b\u200c\u200d\u2060\ufeff\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")


def blank_comments(text: str) -> str:
    """Return `text` with every Lean comment (`-- …`, nested `/- … -/`) replaced by spaces.

    Newlines are kept and the length is unchanged, so offsets and line numbers still refer to
    the original text. String literals are respected (a `--` inside `"…"` is not a comment).
    An unterminated block comment blanks to the end of the text.
    """
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
        elif text.startswith("--", i):
            while i < n and text[i] != "\n":
                out[i] = " "
                i += 1
        elif text.startswith("/-", i):
            depth = 0
            while i < n:
                if text.startswith("/-", i):
                    depth += 1
                    out[i] = out[i + 1] = " "
                    i += 2
                elif text.startswith("-/", i):
                    depth -= 1
                    out[i] = out[i + 1] = " "
                    i += 2
                    if depth == 0:
                        break
                else:
                    if text[i] != "\n":
                        out[i] = " "
                    i += 1
        else:
            i += 1
    return "".join(out)


def normalise(text: str) -> str:
    """NFKC-normalised text with comments removed (for screening only, never sent to Lean:
    NFKC maps e.g. `ℝ` to `R`)."""
    return unicodedata.normalize("NFKC", blank_comments(text))


def suspicious_character(text: str) -> str | None:
    """Name of the first invisible/bidi/control character in `text`, or None."""
    for ch in text:
        if ch in _INVISIBLE or (unicodedata.category(ch) == "Cc" and ch not in "\n\t\r"):
            return f"U+{ord(ch):04X} {unicodedata.name(ch, 'control character')}"
    return None
