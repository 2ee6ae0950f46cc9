"""Assemble the file that is actually checked: trusted header + dataset statement + model proof.

Layout of `Snippet.body` (line 1 = first body line):
  non-import header lines, dataset preamble      <- trusted
  model helper lemmas, dataset statement `:=` model proof   <- "visible" code, line 1 = first line
  (blank line) `#print axioms <name>`            <- axiom audit at `audit_line`
Feedback line numbers count from the first line of the visible code, i.e. the code the model
wrote with the dataset's statement substituted for its own copy.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from lean_env.screen import ScreenResult
from lean_env.types import Snippet

DEFAULT_HEADER = "import Mathlib\nimport Aesop\n\nset_option maxHeartbeats 400000\n\nopen BigOperators Real Nat Topology Rat"


@dataclass(frozen=True)
class CheckPlan:
    snippet: Snippet
    name: str
    visible_offset: int           # body line number = visible line number + visible_offset
    audit_line: int               # body line of the appended `#print axioms`
    visible_source: str


def split_header(header: str) -> tuple[str, str]:
    """(leading import/blank lines, the rest) of a trusted header."""
    lines = header.splitlines(keepends=True)
    k = 0
    while k < len(lines) and (not lines[k].strip() or re.match(r"\s*import\b", lines[k])):
        k += 1
    imports = "".join(ln for ln in lines[:k] if ln.strip())
    return imports, "".join(lines[k:])


def _with_newline(text: str) -> str:
    return text if not text or text.endswith("\n") else text + "\n"


def build_check(screened: ScreenResult, header: str = DEFAULT_HEADER, snippet_id: str = "0") -> CheckPlan:
    """Build the snippet for an accepted screen result."""
    if not screened.ok or screened.statement is None or screened.proof is None:
        raise ValueError("build_check needs an accepted ScreenResult")
    st = screened.statement
    imports, rest = split_header(header)
    trusted = _with_newline(rest) + _with_newline(st.preamble)
    visible = _with_newline(screened.helpers + st.core + " :=" + screened.proof)
    body = trusted + visible + "\n#print axioms " + st.name + "\n"
    offset = trusted.count("\n")
    audit_line = offset + visible.count("\n") + 2
    return CheckPlan(Snippet(snippet_id, _with_newline(imports), body), st.name, offset, audit_line, visible)
