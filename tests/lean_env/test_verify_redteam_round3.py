"""Red-team corpus, round three: texts that would be paid although Lean did not prove the dataset's statement about
the dataset's constant, or that would make the judge misread what Lean printed. Each case names the layer that stops
it and, where Lean or the Kimina server is involved, the source of the behaviour relied on.

Sources:
- Kimina `server/split.py` (`split_snippet`, project-numina/kimina-lean-server @fb2393d): the server splits the code
  with Python's `str.splitlines()` and sends the REPL `"\\n".join(lines[i:])`, so every break that `splitlines`
  knows (a lone CR, U+2028, U+2029, and control characters the screen already rejects) becomes a newline in the text
  Lean reads. Lean 4.9 itself counts only `\\n` (`FileMap.ofString`) and ends a `--` comment only there
  (`whitespace`, `takeUntilFn (· = '\\n')` in src/Lean/Parser/Basic.lean). `lean_env.testing.kimina_pool` models it.
- `#print "text"` logs `text` as an info at `#print` (`elabPrint`, `logInfoAt tk s.getString`,
  src/Lean/Elab/Print.lean); `#print axioms` answers `'<name>' depends on axioms: [...]` (`printAxiomsOf`, same file).
- Mathlib's `hint` runs `exact?` among its registered tactics (`register_hint exact?`, Mathlib/Tactic/Common.lean);
  `observe` and `have?` search the library the same way (Mathlib/Tactic/Observe.lean, Mathlib/Tactic/Propose.lean).
- `stop` is `repeat sorry` (src/Init/Tactics.lean): a `declaration uses 'sorry'` warning and `sorryAx` in the audit.
- `open X in c` expands to `section open X c end` (`expandInCmd`, src/Lean/Elab/BuiltinCommand.lean), so a trailing
  `open X in` / `set_option … in` turns the assembler's `end` into `section … end end`: the same scopes are closed.
"""
import asyncio
import re

import httpx
import pytest

from lean_env import LeanMessage, Outcome, RunResult, Verdict, build_check, judge, screen
from lean_env.backends.kimina import KiminaBackend
from lean_env.judge import parse_audit
from lean_env.testing.fake_kimina import FakeKimina
from lean_env.testing.semantics import load_rules
from lean_env.verify import Task, verify
from tests.lean_env.test_verify_redteam_round2 import HEADER, OK, SIG, ST, InProcessRepl, _answer

S, F, M, V, L = Verdict.SORRY, Verdict.FORBIDDEN, Verdict.STATEMENT_MISMATCH, Verdict.VALID, Verdict.LEAN_ERROR
STD = "propext, Classical.choice, Quot.sound"
FAKE_AUDIT = "'t1' depends on axioms: [propext]"
# Python's str.splitlines() breaks that Lean does not count and the screen's control-character check lets through
SEPARATORS = {"U+2028": "\u2028", "U+2029": "\u2029", "lone CR": "\r"}


def _kimina(rules=None):
    server = FakeKimina(rules=load_rules(rules))
    return server, KiminaBackend("http://kimina", transport=server.transport())


def _verify(code, backend, statement=ST, name="t1"):
    return asyncio.run(verify(Task(name, statement, HEADER), _answer(code), backend))


def _hidden(sep: str) -> str:
    """An axiom hidden in a `--` comment before the theorem, a proof by it, and, two breaks after the proof's last
    line (so on the audit line the judge reads), a forged audit: through Kimina, Lean reads
        lemma aux : True := trivial -- a note
        axiom cheat : False
        theorem t1 … := by
          exact cheat.elim -- done
        <empty: the judge's check line, silent>
        #print "'t1' depends on axioms: [propext]"     <- the judge's audit line
        end / the real check (silent) / the real audit listing `cheat` (an info after the last line)"""
    return (f"lemma aux : True := trivial -- a note{sep}axiom cheat : False\n"
            f"{SIG} := by\n  exact cheat.elim -- done{sep}{sep}#print \"{FAKE_AUDIT}\"")


# ------------------------------------------------------------------ line breaks that Kimina counts and Lean does not

@pytest.mark.parametrize("sep", SEPARATORS.values(), ids=SEPARATORS.keys())
def test_a_line_break_that_only_kimina_counts_hides_no_code_and_shifts_no_line(sep):
    """Through Kimina, a lone CR, U+2028 or U+2029 in a `--` comment ends the comment (the text after it is code the
    screen never saw: here an axiom and a forged audit) and adds a line the assembler did not count, so the
    judge's check and audit lines point at the model's text while the real check and audit print below them.
    Before the screen rejected these characters this text was paid (`valid`)."""
    server, backend = _kimina()
    result = _verify(_hidden(sep), backend)
    assert result.verdict is F, result.detail
    assert "line break" in result.detail and not server.requests   # rejected before any Lean run


@pytest.mark.parametrize("where", ["-- a note{sep}x", "/- a{sep}b -/", 'def s : String := "a{sep}b"'])
@pytest.mark.parametrize("sep", SEPARATORS.values(), ids=SEPARATORS.keys())
def test_such_a_break_is_rejected_anywhere_in_the_code(sep, where):
    """In a block comment or a string the break hides no code but still shifts every later line through Kimina."""
    r = screen(ST, _answer(where.format(sep=sep) + "\n" + OK), header=HEADER)
    assert not r.ok and r.verdict is F and "line break" in r.reason


def test_crlf_line_ends_count_alike_everywhere_and_stay_accepted():
    """CRLF is one break for `splitlines`, for Lean (`\\n` ends the comment and the line) and for the assembler."""
    code = f"lemma aux : True := trivial -- a note\r\n{SIG} := by\r\n  subst h\r\n  norm_num -- done"
    server, backend = _kimina()
    assert _verify(code, backend).verdict is V
    body = server.requests[-1]["snippets"][0]["code"]
    assert len(body.splitlines()) == body.count("\n") + (not body.endswith("\n"))


def test_the_judge_rejects_any_message_below_the_audit_line():
    """Second layer for the same class: an honest file's last message is the audit, on the last line. A message
    below it means the backend numbered lines differently from the assembler (the real audit moved down), so what
    the judge reads on its check and audit lines is not the check and the audit."""
    plan = build_check(screen(ST, _answer(OK), header=HEADER), HEADER)
    forged = LeanMessage("info", plan.audit_line, 0, None, None, FAKE_AUDIT.replace("'t1'", f"'{plan.audited}'"))
    real = LeanMessage("info", plan.audit_line + 2, 0, None, None, "'t1' depends on axioms: [cheat]")
    j = judge(RunResult("x", Outcome.OK, 0.1, (forged, real)), plan)
    assert j.verdict is F and "after the last line" in j.detail
    ok = LeanMessage("info", plan.audit_line, 0, None, None, f"'{plan.audited}' depends on axioms: [{STD}]")
    assert judge(RunResult("x", Outcome.OK, 0.1, (ok,)), plan).verdict is V


# ------------------------------------------------------------------------------ the screen keeps them from running

SCREEN = [  # (code, verdict): Lean would run each (the attack is that it runs); the screen's verdict is the outcome
    # a forged audit printed by the model's own command, at the top level or indented in the proof
    (f'{OK}\n#print "{FAKE_AUDIT}"', F),
    (f'{SIG} := by\n  subst h\n  norm_num\n  #print "{FAKE_AUDIT}"', F),
    (f'#print "{FAKE_AUDIT}"\n{OK}', F),
    # shadowing the check line's syntax: `type_of%`, `example`, `set_option`, `#print axioms`, `@`
    (f'notation "type_of%" x => x\n{OK}', F),
    (f"macro_rules | `(type_of% $x) => `(True)\n{OK}", F),
    (f'macro "example" : command => `(#check 1)\n{OK}', F),
    (f'syntax "set_option" ident num " in " command : command\n{OK}', F),
    (f"@[command_elab Lean.Parser.Command.printAxioms] def quiet : ℕ := 0\n{OK}", F),
    (f"@[term_elab Lean.Parser.Term.explicit] def e : ℕ := 0\n{OK}", F),
    (f'local notation "@" x => x\n{OK}', F),
    # metaprograms that edit the environment or the message log, however they are reached
    (f"open Lean Elab Command in\nrun_cmd liftCoreM (modifyEnv id)\n{OK}", F),
    (f'{SIG} := by\n  run_tac Lean.logInfo "{FAKE_AUDIT}"\n  subst h\n  norm_num', F),
    (f"{SIG} := by\n  exact by_elab do Lean.modifyEnv id; return default", F),
    (f"open Lean in\ndef reset : CoreM Unit := Core.resetMessageLog\n{OK}", F),
    (f"@[init] def boot : ℕ := 0\n{OK}", F),
    (f"@[csimp] theorem fast : @id = @id := rfl\n{OK}", F),
    (f'@[export sdpo_hook] def hook : ℕ := 0\n{OK}', F),
    (f"partial def loop : ℕ → ℕ\n  | n => loop n\n{OK}", F),
    # options that would hide an error, a sorry or the kernel check
    (f"set_option debug.byAsSorry true in\n{OK}", F),
    (f"set_option warningAsError false in\n{OK}", F),
    (f"set_option trace.profiler true in\n{OK}", F),
    (f"set_option pp.proofs 1 in\n{OK}", F),   # a pp.* option takes true/false only (a boolean one: E2E, issue 48)
    (f"{SIG} := by\n  set_option linter.all 0 in\n  norm_num [h]", F),
    # scopes: the assembler's `end` must close the assembler's `section`
    (f"end\n{OK}", F),
    (f"section\n{OK}", F),
    (f"namespace Foo\nsection\nend Foo\n{OK}", F),
    (f"namespace _root_\n{OK}\nend _root_", F),
    (f"namespace _root_\nlemma aux : True := trivial\nend _root_\n{OK}", F),
    # the name: another declaration kind, a modifier, a lookalike, an axiom under a reference-like name
    (f"abbrev t1 : ℕ := 1\n{OK}", F),
    (f"protected {OK}", F),
    ("theorem т1 (x : ℝ) (h : x = 2) : x + 1 = 3 := by\n  subst h\n  norm_num", F),   # Cyrillic т: no token
    ("axiom sdpo_ref_0123456789abcdef (x : ℝ) (h : x = 2) : x + 1 = 3\n"
     f"{SIG} := sdpo_ref_0123456789abcdef x h", F),
    # control characters Lean reads as no token (NUL, NEL): a parse error at best, a hidden break at worst
    (f"{OK}\n-- \x00", F),
    (f"{OK} -- a\x85#exit", F),
    # proof search over the environment (it would find the reference axiom): Mathlib's `hint` runs `exact?`,
    # `observe` and `have?` search the same way; the screen names them, the audit stays the second line
    (f"{SIG} := by\n  hint", F),
    (f"{SIG} := by\n  observe h2 : x + 1 = 3\n  exact h2", F),
    (f"{SIG} := by\n  observe? h2 : x + 1 = 3\n  exact h2", F),
    (f"{SIG} := by\n  have? using h\n  subst h\n  norm_num", F),
]


@pytest.mark.parametrize("code,verdict", SCREEN, ids=[f"screen-{i}" for i in range(len(SCREEN))])
def test_screen_stops_it(code, verdict):
    r = screen(ST, _answer(code), header=HEADER)
    assert not r.ok and r.verdict is verdict and r.reason, (r.verdict, r.reason)


# ------------------------------------------------------------------ what the screen lets through, Lean then decides

E2E = [  # (code, rules for the double, verdict): accepted by the screen; the check and the audit decide
    # `stop` is `repeat sorry`: the warning and `sorryAx`
    (f"{SIG} := by\n  stop\n  norm_num", [{"match": "stop", "outcome": "tactic_sorry"}], S),
    # an info that mimics the audit, printed by an allowed tactic in the proof: not on the audit line, so unread
    (f"{SIG} := by\n  subst h\n  norm_num\n  trace \"'t1' depends on axioms: []\"",
     [{"match": "trace", "outcome": "axiom", "axioms": ["cheat"]}], F),
    # a trailing `open … in` / `set_option … in` prefixes the assembler's `end`: the same scopes close
    (f"{OK}\nopen Real in", None, V),
    (f"{OK}\nset_option maxHeartbeats 400000 in", None, V),
    # `open X in end` closes the model's own section as `end` does (`section open X end end`)
    (f"section\nopen Real in end\n{OK}", None, V),
    # the model's `def`/«t1» spelling of the theorem: the dataset's `theorem t1` text is what Lean checks
    ("def t1 (x : ℝ) (h : x = 2) : x + 1 = 3 := by\n  subst h\n  norm_num", None, V),
    ("theorem «t1» (x : ℝ) (h : x = 2) : x + 1 = 3 := by\n  subst h\n  norm_num", None, V),
    # a helper under a reference-like name is just a helper: the check names a fresh nonce
    (f"theorem sdpo_ref_0123456789abcdef (y : ℝ) (hy : y = 2) : y + 1 = 3 := by\n  subst hy\n  norm_num\n"
     f"{SIG} := sdpo_ref_0123456789abcdef x h", None, V),
    # a boolean pp.* option (issue 48) changes how the model's messages print; it ends with the model's section
    (f"set_option pp.proofs true in\n{OK}", None, V),
    (f"set_option pp.all true\n{OK}", None, V),
    # a proof that ends in a line comment without a newline: the assembler's `end` stays on its own line
    (f"{OK} -- done", None, V),
]


@pytest.mark.parametrize("code,rules,verdict", E2E, ids=[f"e2e-{i}" for i in range(len(E2E))])
def test_end_to_end_through_both_doubles(code, rules, verdict):
    for backend in (InProcessRepl(rules), _kimina(rules)[1]):
        result = _verify(code, backend)
        assert result.verdict is verdict, (type(backend).__name__, result.detail)


def test_the_checked_text_is_the_datasets_whatever_keyword_the_model_wrote():
    for code in ("def t1 (x : ℝ) (h : x = 2) : x + 1 = 3 := by\n  subst h\n  norm_num",
                 "theorem «t1» (x : ℝ) (h : x = 2) : x + 1 = 3 := by\n  subst h\n  norm_num"):
        body = build_check(screen(ST, _answer(code), header=HEADER), HEADER).snippet.body
        assert body.count(SIG + " :=") == 1 and "def t1" not in body and "«t1»" not in body


def test_the_reference_name_is_fresh_for_every_check_and_unlike_any_helper():
    helper = f"theorem sdpo_ref_0123456789abcdef : True := trivial\n{OK}"
    r = screen(ST, _answer(helper), header=HEADER)
    refs = set()
    for _ in range(20):
        plan = build_check(r, HEADER)
        check = plan.snippet.body.split("\n")[plan.check_line - 1]
        (ref,) = re.findall(r"@_root_\.(sdpo_ref_[0-9a-f]{16}) :=", check)
        assert ref != "sdpo_ref_0123456789abcdef" and f"axiom {ref} " in plan.snippet.body
        assert ref not in plan.visible_source
        refs.add(ref)
    assert len(refs) == 20


# ---------------------------------------------------------------------------------- the judge reads one exact answer

def _msg(line, severity, text):
    return LeanMessage(severity, line, 0, None, None, text)


JUDGE = [  # (what Lean prints: [(line: "proof"|"check"|"audit"|"below", severity, text)], verdict)
    # a mimicked audit in the proof is not read; the real one decides
    ([("proof", "info", FAKE_AUDIT), ("audit", "info", "'t1' depends on axioms: [cheat, propext]")], F),
    ([("proof", "info", FAKE_AUDIT), ("audit", "info", "'t1' depends on axioms: [propext, sorryAx]")], S),
    ([("proof", "info", FAKE_AUDIT), ("audit", "info", f"'t1' depends on axioms: [{STD}]")], V),
    # two answers folded into one message, or an answer with a tail, is not one axiom list
    ([("audit", "info", f"{FAKE_AUDIT}\n't1' depends on axioms: [cheat]")], F),
    ([("audit", "info", f"{FAKE_AUDIT} and more")], F),
    ([("audit", "info", "'t1' depends on axioms: [propext] 't1' depends on axioms: [cheat]")], M),   # name ≠ t1
    # `trace` is a severity the REPL declares: never an audit, always a message on the check line
    ([("audit", "trace", FAKE_AUDIT)], F),
    ([("check", "trace", "[Meta.isDefEq] ✅️ …"), ("audit", "info", FAKE_AUDIT)], M),
    # a message without a position (line 0) is a proof message like any other
    ([("zero", "error", "unexpected end of input"), ("audit", "info", FAKE_AUDIT)], L),
    # the real audit moved below the last line (a backend that counted more lines): see the line-break class
    ([("audit", "info", FAKE_AUDIT), ("below", "info", "'t1' depends on axioms: [cheat]")], F),
    ([("check", "info", ""), ("audit", "info", FAKE_AUDIT), ("below", "error", "type mismatch")], F),
]


@pytest.mark.parametrize("printed,verdict", JUDGE, ids=[f"judge-{i}" for i in range(len(JUDGE))])
def test_judge_reads_only_the_exact_answer(printed, verdict):
    plan = build_check(screen(ST, _answer(OK), header=HEADER), HEADER)
    lines = {"proof": plan.visible_offset + 2, "check": plan.check_line, "audit": plan.audit_line,
             "below": plan.audit_line + 2, "zero": 0}
    messages = tuple(_msg(lines[where], severity, text.replace("'t1'", f"'{plan.audited}'") if where == "audit"
                          else text) for where, severity, text in printed)   # the audit is of the check's constant
    assert judge(RunResult("x", Outcome.OK, 0.1, messages), plan).verdict is verdict


def test_parse_audit_accepts_exactly_lean_s_two_answers():
    assert parse_audit(f"'t1' depends on axioms: [{STD}]") == ("t1", ("propext", "Classical.choice", "Quot.sound"))
    assert parse_audit("'t1' does not depend on any axioms") == ("t1", ())
    for text in (f"{FAKE_AUDIT}\n{FAKE_AUDIT}", "t1 depends on axioms: [propext]", "'t1' depends on axioms: propext",
                 "'t1' depends on axioms: [propext]]", "'t1' depends on axioms: [propext] extra"):
        assert parse_audit(text) is None, text


# --------------------------------------------------------------------------------------- the server's answer forms

def _serve(row: dict) -> KiminaBackend:
    def handler(request: httpx.Request) -> httpx.Response:
        snippet_id = __import__("json").loads(request.content)["snippets"][0]["id"]
        return httpx.Response(200, json={"results": [{"id": snippet_id, **row}]})
    return KiminaBackend("http://k", transport=httpx.MockTransport(handler))


def _clean_answer(plan) -> dict:
    audit_line = plan.audit_line + plan.snippet.header_lines   # Kimina reports positions in the whole code
    return {"env": 0, "messages": [{"severity": "info", "pos": {"line": audit_line, "column": 0}, "endPos": None,
                                    "data": f"'t1' depends on axioms: [{STD}]"}]}


@pytest.mark.parametrize("row,verdict", [
    # an `error` beside a clean-looking response: the server failed, the response is not a verdict (masked)
    ({"time": 0.1, "error": "Lean REPL process crashed", "response": "CLEAN"}, Verdict.INFRA),
    # a `sorries` entry without any message still means a sorry (Kimina shifts sorries only when there are messages)
    ({"time": 0.1, "response": {"env": 0, "sorries": [{"pos": {"line": 3, "column": 2}, "goal": "⊢ False"}]}}, S),
    # a REPL-level `{"message": …}` is no verdict
    ({"time": 0.1, "response": {"message": "Lean error:\nunknown environment"}}, Verdict.INFRA),
], ids=["error-and-response", "sorries-only", "repl-message"])
def test_kimina_answer_forms_never_pay_what_lean_did_not_answer(row, verdict):
    plan = build_check(screen(ST, _answer(OK), header=HEADER), HEADER)
    if row.get("response") == "CLEAN":
        row = {**row, "response": _clean_answer(plan)}
    result = _verify(OK, _serve(row))
    assert result.verdict is verdict, result.detail
