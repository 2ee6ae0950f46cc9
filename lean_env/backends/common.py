"""Decode the REPL's command answer (also embedded in Kimina's `response`) into a RunResult."""
from __future__ import annotations

from typing import Any, Mapping

from lean_env.types import LeanMessage, Outcome, RunResult

# The REPL's JSON declares `trace` besides Lean's three severities (Kimina's models list it too); like `info`
# it is neither an error nor a sign of a broken answer.
_SEVERITIES = {"trace", "info", "warning", "error"}


def _line_col(pos: Any) -> tuple[int | None, int | None]:
    if isinstance(pos, Mapping) and isinstance(pos.get("line"), int) and isinstance(pos.get("column"), int):
        return pos["line"], pos["column"]
    return None, None


def parse_repl_response(snippet_id: str, resp: Any, elapsed_s: float, line_shift: int = 0) -> RunResult:
    """RunResult from a REPL command answer; positions are moved up by `line_shift` lines.

    A `{"message": …}` answer is a REPL-level error (`repl_error`); anything that is not a
    command answer is INFRA.
    """
    if not isinstance(resp, Mapping):
        return RunResult(snippet_id, Outcome.INFRA, elapsed_s,
                         infra_detail=f"REPL answer is not an object: {str(resp)[:200]}")
    if "env" not in resp and isinstance(resp.get("message"), str):
        return RunResult(snippet_id, Outcome.OK, elapsed_s, repl_error=resp["message"], raw=resp)
    msgs = resp.get("messages") or []
    sorries = resp.get("sorries") or []
    if not isinstance(msgs, list) or not isinstance(sorries, list):
        return RunResult(snippet_id, Outcome.INFRA, elapsed_s, infra_detail="malformed messages/sorries in REPL answer",
                         raw=resp)
    messages = []
    for m in msgs:
        if not isinstance(m, Mapping) or m.get("severity") not in _SEVERITIES:
            return RunResult(snippet_id, Outcome.INFRA, elapsed_s, infra_detail=f"malformed message {str(m)[:200]}",
                             raw=resp)
        line, col = _line_col(m.get("pos"))
        end_line, end_col = _line_col(m.get("endPos"))
        messages.append(LeanMessage(
            severity=m["severity"], line=(line or 0) - line_shift, col=col or 0,
            end_line=None if end_line is None else end_line - line_shift, end_col=end_col,
            text=str(m.get("data", "")),
        ))
    sorry_lines = tuple((_line_col(s.get("pos"))[0] or 0) - line_shift for s in sorries if isinstance(s, Mapping))
    return RunResult(snippet_id, Outcome.OK, elapsed_s, tuple(messages), len(sorries), sorry_lines, raw=resp)
