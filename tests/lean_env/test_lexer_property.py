"""`lex` never desynchronises from a reference tokenizer transcribed from Lean 4.9's `src/Lean/Parser/Basic.lean`.

"Never desynchronise": every token `lex` emits before its first `error` token equals the reference's token at the
same index (kind, start, end), except that from the position where Lean itself fails to parse, `lex` may read on.
The reference is written function by function after Lean's, step by step on characters, with every token of the
table active (`lean_env/tables/tokens.txt`); it shares no code with the lexer. Its source is the stored copy of
`Basic.lean` at leanprover/lean4@00c1b82722b5 (the v4.9.0 tag could not be fetched), read as of v4.9.0 where they
differ: numbers have no `_` digit separators (`takeDigitsFn` came later), a missing exponent (`1e`) ends the number
instead of failing, and `\r` is whitespace.
"""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lean_env.lexer import lex
from lean_env.tables import load

TABLE = sorted(load("tokens.txt"))


class LeanError(Exception):
    """Lean's parser fails at `pos` (the start of the token it was reading)."""

    def __init__(self, pos: int):
        super().__init__(pos)
        self.pos = pos


def is_letter_like(c: str) -> bool:
    """`isLetterLike`: Greek but λ, Π, Σ; Coptic; polytonic Greek; letter-like symbols; Latin script letters."""
    v = ord(c)
    return ((0x3B1 <= v <= 0x3C9 and v != 0x3BB) or (0x391 <= v <= 0x3A9 and v not in (0x3A0, 0x3A3))
            or 0x3CA <= v <= 0x3FB or 0x1F00 <= v <= 0x1FFE or 0x2100 <= v <= 0x214F or 0x1D49C <= v <= 0x1D59F)


def is_sub_script_alnum(c: str) -> bool:
    """`isSubScriptAlnum`: numeric subscripts and the subscript letters."""
    v = ord(c)
    return 0x2080 <= v <= 0x2089 or 0x2090 <= v <= 0x209C or 0x1D62 <= v <= 0x1D6A


def is_id_first(c: str) -> bool:
    """`isIdFirst`: `Char.isAlpha` (ASCII) or `_` or letter-like."""
    return c.isascii() and c.isalpha() or c == "_" or is_letter_like(c)


def is_id_rest(c: str) -> bool:
    """`isIdRest`: `Char.isAlphanum` (ASCII), `_`, `'`, `!`, `?`, letter-like or subscript."""
    return c.isascii() and c.isalnum() or c in "_'!?" or is_letter_like(c) or is_sub_script_alnum(c)


class Reference:
    """Lean's `whitespace` then `tokenFn`, repeated over the whole input."""

    def __init__(self, text: str):
        self.s, self.n = text, len(text)

    def get(self, i: int) -> str:
        """`String.get`: past the end, `default : Char`, which is `'A'`."""
        return self.s[i] if i < self.n else "A"

    def finish_comment_block(self, start: int, i: int) -> int:
        """`finishCommentBlock nesting`: the end of the block comment whose body starts at `i`."""
        nesting = 1
        while i < self.n:
            curr, i = self.s[i], i + 1
            if curr == "-" and self.get(i) == "/" and i < self.n:
                nesting, i = nesting - 1, i + 1
                if nesting == 0:
                    return i
            elif curr == "/" and self.get(i) == "-" and i < self.n:
                nesting, i = nesting + 1, i + 1
        raise LeanError(start)   # "unterminated comment"

    def whitespace(self, i: int, out: list) -> int:
        """`whitespace`: spaces, line and block comments (doc comments are tokens plus `commentBody`, read alike)."""
        while i < self.n:
            curr = self.s[i]
            if curr == "\t":
                raise LeanError(i)   # "tabs are not allowed"
            if curr in " \r\n":
                i += 1
            elif curr == "-" and self.get(i + 1) == "-":
                end = self.s.find("\n", i)
                end = self.n if end < 0 else end
                out.append(("comment", i, end))
                i = end
            elif curr == "/" and self.get(i + 1) == "-":
                body = i + 3 if self.get(i + 2) in "-!" else i + 2
                end = self.finish_comment_block(i, body)
                out.append(("comment", i, end))
                i = end
            else:
                return i
        return i

    def quoted_char(self, start: int, i: int, in_string: bool) -> int:
        """`quotedCharCoreFn isQuotableCharDefault`: the escape after a backslash at `i - 1`."""
        curr = self.get(i)
        if i >= self.n:
            raise LeanError(start)
        if curr in "\\\"'rnt":
            return i + 1
        if curr == "x" or curr == "u":
            digits = 2 if curr == "x" else 4
            hexes = self.s[i + 1:i + 1 + digits]
            if len(hexes) == digits and all(h in "0123456789abcdefABCDEF" for h in hexes):
                return i + 1 + digits
        if in_string and curr == "\n":   # `stringGapFn`: whitespace holding exactly one newline
            seen_newline = False
            while i < self.n and self.s[i] in " \t\r\n":
                if self.s[i] == "\n" and seen_newline:
                    raise LeanError(start)   # "unexpected additional newline in string gap"
                seen_newline = seen_newline or self.s[i] == "\n"
                i += 1
            return i
        raise LeanError(start)   # "invalid escape sequence"

    def str_lit(self, start: int) -> int:
        """`strLitFnAux`."""
        i = start + 1
        while True:
            if i >= self.n:
                raise LeanError(start)   # "unterminated string literal"
            curr, i = self.s[i], i + 1
            if curr == '"':
                return i
            if curr == "\\":
                i = self.quoted_char(start, i, True)

    def char_lit(self, start: int) -> int:
        """`charLitFnAux`."""
        i = start + 1
        if i >= self.n:
            raise LeanError(start)
        curr, i = self.s[i], i + 1
        if curr == "\\":
            i = self.quoted_char(start, i, False)
        if self.get(i) != "'" or i >= self.n:
            raise LeanError(start)   # "missing end of character literal"
        return i + 1

    def take_while(self, i: int, pred) -> int:
        while i < self.n and pred(self.s[i]):
            i += 1
        return i

    def number(self, start: int) -> int:
        """`numberFnAux`: `0b`/`0o`/`0x` numbers, else `decimalNumberFn` with `parseOptDot` and `parseOptExp`."""
        digits = {"b": "01", "o": "01234567", "x": "0123456789abcdefABCDEF"}
        if self.s[start] == "0" and self.get(start + 1).lower() in digits and start + 1 < self.n:
            allowed = digits[self.get(start + 1).lower()]
            end = self.take_while(start + 2, lambda c: c in allowed)
            if end == start + 2:
                raise LeanError(start)   # `takeWhile1Fn`
            return end
        i = self.take_while(start, lambda c: c in "0123456789")
        if self.get(i) == "." and i < self.n:
            i = self.take_while(i + 1, lambda c: c in "0123456789")
        if self.get(i) in "eE" and i < self.n:
            k = i + 1
            k = k + 1 if self.get(k) in "+-" and k < self.n else k
            if self.get(k) in "0123456789" and k < self.n:
                i = self.take_while(k, lambda c: c in "0123456789")
        return i

    def raw_str_lit(self, start: int) -> int:
        """`rawStrLitFnAux`: `initState`, `normalState`, `closingState`."""
        i, num = start + 1, 0
        while self.get(i) == "#":
            num, i = num + 1, i + 1
        i += 1   # the opening quote (`isRawStrLitStart` checked it)
        while True:
            if i >= self.n:
                raise LeanError(start)
            curr, i = self.s[i], i + 1
            if curr != '"':
                continue
            if num == 0:
                return i
            closing = 0
            while True:   # closingState
                if i >= self.n:
                    raise LeanError(start)
                curr, i = self.s[i], i + 1
                if curr == "#":
                    closing += 1
                    if closing == num:
                        return i
                elif curr == '"':
                    closing = 0
                else:
                    break

    def is_raw_str_lit_start(self, i: int) -> bool:
        while self.get(i) == "#" and i < self.n:
            i += 1
        return self.get(i) == '"' and i < self.n

    def match_prefix(self, i: int) -> str | None:
        """`TokenTable.matchPrefix`: the longest token at `i`."""
        best = None
        for tk in TABLE:
            if self.s.startswith(tk, i) and (best is None or len(tk) > len(best)):
                best = tk
        return best

    def ident_end(self, start: int) -> int:
        """`identFnAux`'s `parse`: the end of the identifier at `start` (parts joined by `isIdCont`)."""
        i = start
        while True:
            if i >= self.n:
                raise LeanError(start)   # `mkEOIError`
            curr = self.s[i]
            if curr == "«":
                close = self.s.find("»", i + 1)
                if close < 0:
                    raise LeanError(start)   # "unterminated identifier escape"
                i = close + 1
            else:
                i = self.take_while(i + 1, is_id_rest)
            nxt = self.get(i + 1)
            if self.get(i) == "." and i + 1 < self.n and (is_id_first(nxt) or nxt == "«"):
                i += 1
            else:
                return i

    def token(self, i: int) -> tuple[str, int, int]:
        """`tokenFn`: one token at `i` as (kind, start, end)."""
        curr, nxt = self.s[i], self.get(i + 1)
        if curr == '"':
            return "str", i, self.str_lit(i)
        if curr == "'" and nxt != "'":
            return "char", i, self.char_lit(i)
        if curr in "0123456789":
            return "num", i, self.number(i)
        if curr == "`" and (is_id_first(nxt) or nxt == "«"):
            return "name", i, self.ident_end(i + 1)
        if curr == "r" and self.is_raw_str_lit_start(i + 1):
            return "str", i, self.raw_str_lit(i)
        tk = self.match_prefix(i)
        if is_id_first(curr) or curr == "«":   # `identFnAux` then `mkIdResult`/`isToken`
            end = self.ident_end(i)
            if tk is None or len(tk) < end - i:
                return "ident", i, end
            return ("ident" if len(tk) == end - i else "sym"), i, i + len(tk)
        if tk is None:
            raise LeanError(i)   # "token expected" (`mkTokenAndFixPos`)
        hash_cmd = tk.startswith("#") and len(tk) > 1 and is_id_first(tk[1])
        return ("hash" if hash_cmd else "sym"), i, i + len(tk)

    def tokens(self) -> tuple[list[tuple[str, int, int]], int | None]:
        """All tokens, and where Lean fails (None when it reads everything)."""
        out: list[tuple[str, int, int]] = []
        i = 0
        while True:
            try:
                i = self.whitespace(i, out)
            except LeanError as e:
                return out, e.pos
            if i >= self.n:
                return out, None
            try:
                t = self.token(i)
            except LeanError:
                return out, i
            out.append(t)
            i = t[2]


def assert_in_sync(text: str) -> None:
    ours = []
    for t in lex(text):
        if t.kind == "error":
            break
        assert text[t.start:t.end] == t.text
        ours.append((t.kind, t.start, t.end))
    ref, failed_at = Reference(text).tokens()
    agreed = min(len(ours), len(ref))
    assert ours[:agreed] == ref[:agreed], (text, ours, ref)
    if len(ours) > len(ref):   # read on: only where Lean failed
        assert failed_at is not None and ours[len(ref)][1] == failed_at, (text, ours, ref, failed_at)


COMMENTS = st.sampled_from(["-- line sorry\n", "/- a /- nested -/ b -/", "/-- doc -/", "/-! mod -/", "--\n",
                            "/--/ x -/", "/-/ y -/", "/- -- -/"])
STRINGS = st.sampled_from(['"a\\"b"', '"\\\\"', '"x\\ny\\t"', '"\\x41\\u0042"', '"-- /-"', '"\'"', '"a\\\n   b"',
                           '"\\q"', '"open'])
CHARS = st.sampled_from(["'a'", "'\\''", "'\\\\'", "'\"'", "'\\x41'", "'ab'", "'", "' '", "'\\u00e9'"])
RAWS = st.sampled_from(['r"a\\"', 'r#"a"b"#', 'r##"x"#y"##', 'r#"open', "r", "r#"])
IDENTS = st.sampled_from(["x", "h'", "h₁", "«a b».c", "x.y.z", "α", "λ", "Foo.«bar", "a.1", "f!", "x?", "_", "π",
                          "ℝ", "Type", "theorem", "at", "fun", "x.", "`foo", "``bar", "`«x y»", "`(", "`(tactic|"])
NUMBERS = st.sampled_from(["0", "42", "007", "2.5", "2.", "1e5", "1e", "3.14e-2", "0x1F", "0b101", "0o17", "0x",
                           "0b2", "1.2.3"])
GLUE = st.sampled_from(["", "", "", " ", "\n", "'", '"', "-", "/", "`", "#", "«", "»", "r", "\t", "{", "."])
PIECE = st.one_of(COMMENTS, STRINGS, CHARS, RAWS, IDENTS, NUMBERS, st.sampled_from(TABLE), GLUE)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(PIECE, max_size=14).map("".join))
def test_lex_never_desynchronises_from_lean_tokenizer(text):
    assert_in_sync(text)


@settings(max_examples=800, deadline=None)
@given(st.lists(st.sampled_from(TABLE), min_size=1, max_size=6).map("".join),
       st.sampled_from(["'a'", '"s"', "-- c", "/- c -/", "`n", 'r"s"', "x", "1", "'", "''"]))
def test_glued_tokens_before_literals_stay_in_sync(tokens, literal):
    """Tokens glued to each other and to a literal: the apostrophe tokens (`∑'`, `⁻¹'`) are where readings split."""
    assert_in_sync(tokens + literal)
    assert_in_sync(literal + tokens)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_arbitrary_text_stays_in_sync(text):
    assert_in_sync(text)


def test_reference_reads_the_apostrophe_tokens_as_lean_does():
    """The reference itself: `∑'` then a string (Lean's reading), not `∑` then a char literal."""
    ref, failed = Reference('∑\'"a"').tokens()
    assert ref == [("sym", 0, 2), ("str", 2, 5)] and failed is None
    ref, failed = Reference("⊕'a'").tokens()
    assert ref[0] == ("sym", 0, 2) and failed is None
