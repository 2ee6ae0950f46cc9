"""Deterministic feedback text for the teacher (errors with line:col, context, goals).

Line numbers count from line 1 of the visible code (helper lemmas, the theorem statement and
the proof, as checked). Capped: `max_errors` errors, `max_message_chars` per message,
`max_chars` in total (whole errors are dropped first). Empty for VALID and for infrastructure verdicts.
"""
from __future__ import annotations

from lean_env.assemble import CheckPlan
from lean_env.judge import Judgement
from lean_env.types import Verdict

_FIXED = {
    Verdict.TRUNCATED: ("The output was cut off (truncated): {detail}. "
                        "End within the length limit with one ```lean4 block."),
    Verdict.NO_ANSWER: ("No usable proof was found: {detail}. "
                        "End with one ```lean4 block holding the theorem and its proof."),
    Verdict.FORBIDDEN: "The proof was rejected: {detail}.",
    Verdict.STATEMENT_MISMATCH: "The theorem statement must be kept exactly as given: {detail}.",
    Verdict.SORRY: "The proof is incomplete: {detail}.",
}


def render_feedback(judgement: Judgement, plan: CheckPlan | None = None, *, max_errors: int = 5,
                    max_message_chars: int = 600, context_before: int = 2, context_after: int = 1,
                    max_chars: int = 3000) -> str:
    """The teacher's text for `judgement` ("" for VALID and for what is no verdict on the proof: INFRA, TIMEOUT,
    BAD_TASK): Lean's errors with line:col in the visible code and a few lines of context when `plan` is given, else a
    fixed sentence per verdict; capped as the module docstring says."""
    v = judgement.verdict
    if v in (Verdict.VALID, Verdict.INFRA, Verdict.TIMEOUT, Verdict.BAD_TASK):
        return ""
    if v is not Verdict.LEAN_ERROR or plan is None or not judgement.errors:
        return _FIXED.get(v, "{detail}").format(detail=judgement.detail.rstrip("."))[:max_chars]
    lines = plan.visible_source.splitlines()
    seen, errors = set(), []
    for m in sorted(judgement.errors, key=lambda m: (m.line, m.col, m.text)):
        key = (m.line, m.col, m.text)
        if key not in seen:
            seen.add(key)
            errors.append(m)
    parts = [f"Lean reported {len(errors)} error(s); line numbers count from the first line of your code block "
             f"as checked (helper lemmas, then the theorem statement and your proof)."]
    shown = 0
    for m in errors[:max_errors]:
        line = m.line - plan.visible_offset
        text = m.text if len(m.text) <= max_message_chars else m.text[:max_message_chars] + " …"
        if line < 1 or line > len(lines):
            part = f"error (outside your code):\n{text}"
        else:
            ctx = [f"{'>' if k == line else ' '} {k:>3} | {lines[k - 1]}"
                   for k in range(max(1, line - context_before), min(len(lines), line + context_after) + 1)]
            part = f"error at line {line}, column {m.col}:\n{text}\n" + "\n".join(ctx)
        if shown and sum(len(p) + 2 for p in parts) + len(part) > max_chars - 40:
            break
        parts.append(part)
        shown += 1
    if len(errors) > shown:
        parts.append(f"({len(errors) - shown} more error(s) not shown)")
    out = "\n\n".join(parts)
    return out if len(out) <= max_chars else out[: max_chars - 2] + " …"
