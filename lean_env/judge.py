"""Judge a Lean run: errors, sorries and the `#print axioms` audit -> Verdict.

Contract: VALID only when Lean reported no error outside the audit line, no sorry, and the audit line carries exactly
one info message, which is an axiom audit of exactly `'<name>'` (the dataset's name at root: `'Foo.<name>'` means a
namespace redirected the audit) listing only propext, Classical.choice and Quot.sound. Native evaluation shows up
there as `Lean.ofReduceBool`/`Lean.trustCompiler` and is FORBIDDEN. When the plan has a statement check, an error on
its line means the declared constant's type is not the dataset's statement elaborated in the clean header
environment: STATEMENT_MISMATCH; the check's info answer is ignored.
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
    """The audited axioms, or the Judgement that rejects the audit."""
    infos = [m for m in audit if m.severity == "info"]
    if not infos:
        return Judgement(Verdict.FORBIDDEN, "the axiom audit printed nothing")
    if len(infos) > 1:
        return Judgement(Verdict.FORBIDDEN, f"the axiom audit line carries {len(infos)} messages instead of one")
    parsed = parse_audit(infos[0].text)
    if parsed is None:
        return Judgement(Verdict.FORBIDDEN, "the axiom audit answer is not an axiom list: " + infos[0].text[:200])
    if name_parts(parsed[0]) != name_parts(name):
        return Judgement(Verdict.STATEMENT_MISMATCH, f"the axiom audit checked `{parsed[0]}`, not `{name}` at root")
    return parsed[1]


def judge(result: RunResult, plan: CheckPlan) -> Judgement:
    """Classify `result`; only VALID earns reward. Audit-line messages are not proof errors."""
    if result.outcome is Outcome.TIMEOUT:
        return Judgement(Verdict.TIMEOUT, result.infra_detail or "Lean timed out")
    if result.outcome is Outcome.INFRA:
        return Judgement(Verdict.INFRA, result.infra_detail or "infrastructure failure")
    if result.repl_error is not None:
        return Judgement(Verdict.INFRA, f"REPL error: {result.repl_error[:300]}")
    audit = [m for m in result.messages if m.line == plan.audit_line]
    check = [m for m in result.messages if plan.check_line is not None and m.line == plan.check_line]
    proof_msgs = [m for m in result.messages if m.line != plan.audit_line and m not in check]
    errors = tuple(m for m in proof_msgs if m.severity == "error")
    if errors:
        return Judgement(Verdict.LEAN_ERROR, f"{len(errors)} Lean error(s)", errors)
    sorry_warn = [m for m in proof_msgs if m.severity == "warning" and _SORRY_WARNING.search(m.text)]
    if result.n_sorries or sorry_warn:
        return Judgement(Verdict.SORRY, "the proof uses sorry")
    if any(m.severity == "error" and _UNKNOWN.search(m.text) for m in audit):
        return Judgement(Verdict.STATEMENT_MISMATCH, f"`{plan.name}` was not declared (unknown constant)")
    if any(m.severity == "error" for m in audit):
        return Judgement(Verdict.LEAN_ERROR, "the axiom audit failed: " + audit[0].text[:200])
    if any(m.severity == "error" for m in check):
        text = next(m.text for m in check if m.severity == "error")
        return Judgement(Verdict.STATEMENT_MISMATCH,
                         f"Lean: `{plan.name}` does not have the dataset's statement as its type ({text[:200]})")
    axioms = _audit(audit, plan.name)
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
