"""Red-team corpus for the Lean reward (issue 21): each case names its family and the layer that must catch it.

Layers: `screen` (rejected before Lean, with the given verdict), `judge` (Lean runs; the judge rejects what Lean
prints, shown as the messages real Lean gives), `lean` (the screen lets it through and Lean itself reports an
error), `accept` (a legitimate output that must pass the screen).
"""
import pytest

from lean_env import LeanMessage, Outcome, RunResult, Verdict, build_check, judge, screen

ST = "theorem t1 (x : ℝ) (h : x = 2) : x + 1 = 3 := by\n"
SIG = "theorem t1 (x : ℝ) (h : x = 2) : x + 1 = 3"
ST2 = "theorem t2 (x : ℝ) (h₀ : 0 ≤ x) : Real.sqrt (x ^ 2) = x := by\n"
SIG2 = "theorem t2 (x : ℝ) (h₀ : 0 ≤ x) : Real.sqrt (x ^ 2) = x"
HEADER = "import Mathlib\nimport Aesop\n\nset_option maxHeartbeats 400000\n\nopen BigOperators Real Nat Topology Rat\n"
OK = f"{SIG} := by\n  subst h\n  norm_num"
FAKE = "theorem t1 : True := trivial"
S, F, M, N = Verdict.SORRY, Verdict.FORBIDDEN, Verdict.STATEMENT_MISMATCH, Verdict.NO_ANSWER

SCREEN = [  # (family, statement, code, verdict)
    # the statement text is present but inert, and another theorem follows
    ("inert", ST, f'def s := "{SIG} := by"\n{FAKE}', M),
    ("inert", ST, f'def s := r#"{SIG} := by "#\n{FAKE}', M),
    ("inert", ST, f"def c := '\"'\n-- {SIG} := by\"\n{FAKE}", M),
    ("inert", ST, f"/-- {SIG} := by -/\n{FAKE}", M),
    ("inert", ST, f"-- {SIG} := by\n{FAKE}", M),
    ("inert", ST, f"def «{SIG} := by» := 1\n{FAKE}", M),
    ("inert", ST, "theorem «t1 (x : ℝ) (h : x = 2) : x + 1 = 3» : True := trivial", M),
    ("inert", ST, f"lemma a : True := by\n  #check ({SIG} := by norm_num)\n{FAKE}", F),
    ("inert", ST, f"example : True := by\n  trivial\n{OK}", F),
    ("inert", ST, f"{OK}\n{FAKE}", F),
    ("inert", ST, f"{OK}\n  theorem t1 : True := trivial", F),
    ("inert", ST, f'def s := s!"{{1}} {SIG}"\n{FAKE}', F),
    # the statement is weakened by context
    ("context", ST, f"variable (hf : False)\ninclude hf\n{SIG} := by\n  exact hf.elim", F),
    ("context", ST, f"lemma a : True := by\n  trivial\n  variable (hf : False)\n{SIG} := by\n  exact hf.elim", F),
    ("context", ST, f"instance (priority := high) : LT ℝ := ⟨fun _ _ => True⟩\n{OK}", F),
    ("context", ST, f"@[instance] def ltTrue : LT ℝ := ⟨fun _ _ => True⟩\n{OK}", F),
    ("context", ST, f"@[default_instance] def ltTrue : LT ℝ := ⟨fun _ _ => True⟩\n{OK}", F),
    ("context", ST, f"def ltTrue : LT ℝ := ⟨fun _ _ => True⟩\nattribute [instance] ltTrue\n{OK}", F),
    ("context", ST, f"local instance : LT ℝ := ⟨fun _ _ => True⟩\n{OK}", F),
    ("context", ST, f"namespace Foo\n{OK}\nend Foo", F),
    ("context", ST, f"noncomputable section\n{OK}", F),
    ("context", ST, f"lemma a : True := trivial namespace Real\n{OK}", F),
    ("context", ST, f"lemma a : True := by trivial; namespace Real\n{OK}\nend Real", F),
    ("context", ST2, f"namespace Foo\nnoncomputable def Real.sqrt (x : ℝ) : ℝ := x\nend Foo\nopen Foo\n{SIG2} := by\n"
                     "  simp", F),
    ("context", ST2, f"def sqrt (x : ℝ) : ℝ := x\n{SIG2} := by\n  simp", Verdict.VALID),   # root `sqrt` is harmless
    ("context", ST, f"def ℝ := ℕ\n{OK}", F),
    ("context", ST, f'notation "ℝ" => ℕ\n{OK}', F),
    ("context", ST, f"macro_rules | `(ℝ) => `(ℕ)\n{OK}", F),
    ("context", ST, f"set_option autoImplicit true\n{OK}", F),
    ("context", ST, f"open Real renaming sqrt → x\n{OK}", F),
    # issue 57 accepts `open X hiding y` when the statement does not use `y` (test_screen_allowlist.py); hiding a
    # name the statement uses would let it resolve elsewhere (here `sqrt` to `Nat.sqrt`, the header opening `Nat`)
    ("context", ST2, f"open Real hiding sqrt\n{SIG2} := by\n  simp", F),
    ("context", ST, f"export Real (sqrt)\n{OK}", F),
    # (`universe u` was refused here; issue 48 allows it: it names universe variables for the model's section, runs no
    # code and declares no constant: tests/lean_env/test_honest_proofs.py)
    ("context", ST, f"class Cheat : Prop where\n  f : False\n{OK}", F),
    # the audit looks at the wrong constant
    ("constant", ST, f"namespace Foo\ntheorem t1 : True := trivial\nend Foo\nopen Foo\n{OK}", F),
    ("constant", ST, "namespace Foo\ntheorem _root_.t1 : True := trivial\nend Foo", F),
    ("constant", ST, f"private {OK}", F),
    ("constant", ST, f"@[simp] {OK}", F),
    # the tokenizer disagrees with Lean's: the hidden text must be seen
    ("tokenizer", ST, f"lemma a : Char := '\"'\nmacro_rules | `(tactic| norm_num) => `(tactic| trivial)\n{OK}", F),
    ("tokenizer", ST, f"def c : Char := '\\''\ndef d := \"x\"\naxiom cheat : False\n{OK}", F),
    ("tokenizer", ST, f"/- /- nested -/ still a comment -/ axiom cheat : False\n{OK}", F),
    ("tokenizer", ST, f'/- /- -/ -/ syntax "cheat" : tactic\n{OK}', F),
    ("tokenizer", ST, f"def «weird -- » := 1\nelab \"cheat\" : tactic => pure ()\n{OK}", F),
    ("tokenizer", ST, f"def «/-» := 1\naxiom cheat : False\ndef «-/» := 2\n{OK}", F),
    ("tokenizer", ST, f'def s := "--"\naxiom cheat : False\n{OK}', F),
    ("tokenizer", ST, f'def s := "\\"" ++ "x"\nmacro "cheat" : tactic => `(tactic| trivial)\n{OK}', F),
    ("tokenizer", ST, f'def s := r"\\" axiom cheat : False -- "\n{OK}', F),
    ("tokenizer", ST, f"lemma a (p : Prop) (h : p) : p := by exact h <--\naxiom cheat : False\n{OK}", F),
    ("tokenizer", ST, f"lemma a (s : Set ℕ) : s = s := by simp [∑'\"']\naxiom cheat : False\n{OK}", F),
    ("tokenizer", ST, f"lemma a (f : ℕ → ℝ) : ∑'(' ' = ' ' := rfl\naxiom cheat : False\n{OK}", F),
    ("tokenizer", ST, f"{SIG} := by\r\n  norm_num [h]\r\nsome_unknown_command", F),   # column 0 after CRLF
    ("tokenizer", ST, f"{OK}\n/- unterminated", F),
    ("tokenizer", ST, f'{OK}\ndef s := "unterminated', F),
    ("tokenizer", ST, f"{OK}\ndef «unterminated := 1", F),
    # forbidden options in other spellings
    ("option", ST, f"set_option debug.skipKernelTC true in\n{OK}", F),
    ("option", ST, f"set_option «debug».skipKernelTC true in\n{OK}", F),
    ("option", ST, f"set_option «debug.skipKernelTC» true in\n{OK}", F),
    ("option", ST, f"set_option debug.skipKernelTC true\n{OK}", F),
    ("option", ST, f"{SIG} := by\n  set_option debug.skipKernelTC true in\n  norm_num [h]", F),
    ("option", ST, f"set_option pp.all 1\n{OK}", F),   # pp.* takes true/false only (issue 48 allows those)
    ("option", ST, f"set_option trace.Meta.synthInstance true in\n{OK}", F),
    ("option", ST, f"set_option allowUnsafeReducibility true\n{OK}", F),
    ("option", ST, f"set_option maxHeartbeats foo in\n{OK}", F),
    # native evaluation and compiler hooks
    ("native", ST, f"{SIG} := by\n  native_decide", F),
    ("native", ST, f"{SIG} := by\n  decide (native := true)", F),
    ("native", ST, f"{SIG} := by\n  decide (native := (true))", F),
    ("native", ST, f"{SIG} := by\n  decide ( native:=true )", F),
    ("native", ST, f"{SIG} := by\n  decide +native", F),
    ("native", ST, f"{SIG} := by\n  decide (config := {{ native := true }})", F),
    ("native", ST, f"{SIG} := by\n  exact Lean.ofReduceBool _ _ rfl", F),
    ("native", ST, f"@[implemented_by id] def g (n : ℕ) : ℕ := n\n{OK}", F),
    ("native", ST, f'@[extern "c_fn"] def g (n : ℕ) : ℕ := n\n{OK}', F),
    ("native", ST, f"opaque g : ℕ\n{OK}", F),
    # elaboration-time IO and metaprogramming
    ("io", ST, f'#eval IO.println "forged REPL answer"\n{OK}', F),
    ("io", ST, f'#eval show Nat from 1\n{OK}', F),
    ("io", ST, f'run_cmd Lean.logInfo "forged"\n{OK}', F),
    ("io", ST, f"{SIG} := by\n  exact by_elab do return default", F),
    ("io", ST, f"{SIG} := by\n  run_tac do pure ()\n  norm_num [h]", F),
    ("io", ST, f'elab "cheat" : tactic => pure ()\n{OK}', F),
    ("io", ST, f"initialize pure ()\n{OK}", F),
    ("io", ST, f"unsafe def g : ℕ := 1\n{OK}", F),
    ("io", ST, f"{OK}\n#exit", F),
    ("io", ST, f"{OK}\n  #print axioms t1", F),
    ("io", ST, f'{SIG} := by\n  have := unsafeBaseIO (IO.println "x")\n  norm_num [h]', F),
    ("io", ST, f"test_extern Nat.add 1 2\n{OK}", F),
    ("io", ST, f"{SIG} := by\n  exact?", F),
    # incomplete proofs
    ("sorry", ST, f"{SIG} := by\n  sorry", S),
    ("sorry", ST, f"{SIG} := by\n  admit", S),
    ("sorry", ST, f"{SIG} := by\n  exact sorryAx _ false", S),
    ("sorry", ST, f"lemma a : False := by sorry\n{OK}", S),
    ("sorry", ST, f"{SIG} := by\n  -- only a comment", N),
]

ACCEPT = [  # (style, statement, code): legitimate outputs that must pass the screen
    ("kimina", ST, f"{HEADER}{SIG} := by\n  nlinarith [h, sq_nonneg (x - 2)]"),
    ("deepseek", ST, f"{HEADER}/-- Show that x + 1 = 3. -/\n{SIG} := by\n  /- substitute -/\n  rw [h]\n  norm_num"),
    ("goedel", ST, f"{HEADER}{SIG} := by\n  have h_main : x + 1 = 3 := by\n    rw [h]\n    norm_num\n  exact h_main"),
    ("qwen", ST, f"open Real in\n{SIG} := by\n  norm_num [h]"),
    ("qwen", ST, f"set_option maxHeartbeats 400000 in\n{SIG} := by\n  norm_num [h]"),
    ("qwen", ST, f"open Real in\nset_option maxHeartbeats 400000 in\n{SIG} := by\n  norm_num [h]"),
    ("helper", ST, f"private lemma aux (y : ℝ) (hy : y = 2) : y + 1 = 3 := by\n  rw [hy]; norm_num\n{SIG} := aux x h"),
    ("helper", ST, f"@[simp] lemma aux (y : ℝ) : y + 0 = y := by simp\n\n{OK}"),
    ("helper", ST, f"noncomputable def g (y : ℝ) : ℝ := y + 1\n\n{OK}"),
    ("helper", ST, f"def f : ℕ → ℕ\n  | 0 => 0\n  | n + 1 => f n\ntermination_by n => n\n\n{OK}"),
    ("helper", ST, f"def f (n : ℕ) : ℕ := if n = 0 then 0 else f (n - 1)\ndecreasing_by\n  omega\n\n{OK}"),
    ("helper", ST, f"lemma aux (y : ℝ) : y = y := rfl\nopen Finset\n{OK}"),
    ("helper", ST, f"namespace Helpers\nlemma aux (y : ℝ) : y = y := rfl\nend Helpers\nopen Helpers\n{OK}"),
    ("helper", ST, f"section\nopen Real\nlemma aux (y : ℝ) : y = y := rfl\nend\n{OK}"),
    ("helper", ST, f"set_option linter.unusedVariables false\nlemma aux (y : ℝ) : y = y := rfl\n{OK}"),
    ("proof", ST, f"{SIG} := by\n  set_option maxRecDepth 10000 in\n  norm_num [h]"),
    ("proof", ST, f"{SIG} := by\n  open Finset in\n  norm_num [h]"),
    ("proof", ST, f"lemma t1_aux : (2 : ℝ) + 1 = 3 := by norm_num\n\nlemma {SIG[8:]} := by\n  rw [h]; exact t1_aux"),
    ("lexing", ST, f'def greeting : String := "hi -- not a comment /-"\ndef c : Char := \'\\\'\'\n{OK}'),
    ("lexing", ST, f"lemma a (f : ℕ → ℕ) (s : Set ℕ) : f ⁻¹' (f '' s) ⊇ s := Set.subset_preimage_image f s\n{OK}"),
    ("lexing", ST, f"lemma a (f : ℕ → ℝ) : ∑' n, f n = ∑' n, f n := rfl\n{OK}"),
    ("lexing", ST, f"{SIG} := by\n  -- 代入（x = 2）后化简：\n  norm_num [h]"),
    ("lexing", ST, f"/--/ a doc comment that Lean reads to here: axiom cheat : False -/\n{OK}"),
    ("lexing", ST, f"{SIG} := by\n  norm_num [h] -- the `sorry`-free proof; /- not a comment start"),
    ("lexing", ST, f"{SIG} := by\nsubst h\nnorm_num"),   # a tactic block in column 0
]


def _answer(code: str) -> str:
    return f"<think>plan</think>\nFinal proof:\n```lean4\n{code}\n```\n"


@pytest.mark.parametrize("family,statement,code,verdict", SCREEN, ids=[f"{c[0]}-{i}" for i, c in enumerate(SCREEN)])
def test_screen_layer(family, statement, code, verdict):
    r = screen(statement, _answer(code), header=HEADER)
    if verdict is Verdict.VALID:
        assert r.ok, r.reason
    else:
        assert not r.ok and r.verdict is verdict, (r.verdict, r.reason)
        assert r.reason


@pytest.mark.parametrize("style,statement,code", ACCEPT, ids=[f"{c[0]}-{i}" for i, c in enumerate(ACCEPT)])
def test_legitimate_outputs_are_accepted(style, statement, code):
    r = screen(statement, _answer(code), header=HEADER)
    assert r.ok, r.reason
    plan = build_check(r, HEADER)
    assert plan.snippet.body.count(statement.rstrip().removesuffix(":= by")) == 1


def _audited(plan, text):
    """`text` with a leading `'t1'` naming the constant the audit is of (the check's `sdpo_check_<nonce>`)."""
    return f"'{plan.audited}'" + text[4:] if text.startswith("'t1'") else text


def _audit_run(plan, *infos, errors=()):
    msgs = [LeanMessage("info", plan.audit_line, 0, plan.audit_line, 14, _audited(plan, text)) for text in infos]
    msgs += [LeanMessage("error", line, 2, line, 5, text) for line, text in errors]
    return RunResult("x", Outcome.OK, 0.5, tuple(msgs))


STD = "propext, Classical.choice, Quot.sound"
JUDGE = [  # (family, what real Lean prints on the audit line, verdict)
    ("constant", [f"'Foo.t1' depends on axioms: [{STD}]"], M),
    ("constant", [f"'_root_.Foo.t1' depends on axioms: [{STD}]"], M),
    ("constant", [f"'t1' depends on axioms: [{STD}]", f"'t1' depends on axioms: [{STD}]"], F),
    ("constant", [], F),                                                     # `#exit` swallowed the audit
    ("constant", [f"'t1' depends on axioms: [{STD}] and more"], F),
    ("native", [f"'t1' depends on axioms: [{STD}, Lean.ofReduceBool]"], F),  # bv_decide, native_decide
    ("native", ["'t1' depends on axioms: [Lean.trustCompiler, propext]"], F),
    ("axiom", [f"'t1' depends on axioms: [{STD}, cheat]"], F),
    ("sorry", [f"'t1' depends on axioms: [{STD}, sorryAx]"], S),
    ("valid", [f"'t1' depends on axioms: [{STD}]"], Verdict.VALID),
    ("valid", ["'t1' depends on axioms: [propext,\n Classical.choice,\n Quot.sound]"], Verdict.VALID),
    ("valid", ["'t1' does not depend on any axioms"], Verdict.VALID),
]


@pytest.mark.parametrize("family,infos,verdict", JUDGE, ids=[f"{c[0]}-{i}" for i, c in enumerate(JUDGE)])
def test_judge_layer(family, infos, verdict):
    plan = build_check(screen(ST, _answer(OK)))
    assert judge(_audit_run(plan, *infos), plan).verdict is verdict


def test_judge_layer_statement_check():
    """Context that changed what the statement means (e.g. a scoped instance from `open X in`): the declared theorem's
    type is not the reference elaborated in the clean header, and Lean's kernel-checked `example` fails."""
    plan = build_check(screen(ST, _answer(f"open Foo in\n{OK}")))
    assert plan.audit_line == plan.check_line + 1 and "axiom sdpo_ref_" in plan.snippet.body
    run = RunResult("x", Outcome.OK, 0.5, _audit_run(plan, f"'t1' depends on axioms: [{STD}]").messages + (
        LeanMessage("error", plan.check_line, 40, None, None, "type mismatch\n  @t1\nhas type\n  P : Prop"),))
    assert judge(run, plan).verdict is M
    ok = _audit_run(plan, f"'t1' depends on axioms: [{STD}]")
    assert judge(ok, plan).verdict is Verdict.VALID


def test_judge_layer_unknown_constant_and_audit_errors():
    plan = build_check(screen(ST, _answer(OK)))
    unknown = RunResult("x", Outcome.OK, 0.1, (LeanMessage("error", plan.audit_line, 15, None, None,
                                                           "unknown constant 't1'"),))
    assert judge(unknown, plan).verdict is M


LEAN = [  # the screen lets these through; Lean itself fails on them (the judge then sees an error)
    f"{SIG} := by\n  ｓｏｒｒｙ",                 # fullwidth letters are no Lean identifier: "unexpected token"
    f"{SIG} := by\n  norm_num [h]\n  theorem_helper",  # not a command keyword; indented: a failing tactic
]


@pytest.mark.parametrize("code", LEAN)
def test_lean_layer_cases_reach_lean_and_fail_there(code):
    r = screen(ST, _answer(code))
    assert r.ok, r.reason
    plan = build_check(r)
    err = RunResult("x", Outcome.OK, 0.1, (LeanMessage("error", plan.visible_offset + 2, 2, None, None,
                                                       "unexpected token; expected term"),))
    assert judge(err, plan).verdict is Verdict.LEAN_ERROR


def test_corpus_size_and_coverage():
    families = {c[0] for c in SCREEN} | {c[0] for c in JUDGE}
    assert len(SCREEN) + len(JUDGE) + len(LEAN) >= 60 and len(ACCEPT) >= 20
    assert {"inert", "context", "constant", "tokenizer", "option", "native", "io"} <= families
    assert {"kimina", "deepseek", "goedel", "qwen"} <= {c[0] for c in ACCEPT}
