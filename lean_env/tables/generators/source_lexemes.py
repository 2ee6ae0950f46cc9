"""Split Lean 4 source text into lexemes for the table generators: words, string atoms, numbers and symbols.

Contract: `lexemes(text)` never raises and returns the lexemes of `text` in order, comments (nested `/- -/` blocks
included, Lean's `finishCommentBlock`) and whitespace dropped; a `"…"` literal is decoded (its escapes read), `&"…"`
is a non-reserved symbol, `r#"…"#` a raw string. This is the reader of `lean_env.tables.generators.lean_source` and
`make_meta`, not Lean's own tokenizer (`lean_env.lexer` is that, for the screen).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

_LEXEME = re.compile(r"""
    (?P<ws>\s+)
  | (?P<line>--[^\n]*)
  | (?P<block>/-)
  | (?P<raw>r(?P<hashes>\#*)")
  | (?P<str>&?")
  | (?P<char>'(?:\\(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|.)|[^\\'\n])')
  | (?P<word>(?:«[^»\n]*»|[^\W\d])(?:[\w'!?]|«[^»\n]*»|\.(?=[^\W\d«]))*)
  | (?P<num>\d[\w.]*)
  | (?P<sym>=>|:=|.)
""", re.X | re.S)
_ESCAPE = re.compile(r"\\(?:x([0-9a-fA-F]{2})|u([0-9a-fA-F]{4})|(.))", re.S)
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'"}

@dataclass(frozen=True)
class Lexeme:
    """One lexeme of Lean source as the declaration reader sees it (not Lean's own tokens)."""

    kind: str       # word, str (a `"…"` atom), nonreserved (`&"…"`), sym, num
    text: str       # for str/nonreserved: the decoded string, untrimmed
    start: int
    spaced: bool    # whitespace (or a comment) right before it


def _block_end(text: str, i: int) -> int:
    """End of the nested block comment whose body starts at `i` (Lean's `finishCommentBlock`)."""
    depth, n = 1, len(text)
    while i < n:
        if text.startswith("/-", i):
            depth, i = depth + 1, i + 2
        elif text.startswith("-/", i):
            depth, i = depth - 1, i + 2
            if depth == 0:
                return i
        else:
            i += 1
    return n


def _string_end(text: str, i: int) -> int:
    """End of the `"…"` literal whose body starts at `i`."""
    n = len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            i += 2
        elif c == '"':
            return i + 1
        else:
            i += 1
    return n


def _decode(body: str) -> str:
    def one(m: re.Match) -> str:
        if m.group(1) or m.group(2):
            return chr(int(m.group(1) or m.group(2), 16))
        return _SIMPLE_ESCAPES.get(m.group(3), m.group(3))
    return _ESCAPE.sub(one, body)


def lexemes(text: str) -> list[Lexeme]:
    """The words, atoms, numbers and symbols of `text`, comments and whitespace dropped."""
    out: list[Lexeme] = []
    i, n, spaced = 0, len(text), True
    while i < n:
        m = _LEXEME.match(text, i)
        kind = m.lastgroup
        if kind in ("ws", "line"):
            i, spaced = m.end(), True
            continue
        if kind == "block":
            i, spaced = _block_end(text, m.end()), True
            continue
        if kind == "raw":
            close = text.find('"' + m.group("hashes"), m.end())
            end = n if close < 0 else close + 1 + len(m.group("hashes"))
            out.append(Lexeme("rawstr", text[m.end():max(close, m.end())], i, spaced))
        elif kind == "str":
            end = _string_end(text, m.end())
            out.append(Lexeme("nonreserved" if m.group().startswith("&") else "str",
                              _decode(text[m.end():end - 1]), i, spaced))
        else:
            end = m.end()
            out.append(Lexeme(kind if kind != "char" else "charlit", m.group(), i, spaced))
        i, spaced = end, False
    return out
