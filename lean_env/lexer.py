"""A Lean 4 tokenizer for screening, following Lean's own token rules (`Lean.Parser.Basic`).

Contract: `lex(text)` never raises, runs in linear time and returns every non-whitespace span of `text` as a
`Token`, in order. Where this lexer and Lean could read a text differently, it emits an `error` token instead of
guessing, so that the screen rejects the text. Rules copied from Lean:
- `--` starts a line comment and `/-` a block comment at any token start; block comments nest (`/-`, `-/` pairs
  scanned left to right); `/--` and `/-!` open doc comments, whose body starts after the third character.
- `"…"` strings with backslash escapes; `r"…"`, `r#"…"#` raw strings; `'` starts a char literal unless the next
  character is also `'`; `` `name `` name literals.
- identifiers: `isIdFirst` (ASCII letters, `_`, Lean's letter-like ranges) then `isIdRest` (adds digits, `'`, `!`,
  `?`, subscripts), or `«…»` parts, joined by `.`; `#` directly followed by a name is one token (`#eval`).
Kinds: ident, hash, num, str, char, name, comment, sym (one punctuation character, or a run of them), error.
Departures (each makes the screen stricter, never laxer): a string containing `{` is an error (Lean reads it as an
interpolated string after `s!`, `m!`, `throwError`, … and parses the braces as code); a comment opener glued to
`<`, `/`, `|`, … is an error (Lean may lex `<-`, `//`, `|-` as one token and then no comment starts); a char
literal glued to `∑`, `∏`, `¹`, … holding anything but a letter or digit is an error (`∑'` is one token in Mathlib).
"""
from __future__ import annotations

import re
from typing import NamedTuple

_LETTERLIKE = ("\u03b1-\u03ba\u03bc-\u03c9\u0391-\u039f\u03a1-\u03a2\u03a4-\u03a9\u03ca-\u03fb\u1f00-\u1ffe"
               "\u2100-\u214f\U0001d49c-\U0001d59f")
_ID_FIRST = "A-Za-z_" + _LETTERLIKE
_ID_REST = _ID_FIRST + "0-9'!?\u2080-\u2089\u2090-\u209c\u1d62-\u1d6a"
_PART = f"(?:«[^»]*»|[{_ID_FIRST}][{_ID_REST}]*)"
_IDENT = re.compile(f"{_PART}(?:\\.{_PART})*")
_STOP = "\\s\\w\"'«`#/\\-:()\\[\\]{}⟨⟩⦃⦄,@" + _LETTERLIKE
_TOKEN = re.compile(   # the frequent kinds first: Python's `re` tries the alternatives in order
    f"\\s*+(?:(?P<ident>(?!r\\#*\")(?:{_IDENT.pattern}))|(?P<sym>:=|@\\[|[^{_STOP}]+)"
    r"|(?P<num>0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)"
    r"|(?P<line>--)|(?P<block>/-)|(?P<str>\")|(?P<char>')|(?P<raw>r\#*\")"
    f"|(?P<name>``?(?=[«{_ID_FIRST}]))|(?P<hash>\\#[{_ID_FIRST}][{_ID_REST}]*)|(?P<guillemet>«)|(?P<one>\\S))",
    re.S,
)
_SIMPLE = {"ident": "ident", "sym": "sym", "num": "num", "hash": "hash", "one": "sym"}
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_CHAR = re.compile(r"'(?:\\(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|.)|[^\\])'", re.S)
_NEST = re.compile(r"/-|-/")
_GLUE_COMMENT = set("<>/\\|=+*-:!?.&^%$~")   # a comment opener right after these may be part of a Lean token
_GLUE_QUOTE = set("∑∏¹×∘'")                   # `∑'`, `∏'`, `⁻¹'`, `×'`, `''` are Mathlib tokens


class Token(NamedTuple):
    kind: str
    text: str
    start: int
    end: int


def _block_end(text: str, body: int) -> int:
    """End offset of a block comment whose body starts at `body` (nesting depth 1), or -1 if unterminated."""
    depth = 1
    for m in _NEST.finditer(text, body):
        depth += 1 if m.group() == "/-" else -1
        if depth == 0:
            return m.end()
    return -1


def _glued(tokens: list[Token], pos: int, chars: set[str]) -> bool:
    return bool(tokens) and tokens[-1].end == pos and tokens[-1].kind == "sym" and tokens[-1].text[-1] in chars


def lex(text: str) -> list[Token]:
    """All tokens of `text` (comments included as kind `comment`); see the module docstring."""
    tokens: list[Token] = []
    append, new, pos, stop = tokens.append, tuple.__new__, 0, len(text.rstrip())
    while pos >= 0:
        for m in _TOKEN.finditer(text, pos, stop):   # `stop`: a match must end in a token, never in whitespace
            kind = m.lastgroup
            if kind in _SIMPLE:   # the fast path: no Python-level scanning
                append(new(Token, (_SIMPLE[kind], m.group(kind), m.start(kind), m.end())))
                continue
            pos = _special(text, kind, m, tokens)
            break
        else:
            break
    return tokens


def _special(text: str, kind: str, m: re.Match, tokens: list[Token]) -> int:
    """Append the comment, string, char or name token matched by `m`; return where to go on (-1: stop)."""
    start, n = m.start(kind), len(text)
    if kind in ("line", "block") and _glued(tokens, start, _GLUE_COMMENT):
        tokens.append(Token("error", "a comment opener glued to an operator", start, n))
        return -1
    if kind == "line":
        end = text.find("\n", start)
        end = n if end < 0 else end
        tokens.append(Token("comment", text[start:end], start, end))
        return end
    if kind == "block":
        end = _block_end(text, start + (3 if text[start + 2:start + 3] in ("-", "!") else 2))
        tokens.append(Token("comment", text[start:end], start, end) if end >= 0
                      else Token("error", "an unterminated comment", start, n))
        return end
    if kind == "str":
        s = _STRING.match(text, start)
        if s is None:
            tokens.append(Token("error", "an unterminated string", start, n))
            return -1
        tokens.append(Token("str", s.group(), start, s.end()) if "{" not in s.group()
                      else Token("error", "a string with `{` (string interpolation)", start, s.end()))
        return s.end()
    if kind == "raw":
        hashes = m.end() - start - 2
        close = text.find('"' + "#" * hashes, m.end())
        if close < 0:
            tokens.append(Token("error", "an unterminated raw string", start, n))
            return -1
        tokens.append(Token("str", text[start:close + hashes + 1], start, close + hashes + 1))
        return close + hashes + 1
    if kind == "char":
        return _char(text, start, tokens)
    if kind == "name":
        i = _IDENT.match(text, m.end())
        if i is not None:
            tokens.append(Token("name", text[start:i.end()], start, i.end()))
            return i.end()
    tokens.append(Token("error", "an unterminated `«` identifier", start, n))
    return -1


def _char(text: str, start: int, tokens: list[Token]) -> int:
    """Append the token that starts with `'` at `start`; return its end."""
    if text.startswith("''", start):
        tokens.append(Token("sym", "''", start, start + 2))
        return start + 2
    c = _CHAR.match(text, start)
    glued = _glued(tokens, start, _GLUE_QUOTE)
    if c is not None and glued and not c.group()[1].isalnum():
        tokens.append(Token("error", "a quote after `∑`/`∏`/`¹` that Lean may read differently", start, c.end()))
        return c.end()
    if c is not None and not glued:
        tokens.append(Token("char", c.group(), start, c.end()))
        return c.end()
    tokens.append(Token("sym", "'", start, start + 1))
    return start + 1


def name_parts(ident: str) -> tuple[str, ...]:
    """Components of an identifier with `«»` escapes removed: `Foo.«bar baz»` -> ("Foo", "bar baz")."""
    return tuple(p[1:-1] if p.startswith("«") else p for p in re.findall(r"«[^»]*»|[^.«]+", ident))


def blank(text: str, tokens: list[Token], kinds: frozenset[str] = frozenset({"comment"})) -> str:
    """`text` with the tokens of `kinds` replaced by spaces (newlines kept, so offsets and lines still hold)."""
    parts, last = [], 0
    for t in tokens:
        if t.kind in kinds:
            parts.append(text[last:t.start])
            parts.append(re.sub(r"[^\n]", " ", t.text))
            last = t.end
    parts.append(text[last:])
    return "".join(parts)
