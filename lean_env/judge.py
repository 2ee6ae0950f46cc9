"""Judge a Lean run: errors, sorries and the `#print axioms` audit -> Verdict."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from lean_env.assemble import CheckPlan
from lean_env.types import LeanMessage, Outcome, RunResult, Verdict

ALLOWED_AXIOMS = frozenset({"propext", "Classical.choice", "Quot.sound"})
_SORRY_WARNING = re.compile(r"declaration uses ['`]sorry['`]")
_DEPENDS = re.compile(r"depends on axioms:\s*\[(.*?)\]", re.S)
_NO_AXIOMS = re.compile(r"does not depend on any axioms")
_UNKNOWN = re.compile(r"(?i)unknown (constant|identifier|declaration)")


@dataclass(frozen=True)
class Judgement:
    verdict: Verdict
    detail: str
    errors: tuple[LeanMessage, ...] = field(default=())   # proof errors for the feedback
    axioms: tuple[str, ...] = ()


def parse_axioms(text: str) -> tuple[str, ...] | None:
    """Axioms named in a `#print axioms` answer; () for none; None if `text` is not one."""
    m = _DEPENDS.search(text)
    if m:
        return tuple(a.strip() for a in m.group(1).replace("\n", " ").split(",") if a.strip())
    return () if _NO_AXIOMS.search(text) else None


def judge(result: RunResult, plan: CheckPlan) -> Judgement:
    """Classify `result`; only VALID earns reward. Audit-line messages are not proof errors."""
    if result.outcome is Outcome.TIMEOUT:
        return Judgement(Verdict.TIMEOUT, result.infra_detail or "Lean timed out")
    if result.outcome is Outcome.INFRA:
        return Judgement(Verdict.INFRA, result.infra_detail or "infrastructure failure")
    if result.repl_error is not None:
        return Judgement(Verdict.INFRA, f"REPL error: {result.repl_error[:300]}")
    audit = [m for m in result.messages if m.line == plan.audit_line]
    proof_msgs = [m for m in result.messages if m.line != plan.audit_line]
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
    found = [ax for m in audit if m.severity == "info" and (ax := parse_axioms(m.text)) is not None]
    if not found:
        return Judgement(Verdict.FORBIDDEN, "the axiom audit printed nothing")
    axioms = found[-1]
    if "sorryAx" in axioms:
        return Judgement(Verdict.SORRY, "the proof depends on sorryAx", axioms=axioms)
    extra = sorted(set(axioms) - ALLOWED_AXIOMS)
    if extra:
        return Judgement(Verdict.FORBIDDEN, "the proof depends on the axioms " + ", ".join(extra), axioms=axioms)
    return Judgement(Verdict.VALID, "", axioms=axioms)
