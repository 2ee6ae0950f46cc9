import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lean_env import Verdict, parse_statement, screen
from lean_env.text import blank_comments

STATEMENT = "theorem t1 (x : ℝ) (h : x = 2) : x + 1 = 3 := by\n"


def test_honest_proof_with_header_comments_have_and_reformatted_statement(answer):
    out = answer(
        "have h2 : x = 2 := h -- keep\n  /- a block\n  comment -/ subst h2\n  norm_num",
        statement="theorem t1 (x:ℝ)\n    (h : x = 2) :\n  x + 1 = 3 := by",
        pre=("import Mathlib\nimport Aesop\nset_option maxHeartbeats 400000\nopen BigOperators Real Nat\n\n"
             "-- my proof\n"),
    )
    r = screen(STATEMENT, out)
    assert r.ok, r.reason
    assert "subst h2" in r.proof and r.helpers.startswith("set_option maxHeartbeats 400000\nopen BigOperators")


def test_helper_lemma_before_theorem_is_kept(answer):
    r = screen(STATEMENT, answer("linarith [aux x]", pre="lemma aux (y : ℝ) : y = y := rfl\n\n"))
    assert r.ok, r.reason
    assert r.helpers.startswith("lemma aux")


def test_lemma_keyword_and_term_mode_proof_accepted():
    st_ = "theorem t2 : (1 : ℕ) + 1 = 2 := by\n"
    r = screen(st_, "```lean\nlemma t2 : (1 : ℕ) + 1 = 2 :=\n  rfl\n```")
    assert r.ok, r.reason


@pytest.mark.parametrize("proof,verdict", [
    ("sorry", Verdict.SORRY),
    ("admit", Verdict.SORRY),
    ("exact sorryAx _ false", Verdict.SORRY),
    ("native_decide", Verdict.FORBIDDEN),
    ("decide +native", Verdict.FORBIDDEN),
    ("exact Lean.ofReduceBool _ _ rfl", Verdict.FORBIDDEN),
    ("norm_num\n#exit", Verdict.FORBIDDEN),
    ("norm_num\n#eval IO.println 1", Verdict.FORBIDDEN),
    ("norm_num\nrun_cmd Lean.logInfo \"x\"", Verdict.FORBIDDEN),
    ("norm_num\nelab \"foo\" : tactic => pure ()", Verdict.FORBIDDEN),
    ("norm_num\nmacro \"triv\" : tactic => `(tactic| sorry)", Verdict.SORRY),
    ("norm_num\nnotation \"⊤⊤\" => True", Verdict.FORBIDDEN),
    ("set_option debug.skipKernelTC true in\n  norm_num", Verdict.FORBIDDEN),
    ("exact?", Verdict.FORBIDDEN),
    ("apply?", Verdict.FORBIDDEN),
    ("norm_num\n@[implemented_by foo] def g := 1", Verdict.FORBIDDEN),
    ("norm_num\n@[extern \"c\"] opaque g : Nat", Verdict.FORBIDDEN),
    ("norm_num\naxiom cheat : False", Verdict.FORBIDDEN),
    ("norm_num\nimport Mathlib", Verdict.FORBIDDEN),
    ("norm_num\u202e", Verdict.FORBIDDEN),
    ("norm\u200bnum", Verdict.FORBIDDEN),
    ("", Verdict.NO_ANSWER),
])
def test_cheats_are_rejected(proof, verdict, answer):
    r = screen(STATEMENT, answer(proof))
    assert not r.ok and r.verdict is verdict, (proof, r)


@pytest.mark.parametrize("pre", [
    "instance : Fact (1 = 1) := ⟨rfl⟩\n",
    "@[instance] lemma foo : True := trivial\n",
    "namespace Foo\n",
    "attribute [-simp] add_comm\n",
    "def ℝ := ℕ\n",
])
def test_context_changes_before_theorem_are_rejected(pre, answer):
    r = screen(STATEMENT, answer("norm_num", pre=pre))
    assert not r.ok and r.verdict is Verdict.FORBIDDEN, (pre, r)


@pytest.mark.parametrize("pre", ["def y := 5\n", "abbrev R := ℕ\n", "open Nat in\n",
                                 "noncomputable def g (t : ℝ) := t\n",
                                 "section\nlemma a : True := trivial\nend\n"])
def test_fresh_helpers_and_prefixes_before_theorem_are_accepted(pre, answer):
    r = screen(STATEMENT, answer("norm_num", pre=pre))
    assert r.ok, (pre, r.reason)
    assert r.helpers.startswith(pre.rstrip())


@pytest.mark.parametrize("statement", [
    "theorem t1 (x : ℝ) (h : x = 2) : x + 1 = 4 := by",
    "theorem t1 (x : ℝ) (h : x = 2) : x + 1 = 30 := by",
    "theorem t1 (x : ℝ) (h : x = 2) (h' : False) : x + 1 = 3 := by",
    "theorem t1 (x : ℕ) (h : x = 2) : x + 1 = 3 := by",
    "theorem t1' (x : ℝ) (h : x = 2) : x + 1 = 3 := by",
])
def test_changed_or_missing_statement_is_rejected(statement, answer):
    r = screen(STATEMENT, answer("norm_num", statement=statement))
    assert not r.ok and r.verdict is Verdict.STATEMENT_MISMATCH, r


def test_comment_mentioning_sorry_is_fine_but_code_sorry_is_not(answer):
    assert screen(STATEMENT, answer("norm_num -- no sorry here\n  /- sorry -/")).ok
    assert not screen(STATEMENT, answer("norm_num -- \"\n  sorry")).ok


def test_statement_parsing_variants():
    for text, name in [("theorem a.b (x : ℕ) : x = x := by sorry", "a.b"),
                       ("/-- doc -/\ntheorem c : True :=", "c"),
                       ("import Mathlib\nopen Real\n\ntheorem d : True := by\n", "d")]:
        s = parse_statement(text)
        assert s.name == name and not s.core.rstrip().endswith(":=")
    assert parse_statement("import Mathlib\nopen Real\n\ntheorem d : True := by\n").preamble == "open Real\n\n"
    with pytest.raises(ValueError):
        parse_statement("lemma := 1")


def test_blank_comments_keeps_length_and_lines():
    src = 'a -- c\n/- x /- nested -/ y -/ "s -- not" b'
    out = blank_comments(src)
    assert len(out) == len(src) and out.count("\n") == 1
    assert "nested" not in out and '"s -- not"' in out and out.rstrip().endswith("b")


_pieces = st.sampled_from(["<think>", "</think>", "```lean4\n", "```lean\n", "```", "\n", " ", "theorem t1",
                           "(x : ℝ)", "(h : x = 2)", ": x + 1 = 3", ":=", "by", "sorry", "--", "/-", "-/", "\"",
                           "norm_num", "import Mathlib\n", "ｓ", "\u202e", "#exit", "lemma", "@[simp]", "def"])


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(), st.lists(_pieces, max_size=40).map("".join)), st.sampled_from([None, "stop", "length"]))
def test_screen_never_crashes(text, finish_reason):
    r = screen(STATEMENT, text, finish_reason=finish_reason)
    assert isinstance(r.ok, bool) and isinstance(r.reason, str)
    assert r.ok == (r.verdict is None)
    if r.ok:
        assert r.proof is not None and "sorry" not in blank_comments(r.proof)


def test_def_statements_as_in_proofnet_are_supported_but_shadowing_helpers_are_not():
    st_ = "def exercise_4_1_34 : Equiv.Perm (Fin 3) ≃* Matrix.GeneralLinearGroup (Fin 2) (ZMod 2) :="
    ok = screen(st_, "```lean4\n"
                     "def exercise_4_1_34 : Equiv.Perm (Fin 3) ≃* Matrix.GeneralLinearGroup (Fin 2) (ZMod 2) :=\n"
                     "  foo\n```")
    assert ok.ok, ok.reason
    bad = screen(st_, "```lean4\nnamespace Foo\ndef Matrix.GeneralLinearGroup := 1\nend Foo\nopen Foo\n"
                      "def exercise_4_1_34 : Equiv.Perm (Fin 3) ≃* Matrix.GeneralLinearGroup (Fin 2) (ZMod 2) :=\n"
                      "  foo\n```")
    assert not bad.ok and bad.verdict is Verdict.FORBIDDEN and "shadows `Matrix.GeneralLinearGroup`" in bad.reason


def test_copy_of_trusted_header_with_definitions_is_accepted():
    header = "import Mathlib\n\nopen Real\n\nnoncomputable def f : ℕ → ℝ\n| 0 => 1\n| (n + 1) => f n\n"
    st_ = "theorem ex : f 0 = 1 :="
    out = ("```lean4\nimport Mathlib\nopen Real\nnoncomputable def f : ℕ → ℝ\n  | 0 => 1\n  | (n + 1) => f n\n\n"
           "theorem ex : f 0 = 1 := by simp [f]\n```")
    assert screen(st_, out, header=header).ok
    assert not screen(st_, out).ok
    changed = out.replace("| 0 => 1\n", "| 0 => 2\n", 1)
    assert not screen(st_, changed, header=header).ok
