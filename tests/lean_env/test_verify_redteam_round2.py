"""Red-team corpus, round two (issue 31): one class per paragraph of the issue's "Why", each case with the layer that
stops it and what real Lean 4.9 prints where Lean is involved (with the Lean source of the message text).

Lean 4.9 sources of the texts relied on (leanprover/lean4 v4.9.0):
- `type mismatch\\n  e\\nhas type\\n  T : Prop\\nbut is expected to have type\\n  R : Prop`:
  `throwTypeMismatchError` and `mkTypeMismatchError` in `src/Lean/Elab/Term.lean`, the "has type … but is expected
  to have type" part from `mkHasTypeButIsExpectedMsg` in `src/Lean/Meta/Check.lean`; raised by `ensureHasType`
  when the value of the check's `example` does not have the declared type.
- `unknown identifier '_root_.t1'`: `resolveName` in `src/Lean/Elab/Term.lean` (`throwError "unknown identifier
  '{Lean.mkConst n}'"`).
- `(kernel) declaration type mismatch, '_example' has type …`: `KernelException.toMessageData` (`declTypeMismatch`),
  reported at the command's first token as the REPL transcript `app_type_mismatch2` shows for its sibling
  `(kernel) application type mismatch` (shared/fixtures/lean_repl).
- `'t1' depends on axioms: [propext, Classical.choice, Quot.sound]`: `#print axioms` (`src/Lean/Elab/Print.lean`).
- Name resolution: `resolveGlobalName` in `src/Lean/ResolveName.lean`: `_root_.x` is found by `resolveExact` before
  the `open` declarations and `export` aliases are consulted (`resolve` below follows it).
Classes 2 and 3 are stopped by the lexer's token table and the command table of issue 31 parts 2-3 (commit 07dbda3);
the cases here test the end-to-end verdict.
"""
import re
import time

import pytest

from lean_env import LeanMessage, Outcome, RunResult, Verdict, build_check, judge, screen
from lean_env.backends.common import parse_repl_response
from lean_env.lexer import lex
from lean_env.testing.semantics import FakeLean, load_rules
from lean_env.verify import Task, verify

ST = "theorem t1 (x : ℝ) (h : x = 2) : x + 1 = 3 := by\n"
SIG = "theorem t1 (x : ℝ) (h : x = 2) : x + 1 = 3"
HEADER = "import Mathlib\nimport Aesop\n\nset_option maxHeartbeats 400000\n\nopen BigOperators Real Nat Topology Rat\n"
OK = f"{SIG} := by\n  subst h\n  norm_num"
S, F, M, V = Verdict.SORRY, Verdict.FORBIDDEN, Verdict.STATEMENT_MISMATCH, Verdict.VALID
STD = "propext, Classical.choice, Quot.sound"


def _answer(code: str) -> str:
    return f"<think>plan</think>\n```lean4\n{code}\n```\n"


_ids = iter(range(1000))


def case(family, code, verdict):
    return pytest.param(family, code, verdict, id=f"{family}-{next(_ids)}")


# Layer `screen`: rejected before any Lean run. Lean itself would accept each of these files (the attack is that it
# runs), so there is no Lean message to quote; the screen's verdict is the outcome.
SCREEN = [
    # class 2: commands the splitter must see, wherever they stand (Mathlib's Lean 3 compatibility stubs such as
    # `variables` and core commands such as `unif_hint`); in Lean 4.9 a `variable` hypothesis joins a theorem using it
    case("splitter", f"variables (hf : False)\n{OK}", F),
    case("splitter", f"lemma a : True := trivial\nvariables (hf : False)\n{OK}", F),
    case("splitter", f"lemma a : True := by\n  trivial\n  variables (hf : False)\n{OK}", F),
    case("splitter", f"unif_hint (x : ℝ) where x =?= 2 ⊢ x + 1 =?= 3\n{OK}", F),
    case("splitter", f"lemma a : True := by\n  trivial\n  unif_hint where ⊢ (1 : ℕ) =?= 2\n{OK}", F),
    case("splitter", f"lemma a : True := by\n  trivial\n    attribute [local instance] Classical.propDecidable\n{OK}",
         F),
    case("splitter", f"lemma a : True := by\n  trivial\n      #eval (1 : ℕ)\n{OK}", F),
    case("splitter", f"universes u v\n{OK}", F),
    # class 3: a token ending in an apostrophe followed by a string: Lean reads `Σ'` then a string, a lexer that
    # reads a char literal `'"'` instead sees a string where Lean sees the next line's code
    case("apostrophe", f"lemma a : True := by\n  have := Σ'\"' \"\ninstance : LT ℝ := ⟨fun _ _ => True⟩\n-- \"\n"
                       f"  trivial\n{OK}", F),
    case("apostrophe", f"lemma a : True := by\n  have := ℕ ⊕'\"' \"\nexport Real (sqrt)\n-- \"\n  trivial\n{OK}", F),
    case("apostrophe", f"lemma a : True := by\n  have := ℕ ×'\"' \"\nmacro_rules | `(tactic| norm_num) => "
                       f"`(tactic| trivial)\n-- \"\n  trivial\n{OK}", F),
    case("apostrophe", f"lemma a : True := by\n  have := Σ'\"' \"\nelab_rules : tactic | `(tactic| norm_num) => "
                       f"pure ()\n-- \"\n  trivial\n{OK}", F),
    case("apostrophe", f"lemma a : True := by\n  have := ℕ ⊕'\"' \"\nvariable (hf : False)\n-- \"\n  trivial\n{OK}", F),
    case("apostrophe", f"lemma a (f : ℕ → ℝ) : True := by\n  have := ∑'\"' \"\naxiom cheat : False\n-- \"\n"
                       f"  trivial\n{OK}", F),
    # class 4: code run by attribute arguments, and names written as name literals
    case("attribute", f"@[aesop safe tactic] def cheatTac : ℕ := 0\n{OK}", F),
    case("attribute", f"@[aesop unsafe 50% tactic] def cheatTac : ℕ := 0\n{OK}", F),
    case("attribute", f"@[simp, aesop norm tactic] def cheatTac : ℕ := 0\n{OK}", F),
    case("attribute", f"@[aesop (rule_sets := [Cheat]) safe apply] lemma a : True := trivial\n{OK}", F),
    case("attribute", f"@[aesop safe forward (immediate := [h])] lemma a (h : True) : True := h\n{OK}", F),
    case("attribute", f"@[aesop safe apply (pattern := (0 : ℕ))] lemma a : True := trivial\n{OK}", F),
    case("attribute", f"@[simp (config := {{}})] lemma a : (1 : ℕ) = 1 := rfl\n{OK}", F),
    case("attribute", f"@[norm_cast by_elab] lemma a : (1 : ℕ) = 1 := rfl\n{OK}", F),
    case("attribute", f"def n : Lean.Name := `sorryAx\n{OK}", S),
    case("attribute", f"def n : Lean.Name := ``sorryAx\n{OK}", S),
    case("attribute", f"def n : Lean.Name := `«sorryAx»\n{OK}", S),
    case("attribute", f"def n : Lean.Name := `Lean.Elab.Command.elabCommand\n{OK}", F),
    case("attribute", f"def n : Lean.Name := `native_decide\n{OK}", F),
    case("attribute", f"def q := `(tactic| trivial)\n{OK}", F),
    case("attribute", f"open Lean Elab Tactic in\ndef cheatTac : TacticM Unit := pure ()\n{OK}", F),
    # proof search over the environment would find the reference axiom `sdpo_ref_<nonce>` (the audit lists it too)
    case("search", f"{SIG} := by\n  library_search", F),
    case("search", f"{SIG} := by\n  rw_search", F),
    # class 5: options that turn a limit off or set it beyond the bounds, in every position
    case("option", f"set_option maxHeartbeats 0\n{OK}", F),
    case("option", f"set_option maxHeartbeats 0 in\n{OK}", F),
    case("option", f"{SIG} := by\n  set_option maxHeartbeats 0 in\n  subst h\n  norm_num", F),
    case("option", f"lemma a : True := by\n  set_option maxHeartbeats 0 in trivial\n{OK}", F),
    case("option", f"set_option maxHeartbeats 4000001 in\n{OK}", F),
    case("option", f"set_option maxHeartbeats 0x0 in\n{OK}", F),
    case("option", f"set_option maxHeartbeats 400000.0 in\n{OK}", F),
    case("option", f"set_option «maxHeartbeats» 0 in\n{OK}", F),
    case("option", f"set_option maxRecDepth 0 in\n{OK}", F),
    case("option", f"set_option maxRecDepth 1000000\n{OK}", F),
    case("option", f"set_option synthInstance.maxHeartbeats 0 in\n{OK}", F),
    case("option", f"set_option linter.unusedVariables 0\n{OK}", F),
    # class 1 (second half): nothing may change how the check line reads: syntax extensions of every kind and
    # instances that override what the statement's notation means
    case("syntax", f'syntax "cheat" : tactic\n{OK}', F),
    case("syntax", f'infix:50 " ≤ " => fun _ _ => True\n{OK}', F),
    case("syntax", f'infixl:65 " + " => HMul.hMul\n{OK}', F),
    case("syntax", f'infixr:75 " ^ " => HMul.hMul\n{OK}', F),
    case("syntax", f'prefix:max "√" => id\n{OK}', F),
    case("syntax", f'postfix:max "!" => id\n{OK}', F),
    case("syntax", f'notation3 "∑ "(...)", "r:67:(scoped f => f 0) => r\n{OK}', F),
    case("syntax", f'local notation "π" => (3 : ℝ)\n{OK}', F),
    case("syntax", f'scoped infix:50 " = " => Ne\n{OK}', F),
    case("syntax", f'macro "cheat" : tactic => `(tactic| trivial)\n{OK}', F),
    case("syntax", f"elab_rules : tactic | `(tactic| norm_num) => pure ()\n{OK}", F),
    case("syntax", f"declare_syntax_cat cheat\n{OK}", F),
    case("syntax", f"binder_predicate x \" > \" y:term => `($x > $y)\n{OK}", F),
    case("syntax", f"@[macro Lean.Parser.Term.app] def m : ℕ := 0\n{OK}", F),
    case("syntax", f"@[term_elab typeOf] def e : ℕ := 0\n{OK}", F),
    case("syntax", f"@[tactic norm_num] def e : ℕ := 0\n{OK}", F),
    case("syntax", f"@[unification_hint] def hint : ℕ := 0\n{OK}", F),
    case("syntax", f"@[instance 10000] def i : LT ℝ := ⟨fun _ _ => True⟩\n{OK}", F),
    case("syntax", f"instance (priority := high) : HAdd ℝ ℝ ℝ := ⟨fun a b => a * b⟩\n{OK}", F),
    case("syntax", f"deriving instance Repr for Nat\n{OK}", F),
    case("syntax", f"export Nat (rfl)\n{OK}", F),
]


@pytest.mark.parametrize("family,code,verdict", SCREEN)
def test_screen_stops_it(family, code, verdict):
    r = screen(ST, _answer(code), header=HEADER)
    assert not r.ok and r.verdict is verdict and r.reason, (r.verdict, r.reason)


ACCEPT = [  # legitimate forms that must still pass (and assemble with the statement exactly once)
    f"private lemma aux (y : ℝ) (hy : y = 2) : y + 1 = 3 := by\n  rw [hy]; norm_num\nopen Real in\n{SIG} := aux x h",
    f"set_option maxHeartbeats 400000 in\n{OK}",
    f"set_option maxHeartbeats 4000000 in\nset_option maxRecDepth 10000 in\n{OK}",
    f"{SIG} := by\n  set_option maxRecDepth 10000 in\n  subst h\n  norm_num",
    f"namespace Helpers\nlemma aux (y : ℝ) : y + 0 = y := by simp\nend Helpers\nopen Helpers\n{OK}",
    f"{SIG} := by\n  calc x + 1 = 2 + 1 := by rw [h]\n    _ = 3 := by norm_num",
    f"{SIG} := by\n  subst h <;> norm_num",
    f"-- no sorry here, and no axiom either\n/- we avoid `sorry` and `axiom cheat` -/\n{OK}",
    f'def msg : String := "this proof has no sorry and no axiom"\n{OK}',
    f'def raw : String := r#"a "quoted" sorry"#\ndef c : Char := \'x\'\ndef q : Char := \'\\\'\'\n{OK}',
    f"@[aesop safe apply] lemma a (p : Prop) (hp : p) : p ∨ False := Or.inl hp\n{OK}",
    f"@[aesop norm simp] lemma a (y : ℝ) : y + 0 = y := by simp\n{OK}",
    f"@[simp ←] lemma a (y : ℝ) : y = y + 0 := by simp\n{OK}",
    f"@[simp high, norm_cast] lemma a : ((1 : ℕ) : ℝ) = 1 := by norm_num\n{OK}",
    f"set_option linter.unusedVariables false in\n{OK}",
    f"section\nopen Finset\nlemma aux (n : ℕ) : n = n := rfl\nend\n{OK}",
]


@pytest.mark.parametrize("code", ACCEPT, ids=[f"accept-{i}" for i in range(len(ACCEPT))])
def test_legitimate_forms_are_still_accepted(code):
    r = screen(ST, _answer(code), header=HEADER)
    assert r.ok, r.reason
    plan = build_check(r, HEADER)
    assert plan.snippet.body.count(SIG) == 1


# ------------------------------------------------------------------------------------------- the check's names

def resolve(ident: str, env: set[str], namespace: str, opens: list[str], aliases: dict[str, list[str]]) -> list[str]:
    """Lean 4.9's `resolveGlobalName` (src/Lean/ResolveName.lean) for constants without macro scopes, private or
    protected names: the current namespaces first, then `resolveExact` (`_root_.x` is exactly root `x`; any dotted
    name that exists as written), then the name itself, the `open` declarations and the `export` aliases."""
    parts = ident.split(".")
    while parts:
        name = ".".join(parts)
        ns = namespace
        while ns:
            found = ([f"{ns}.{name}"] if f"{ns}.{name}" in env else []) + aliases.get(f"{ns}.{name}", [])
            if found:
                return found
            ns = ns.rpartition(".")[0]
        if len(parts) > 1:
            exact = ".".join(parts[1:]) if parts[0] == "_root_" else name
            if exact in env:
                return [exact]
        found = [name] if name in env else []
        for o in opens:
            found += ([f"{o}.{name}"] if f"{o}.{name}" in env else []) + aliases.get(f"{o}.{name}", [])
        found = aliases.get(name, []) + found
        if found:
            return list(dict.fromkeys(found))
        parts.pop()
    return []


HEADER_OPENS = ["BigOperators", "Real", "Nat", "Topology", "Rat"]
HIJACK = "theorem rfl {p q : Prop} {h : p = q} : p = q := h"   # an implicit `h` that `#check` leaves unassigned
SCOPE = [  # (helpers the model writes before the theorem, its extra opens, export aliases)
    (f"namespace Nat\n{HIJACK}\nend Nat", [], {}),
    (f"namespace Real\n{HIJACK}\nend Real", [], {}),
    (f"namespace BigOperators\n{HIJACK}\nend BigOperators", [], {}),
    (f"namespace Topology\n{HIJACK}\nend Topology", [], {}),
    (f"namespace Rat\n{HIJACK}\nend Rat", [], {}),
    (f"namespace Foo\n{HIJACK}\nend Foo\nopen Foo", ["Foo"], {}),
    (f"namespace Foo\n{HIJACK}\nend Foo", [], {"rfl": ["Foo.rfl"]}),   # what `export Foo (rfl)` would add
]


@pytest.mark.parametrize("helpers,opens,aliases", SCOPE, ids=[f"scope-{i}" for i in range(len(SCOPE))])
def test_check_names_resolve_to_the_root_constants_whatever_the_model_declares(helpers, opens, aliases):
    """A helper `rfl` in a namespace open at the end of the file made the old check's `rfl` ambiguous, and `#check`
    printed the alternative that typechecks (`Nat.rfl : T = R`, its `h` left unassigned) for a changed statement.
    The new check names only `_root_.` constants, which resolve to the root constant alone. With the statement
    changed, Lean 4.9 then prints on the check line
        type mismatch
          @t1
        has type
          ∀ (x : ℝ), x = 2 → x + 1 = 3 : Prop
        but is expected to have type
          ∀ (x : ℝ), x = 2 → x + 1 = 3 : Prop
    (Lean/Elab/Term.lean `throwTypeMismatchError`; the two types print alike when only an instance differs) and the
    judge gives statement_mismatch; with the statement intact the check is silent and the proof is paid."""
    r = screen(ST, _answer(f"{helpers}\n{OK}"), header=HEADER)
    assert r.ok, r.reason   # such helpers are legal Lean; the check must not depend on their absence
    plan = build_check(r, HEADER)
    lines = plan.snippet.body.split("\n")
    check = lines[plan.check_line - 1]
    reference = check.split("@_root_.")[1].split()[0]
    helper = [f"{ns}.rfl" for ns in ("Nat", "Real", "BigOperators", "Topology", "Rat", "Foo") if f"namespace {ns}\n"
              in helpers]
    env = {"rfl", "Eq", "t1", reference, plan.audited, *helper}
    scope = HEADER_OPENS + opens
    assert sorted(resolve("rfl", env, "", scope, aliases)) == sorted(["rfl", *helper])   # the old check's `rfl`
    idents = [t.text for t in lex(check) if t.kind == "ident"]
    names = [t for t in idents if t.startswith("_root_.")]
    assert set(idents) - set(names) <= {"set_option", "maxHeartbeats", "in", "theorem", "type_of"}   # syntax
    assert names == [f"_root_.{plan.audited}", f"_root_.{reference}", "_root_.t1"] and "type_of%" in check
    assert all(resolve(n, env, "", scope, aliases) == [n.removeprefix("_root_.")] for n in names)
    assert lines[plan.check_line - 2] == "end" and lines[plan.audit_line - 1] == f"#print axioms _root_.{plan.audited}"
    mismatch = LeanMessage("error", plan.check_line, check.index("@_root_.t1"), None, None,
                           "type mismatch\n  @t1\nhas type\n  ∀ (x : ℝ), x = 2 → x + 1 = 3 : Prop\n"
                           "but is expected to have type\n  ∀ (x : ℝ), x = 2 → x + 1 = 3 : Prop")
    audit = LeanMessage("info", plan.audit_line, 0, None, None, f"'{plan.audited}' depends on axioms: [{STD}]")
    assert judge(RunResult("x", Outcome.OK, 0.1, (mismatch, audit)), plan).verdict is M
    assert judge(RunResult("x", Outcome.OK, 0.1, (audit,)), plan).verdict is V


def test_the_check_line_is_built_from_root_names_and_builtin_syntax_only():
    def_statement = "noncomputable def d1 : ℕ → ℝ :="
    for statement, code in ((ST, OK), (def_statement, f"{def_statement}\n  fun n => n")):
        plan = build_check(screen(statement, _answer(code)))
        check = plan.snippet.body.split("\n")[plan.check_line - 1]
        name, keyword = ("t1", "theorem") if "t1" in statement else ("d1", "noncomputable def")
        assert re.fullmatch(f"set_option maxHeartbeats 400000 in {keyword} _root_\\.sdpo_check_[0-9a-f]{{16}} : "
                            f"type_of% @_root_\\.sdpo_ref_[0-9a-f]{{16}} := @_root_\\.{name}", check)


# ------------------------------------------------------------------------------------------------ the judge

def _plan():
    return build_check(screen(ST, _answer(OK)), HEADER)


def _msg(line, severity, text, col=0):
    return LeanMessage(severity, line, col, None, None, text)


AUDIT_OK = f"'t1' depends on axioms: [{STD}]"
JUDGE = [  # (family, what Lean prints: [(line: "check"|"audit", severity, text)], verdict)
    # the old `#check (rfl : …)` answered with an info even when a helper had hijacked it; any message there now
    # means the check is not the one the judge built
    ("check", [("check", "info", "rfl : (∀ (x : ℝ), x = 2 → x + 1 = 3) = ∀ (x : ℝ), x = 2 → x + 1 = 3"),
               ("audit", "info", AUDIT_OK)], M),
    ("check", [("check", "warning", "unused variable `h`"), ("audit", "info", AUDIT_OK)], M),
    # Lean/Elab/Term.lean throwTypeMismatchError + Lean/Meta/Check.lean mkHasTypeButIsExpectedMsg
    ("check", [("check", "error", "type mismatch\n  @t1\nhas type\n  ∀ (x : ℝ), x = 2 → x + 1 = 3 : Prop\n"
                                  "but is expected to have type\n  ∀ (x : ℝ), x = 2 → x + 1 = 3 : Prop"),
               ("audit", "info", AUDIT_OK)], M),
    # KernelException.toMessageData (declTypeMismatch): the elaborator was satisfied (a unification hint), the
    # kernel is not
    ("check", [("check", "error", "(kernel) declaration type mismatch, '_example' has type\n  ∀ (x : ℝ), x = 2 → "
                                  "x + 1 = 3\nbut it is expected to have type\n  ∀ (x : ℝ), x = 2 → x + 1 = 3"),
               ("audit", "info", AUDIT_OK)], M),
    # Lean/Elab/Term.lean resolveName; Lean/Elab/Print.lean for the audit's unknown constant
    ("check", [("check", "error", "unknown identifier '_root_.t1'"),
               ("audit", "error", "unknown constant 't1'")], M),
    # a check line that prints nothing is only a pass when the audit after it answered: a file cut short before it
    # (or a check that never ran) leaves the audit silent too
    ("check", [], F),
    ("audit", [("audit", "info", AUDIT_OK), ("audit", "warning", "declaration uses 'sorry'")], F),
    ("audit", [("audit", "info", AUDIT_OK), ("audit", "info", AUDIT_OK)], F),
    ("audit", [("audit", "warning", AUDIT_OK)], F),
    ("audit", [("audit", "info", "'t1' depends on axioms: [propext, sorryAx]")], S),
    ("audit", [("audit", "error", "maximum recursion depth has been reached")], Verdict.LEAN_ERROR),
    ("valid", [("audit", "info", AUDIT_OK)], V),
]


@pytest.mark.parametrize("family,printed,verdict", JUDGE, ids=[f"{c[0]}-{i}" for i, c in enumerate(JUDGE)])
def test_judge_requires_the_exact_outcome_on_the_check_and_audit_lines(family, printed, verdict):
    plan = _plan()
    lines = {"check": plan.check_line, "audit": plan.audit_line}
    messages = tuple(_msg(lines[where], severity, text.replace("'t1'", f"'{plan.audited}'") if where == "audit"
                          else text) for where, severity, text in printed)
    assert judge(RunResult("x", Outcome.OK, 0.1, messages), plan).verdict is verdict


# -------------------------------------------------------------------------------- end to end through the double

class InProcessRepl:
    """The REPL double's semantics (`lean_env.testing.semantics`) as a backend, without a process."""

    name = "in-process"

    def __init__(self, rules=None):
        self.lean = FakeLean(rules=load_rules(rules))
        self.bodies = []

    async def run(self, snippets, *, timeout_s):
        out = []
        for s in snippets:
            header, _ = self.lean.command(s.header, None)
            answer, _ = self.lean.command(s.body, header["env"])
            self.bodies.append(s.body)
            out.append(parse_repl_response(s.id, answer, 0.01))
        return out

    async def health(self):
        return True

    async def aclose(self):
        return None


E2E = [  # (model code, rules for the double, verdict, a text the feedback must hold)
    (f"namespace Nat\n{HIJACK}\nend Nat\nopen Real in\n{OK}", None, V, ""),
    (f"namespace Nat\n{HIJACK}\nend Nat\n{OK} -- RETYPED", [{"match": "RETYPED", "outcome": "retyped"}], M,
     "type mismatch"),
    (f"set_option maxHeartbeats 0 in\n{OK}", None, F, "from 1 to 4000000"),
    (f"@[aesop safe tactic] def cheatTac : ℕ := 0\n{OK}", None, F, "may not take `tactic`"),
]


@pytest.mark.parametrize("code,rules,verdict,feedback", E2E, ids=[f"e2e-{i}" for i in range(len(E2E))])
def test_end_to_end_verdicts_through_the_double(code, rules, verdict, feedback):
    import asyncio

    backend = InProcessRepl(rules)
    result = asyncio.run(verify(Task("t1", ST, HEADER), _answer(code), backend))
    assert result.verdict is verdict, result.detail
    assert feedback in result.feedback
    assert bool(backend.bodies) == (verdict is not F)   # a screen rejection never reaches Lean


def test_a_def_statement_is_checked_by_a_noncomputable_example():
    import asyncio

    statement = "noncomputable def d1 : ℕ → ℝ :="
    backend = InProcessRepl()
    result = asyncio.run(verify(Task("d1", statement, HEADER), _answer(f"{statement}\n  fun n => n"), backend))
    assert result.verdict is V, result.detail
    assert " in noncomputable def _root_.sdpo_check_" in backend.bodies[0]


def test_screening_stays_linear_on_64_kb_of_attributes_and_options():
    helpers = "".join(f"@[simp, aesop safe apply] lemma a{k} (p : Prop) (hp : p) : p ∨ False := Or.inl hp\n"
                      f"set_option maxHeartbeats 400000 in\n" for k in range(540))
    assert 60_000 < len(helpers) < 66_000
    t0 = time.perf_counter()
    r = screen(ST, _answer(helpers + OK), header=HEADER)
    assert time.perf_counter() - t0 < 1.0 and r.ok, r.reason


DEEPSEEK_HEADER = ("import Mathlib\nimport Aesop\n\nset_option maxHeartbeats 0\n\n"
                   "open BigOperators Real Nat Topology Rat\n\n")


@pytest.mark.parametrize("bound", [400_000, 0])
def test_the_models_code_runs_under_a_heartbeat_bound_even_when_the_header_sets_none(bound):
    """Class 5 without any `set_option` in the answer: DeepSeek's miniF2F header sets `maxHeartbeats 0`, so a proof
    that never ends would only meet the wall clock (a masked timeout). The bound is set where the model's section
    opens, after the reference (whose elaboration it does not touch); Lean then stops such a proof with
        (deterministic) timeout at `whnf`, maximum number of heartbeats (400000) has been reached
        use `set_option maxHeartbeats <num>` to set the limit
        use `set_option diagnostics true` to get diagnostic information
    (`throwMaxHeartbeat`, src/Lean/CoreM.lean; the wording moves between versions, the verdict does not), an error
    on the proof's line: lean_error, score 0, with feedback."""
    import asyncio

    from lean_env.options import CheckOptions

    backend = InProcessRepl()
    result = asyncio.run(verify(Task("t1", ST, DEEPSEEK_HEADER), _answer(OK), backend,
                                check=CheckOptions(max_heartbeats=bound)))
    assert result.verdict is V
    lines = backend.bodies[0].split("\n")
    section = lines.index("section")
    assert lines.index("set_option maxHeartbeats 0") < next(i for i, ln in enumerate(lines) if ln.startswith("axiom"))
    assert (lines[section + 1] == "set_option maxHeartbeats 400000") == bool(bound)
    assert lines[section + 1 + bool(bound)] == SIG + " := by"
