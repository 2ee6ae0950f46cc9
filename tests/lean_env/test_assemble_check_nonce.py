"""Issue 39, class 2: the in-file check must give a positive answer that only a check which ran can give.

The check declares `sdpo_check_<nonce>` (the nonce of the reference axiom, drawn per check) and the audit is of that
constant, so a check line that a global macro rewrote into a harmless command, or that was skipped, leaves no
`sdpo_check_<nonce>` to audit: `#print axioms` answers "Unknown constant" (Lean/Elab/Print.lean, `elabPrintAxioms`
resolves the name first). Its axioms are those of the theorem (its value) plus its type's, so the audit still covers
the proof. The rewrites below stand for what model code that slipped past the screen could do to the check and audit
lines; before the audit named the check constant, each of the first three was paid.
"""
from __future__ import annotations

import asyncio
import re

import pytest

from lean_env import LeanMessage, Outcome, RunResult, Verdict, build_check, judge, screen
from lean_env.types import Snippet
from lean_env.verify import Task, verify
from tests.lean_env.test_verify_redteam_round2 import HEADER, OK, ST, InProcessRepl, _answer

STD = "propext, Classical.choice, Quot.sound"


def _plan(**kw):
    return build_check(screen(ST, _answer(OK), header=HEADER), HEADER, **kw)


def _nonce(plan) -> str:
    return re.search(r"axiom sdpo_ref_([0-9a-f]+)", plan.snippet.body).group(1)


def _lines(plan) -> list[str]:
    return plan.snippet.body.split("\n")


def _audit(plan, text, severity="info"):
    return LeanMessage(severity, plan.audit_line, 0, plan.audit_line, 5, text)


def _judge(plan, *messages):
    return judge(RunResult("x", Outcome.OK, 0.1, tuple(messages)), plan)


def test_the_check_declares_a_constant_named_by_the_nonce_and_the_audit_is_of_it():
    plan = _plan()
    nonce = _nonce(plan)
    check, audit = _lines(plan)[plan.check_line - 1], _lines(plan)[plan.audit_line - 1]
    assert check == (f"set_option maxHeartbeats 400000 in theorem _root_.sdpo_check_{nonce} : "
                     f"type_of% @_root_.sdpo_ref_{nonce} := @_root_.t1")
    assert audit == f"#print axioms _root_.sdpo_check_{nonce}"
    assert plan.audited == f"sdpo_check_{nonce}" and _nonce(_plan()) != nonce


def test_a_def_statement_gets_a_noncomputable_def_check():
    st_ = "def d1 : ℕ := by\n"
    plan = build_check(screen(st_, _answer("def d1 : ℕ := 3")))
    assert re.search(r"noncomputable def _root_\.sdpo_check_[0-9a-f]+ : type_of% ", _lines(plan)[plan.check_line - 1])


def test_without_the_statement_check_the_audit_stays_of_the_theorem():
    plan = _plan(statement_check=False)
    assert plan.check_line is None and _lines(plan)[plan.audit_line - 1] == "#print axioms _root_.t1"
    assert _judge(plan, _audit(plan, f"'t1' depends on axioms: [{STD}]")).verdict is Verdict.VALID


@pytest.mark.parametrize("printed,verdict", [
    ("'{check}' depends on axioms: [" + STD + "]", Verdict.VALID),
    ("'{check}' does not depend on any axioms", Verdict.VALID),
    ("'t1' depends on axioms: [" + STD + "]", Verdict.STATEMENT_MISMATCH),                 # the old honest answer
    ("'sdpo_check_0123456789abcdef' depends on axioms: [" + STD + "]", Verdict.STATEMENT_MISMATCH),   # other nonce
    ("'{check}' depends on axioms: [propext, sorryAx]", Verdict.SORRY),
    ("'{check}' depends on axioms: [propext, cheat]", Verdict.FORBIDDEN),
])
def test_the_judge_wants_the_audit_of_the_check_constant(printed, verdict):
    plan = _plan()
    assert _judge(plan, _audit(plan, printed.format(check=plan.audited))).verdict is verdict


def test_an_unknown_check_constant_means_the_check_did_not_run():
    plan = _plan()
    result = _judge(plan, LeanMessage("error", plan.audit_line, 15, plan.audit_line, 30,
                                      f"unknown constant '{plan.audited}'"))
    assert result.verdict is Verdict.STATEMENT_MISMATCH and "check" in result.detail


class RewritingRepl(InProcessRepl):
    """The REPL double, but the check and audit lines are first rewritten as a global macro of the model could."""

    def __init__(self, rewrite):
        super().__init__()
        self.rewrite = rewrite

    async def run(self, snippets, *, timeout_s):
        out = []
        for s in snippets:
            lines = s.body.split("\n")
            self.rewrite(lines)
            out += await super().run([Snippet(s.id, s.header, "\n".join(lines))], timeout_s=timeout_s)
        return out


def _harmless(lines):   # the check becomes a silent command that declares nothing
    lines[-3] = "theorem sdpo_harmless : True := trivial"


def _skipped(lines):    # the check never runs (a macro expanding it to nothing)
    lines[-3] = ""


def _forged(lines):     # the check is skipped and the audit prints the old honest answer
    lines[-3] = ""
    lines[-2] = f"#print \"'t1' depends on axioms: [{STD}]\""


@pytest.mark.parametrize("rewrite", [_harmless, _skipped, _forged])
def test_a_rewritten_or_skipped_check_is_not_paid(rewrite):
    result = asyncio.run(verify(Task("t1", ST, HEADER), _answer(OK), RewritingRepl(rewrite)))
    assert result.verdict is Verdict.STATEMENT_MISMATCH, result.detail


def test_the_honest_proof_is_still_paid_end_to_end():
    result = asyncio.run(verify(Task("t1", ST, HEADER), _answer(OK), InProcessRepl()))
    assert result.verdict is Verdict.VALID, result.detail
