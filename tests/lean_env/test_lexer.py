"""lean_env.lexer against Lean 4's token rules (Lean.Parser.Basic), and linear-time screening."""
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lean_env import screen
from lean_env.commands import split_commands
from lean_env.lexer import lex, name_parts
from lean_env.text import blank_comments


def kinds(text):
    return [(t.kind, t.text) for t in lex(text)]


@pytest.mark.parametrize("text,expected", [
    ('"a \\" -- b" c', [("str", '"a \\" -- b"'), ("ident", "c")]),          # escaped quote, `--` inside a string
    ('"a\\\\" -- b', [("str", '"a\\\\"'), ("comment", "-- b")]),            # escaped backslash ends the string
    ("'a' 'b'", [("char", "'a'"), ("char", "'b'")]),
    ("'\\'' x", [("char", "'\\''"), ("ident", "x")]),
    ("'\"' axiom", [("char", "'\"'"), ("ident", "axiom")]),                  # a quote char opens no string
    ("h' h₁' f''", [("ident", "h'"), ("ident", "h₁'"), ("ident", "f''")]),   # `'` continues identifiers
    ("f '' s", [("ident", "f"), ("sym", "''"), ("ident", "s")]),
    ("∑' n", [("sym", "∑"), ("sym", "'"), ("ident", "n")]),
    ("«a -- b».c x", [("ident", "«a -- b».c"), ("ident", "x")]),
    ("/- a /- b -/ c -/ d", [("comment", "/- a /- b -/ c -/"), ("ident", "d")]),
    ("/-- doc -/ e", [("comment", "/-- doc -/"), ("ident", "e")]),
    ("/--/ still doc -/ e", [("comment", "/--/ still doc -/"), ("ident", "e")]),    # `/--` then the body
    ("/-! mod -/ e", [("comment", "/-! mod -/"), ("ident", "e")]),
    ('r"\\" x', [("str", 'r"\\"'), ("ident", "x")]),                          # raw strings have no escapes
    ('r##"a"#b"## x', [("str", 'r##"a"#b"##'), ("ident", "x")]),
    ("`foo.bar ``baz", [("name", "`foo.bar"), ("name", "``baz")]),
    ("#eval #print", [("hash", "#eval"), ("hash", "#print")]),
    ("x.1 2.5e3 0x1F", [("ident", "x"), ("sym", "."), ("num", "1"), ("num", "2.5e3"), ("num", "0x1F")]),
    ("a := @[simp]", [("ident", "a"), ("sym", ":="), ("sym", "@["), ("ident", "simp"), ("sym", "]")]),
    ("λ x ↦ x", [("sym", "λ"), ("ident", "x"), ("sym", "↦"), ("ident", "x")]),      # λ is no identifier letter
    ("x⁻¹ ℝ 𝔼", [("ident", "x"), ("sym", "⁻"), ("sym", "¹"), ("ident", "ℝ"), ("ident", "𝔼")]),
])
def test_tokens_follow_lean_rules(text, expected):
    assert kinds(text) == expected


@pytest.mark.parametrize("text", ["/- open", '"open', "«open", "a <-- b", "∑'\"'", 's!"{x}"', 'r#"open'])
def test_unterminated_or_ambiguous_text_is_an_error_token(text):
    assert any(t.kind == "error" for t in lex(text)), kinds(text)


def test_name_parts_remove_escapes():
    assert name_parts("Foo.«bar.baz».x") == ("Foo", "bar.baz", "x")
    assert name_parts("«debug».skipKernelTC") == ("debug", "skipKernelTC")


def test_blank_comments_keeps_length_lines_and_literals():
    src = "a -- c\n'\"' /- x /- nested -/ y -/ \"s -- not\" «--» b"
    out = blank_comments(src)
    assert len(out) == len(src) and out.count("\n") == 1
    assert "nested" not in out and '"s -- not"' in out and "«--»" in out and out.rstrip().endswith("b")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab'\"«»/-{}\\#`r ∑¹:=\n@[]")), max_size=60))
def test_lexer_covers_the_text_in_order_and_never_raises(text):
    tokens = lex(text)
    assert all(a.end <= b.start for a, b in zip(tokens, tokens[1:]))
    assert all(text[t.start:t.end] == t.text for t in tokens if t.kind != "error")
    covered = "".join(text[t.start:t.end] for t in tokens)
    assert covered.replace(" ", "").replace("\n", "") == text.replace(" ", "").replace("\n", "")[:len(
        covered.replace(" ", "").replace("\n", ""))]
    split_commands([t for t in tokens if t.kind != "comment"], text)


STATEMENT = "theorem t1 (x : ℝ) (h : x = 2) : x + 1 = 3 := by\n"


@pytest.mark.parametrize("body", [
    "\n" * 100_000,
    "  norm_num [h]\n" * 100_000,
    "  -- a comment line\n" * 100_000,
    "/-" * 50_000 + "-/" * 50_000,
    "set_option maxRecDepth 100 in\n" * 100_000,
    "open Real in\n" * 100_000,
    "  (" * 100_000,
    '  "' + "x" * 100_000,
    "'" * 100_000,
    "«" * 100_000,
])
def test_screening_100k_lines_is_linear(body):
    """Timing goal 1 s (bench/screen_bench.py); the bound here is generous so that it cannot flake on 2 cores."""
    out = f"```lean4\ntheorem t1 (x : ℝ) (h : x = 2) : x + 1 = 3 := by\n{body}\n  norm_num\n```"
    t0 = time.perf_counter()
    r = screen(STATEMENT, out)
    assert time.perf_counter() - t0 < 8.0
    assert isinstance(r.ok, bool)
