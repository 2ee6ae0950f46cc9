"""Judge a Lean run: errors, sorries and the `#print axioms` audit -> Verdict.

Contract: VALID only when Lean reported no error outside the check and audit lines, no sorry, the statement check's
line (when the plan has one) carries no message at all, and the audit line carries exactly one message, an info that
is an axiom audit of exactly `plan.audited` (the check's constant `sdpo_check_<nonce>`, which only a check that ran
declares; without a statement check the dataset's name at root) listing only propext, Classical.choice and
Quot.sound, and no message lies below the audit, the file's last line (else the backend numbered the lines otherwise
than the assembler, and the lines read are not the check and the audit: FORBIDDEN). Both lines are compared with the
one outcome Lean gives for an honest proof, so anything else there is a rejection: any message on the check line
(Lean's `type mismatch`, `unknown identifier`, a `(kernel)` error, or an info or warning that no honest run prints)
is STATEMENT_MISMATCH; on the audit line no message, several, a warning, or a text that is not one axiom audit is
FORBIDDEN, an audit of another constant or an unknown one (a check that did not run) is STATEMENT_MISMATCH. Native
evaluation shows up in the audit as `Lean.ofReduceBool`/`Lean.trustCompiler`: FORBIDDEN.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from lean_env.assemble import CheckPlan
from lean_env.lexer import name_parts
from lean_env.types import LeanMessage, Outcome, RunResult, Verdict

ALLOWED_AXIOMS = frozenset({"propext", "Classical.choice", "Quot.sound"})
_SORRY_WARNING = re.compile(r"declaration uses ['`]sorry['`]")
_UNKNOWN = re.compile(r"(?i)unknown (constant|identifier|declaration)")
_AUDIT = re.compile(r"\s*'(?P<name>[^\n]+?)'\s+"
                    r"(?:depends on axioms:\s*\[(?P<axioms>[^\]]*)\]|does not depend on any axioms)\s*")
NATIVE_AXIOMS = frozenset({"Lean.ofReduceBool", "Lean.ofReduceNat", "Lean.trustCompiler"})


@dataclass(frozen=True)
class Judgement:
    """A Lean run's verdict, a one-line `detail`, the proof's errors (for the feedback) and the axioms the audit
    reported."""

    verdict: Verdict
    detail: str
    errors: tuple[LeanMessage, ...] = field(default=())   # proof errors for the feedback
    axioms: tuple[str, ...] = ()


def parse_audit(text: str) -> tuple[str, tuple[str, ...]] | None:
    """(audited name, axioms) when `text` is exactly one `#print axioms` answer, else None."""
    m = _AUDIT.fullmatch(text)
    if m is None:
        return None
    axioms = m.group("axioms") or ""
    return m.group("name"), tuple(a.strip() for a in axioms.replace("\n", " ").split(",") if a.strip())


def _audit(audit: list[LeanMessage], name: str) -> Judgement | tuple[str, ...]:
    """The audited axioms, or the Judgement that rejects the audit line (exactly one info message is expected)."""
    if not audit:
        return Judgement(Verdict.FORBIDDEN, "the axiom audit printed nothing")
    if len(audit) > 1:
        return Judgement(Verdict.FORBIDDEN, f"the axiom audit line carries {len(audit)} messages instead of one")
    message = audit[0]
    if message.severity == "error":
        return Judgement(Verdict.LEAN_ERROR, "the axiom audit failed: " + message.text[:200])
    parsed = parse_audit(message.text) if message.severity == "info" else None
    if parsed is None:
        return Judgement(Verdict.FORBIDDEN, f"the axiom audit answer is not one axiom list: {message.severity}: "
                         + message.text[:200])
    if name_parts(parsed[0]) != name_parts(name):
        return Judgement(Verdict.STATEMENT_MISMATCH, f"the axiom audit checked `{parsed[0]}`, not `{name}` at root")
    return parsed[1]


def judge(result: RunResult, plan: CheckPlan) -> Judgement:
    """Classify `result`; only VALID earns reward. Check- and audit-line messages are not proof errors."""
    if result.outcome is Outcome.TIMEOUT:
        return Judgement(Verdict.TIMEOUT, result.infra_detail or "Lean timed out")
    if result.outcome is Outcome.INFRA:
        return Judgement(Verdict.INFRA, result.infra_detail or "infrastructure failure")
    if result.repl_error is not None:
        return Judgement(Verdict.INFRA, f"REPL error: {result.repl_error[:300]}")
    below = next((m for m in result.messages if 0 < plan.audit_line < m.line), None)
    if below is not None:   # the audit is the last line: the backend numbered lines otherwise than the assembler
        return Judgement(Verdict.FORBIDDEN, f"Lean reported a message on line {below.line}, after the last line "
                         f"({plan.audit_line}): the check and audit lines cannot be located")
    audit = [m for m in result.messages if m.line == plan.audit_line]
    check = [m for m in result.messages if plan.check_line is not None and m.line == plan.check_line]
    proof_msgs = [m for m in result.messages if m.line not in (plan.audit_line, plan.check_line)]
    errors = tuple(m for m in proof_msgs if m.severity == "error")
    if errors:
        return Judgement(Verdict.LEAN_ERROR, f"{len(errors)} Lean error(s)", errors)
    sorry_warn = [m for m in proof_msgs if m.severity == "warning" and _SORRY_WARNING.search(m.text)]
    if result.n_sorries or sorry_warn:
        return Judgement(Verdict.SORRY, "the proof uses sorry")
    audited = plan.audited or plan.name
    if any(m.severity == "error" and _UNKNOWN.search(m.text) for m in audit):
        what = "the statement check did not run" if audited != plan.name else f"`{plan.name}` was not declared"
        return Judgement(Verdict.STATEMENT_MISMATCH, f"{what} (unknown constant `{audited}`)")
    if check:   # an honest proof leaves the check line silent
        first = check[0]
        return Judgement(Verdict.STATEMENT_MISMATCH,
                         f"Lean: `{plan.name}` does not have the dataset's statement as its type "
                         f"({first.severity}: {first.text[:200]})")
    axioms = _audit(audit, audited)
    if isinstance(axioms, Judgement):
        return axioms
    if "sorryAx" in axioms:
        return Judgement(Verdict.SORRY, "the proof depends on sorryAx", axioms=axioms)
    native = sorted(set(axioms) & NATIVE_AXIOMS)
    if native:
        return Judgement(Verdict.FORBIDDEN, "the proof uses native evaluation (" + ", ".join(native) + ")",
                         axioms=axioms)
    extra = sorted(set(axioms) - ALLOWED_AXIOMS)
    if extra:
        return Judgement(Verdict.FORBIDDEN, "the proof depends on the axioms " + ", ".join(extra), axioms=axioms)
    return Judgement(Verdict.VALID, "", axioms=axioms)
