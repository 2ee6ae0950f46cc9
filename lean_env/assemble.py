"""Assemble the file that is actually checked: trusted header + dataset statement + model proof.

Layout of `Snippet.body` (line 1 = first body line):
  non-import header lines, dataset preamble up to its trailing `open … in` chain (if any)   <- trusted
  chain `axiom sdpo_ref_<nonce> <dataset signature>`   <- reference, elaborated before any model code (statement check)
  chain, unless model helpers precede the theorem       <- trusted
  model helper lemmas, [chain,] dataset statement `:=` model proof   <- "visible" code, line 1 = first line
  (blank line) `#print axioms <name>`            <- axiom audit at `audit_line`
  `#check (rfl : type_of% @_root_.<name> = type_of% @sdpo_ref_<nonce>)`   <- statement check at `check_line`
The statement check makes Lean confirm that the constant the proof declared has, up to definitional equality, the
type of the dataset's statement elaborated in the clean header environment: so a statement whose notation, instances
or names the model's code changed fails there. The nonce is drawn per check, so model code cannot name the reference.
Feedback line numbers count from the first line of the visible code, i.e. the code the model
wrote with the dataset's statement substituted for its own copy.
"""
from __future__ import annotations

import re
import secrets
from dataclasses import dataclass

from lean_env.commands import split_commands
from lean_env.lexer import lex
from lean_env.screen import ScreenResult
from lean_env.types import Snippet

DEFAULT_HEADER = ("import Mathlib\nimport Aesop\n\nset_option maxHeartbeats 400000\n\n"
                  "open BigOperators Real Nat Topology Rat")


@dataclass(frozen=True)
class CheckPlan:
    snippet: Snippet
    name: str
    visible_offset: int           # body line number = visible line number + visible_offset
    audit_line: int               # body line of the appended `#print axioms`
    visible_source: str
    check_line: int | None = None  # body line of the statement check (None: no check)


def split_header(header: str) -> tuple[str, str]:
    """(leading import/blank lines, the rest) of a trusted header."""
    lines = header.splitlines(keepends=True)
    k = 0
    while k < len(lines) and (not lines[k].strip() or re.match(r"\s*import\b", lines[k])):
        k += 1
    imports = "".join(ln for ln in lines[:k] if ln.strip())
    return imports, "".join(lines[k:])


def _trailing_prefixes(preamble: str) -> int:
    """Offset where a trailing `open … in` / `set_option … in` chain of `preamble` starts (len if none)."""
    code = [t for t in lex(preamble) if t.kind != "comment"]
    commands = split_commands(code, preamble)
    if commands and commands[-1].head is None and commands[-1].prefixes:
        return commands[-1].prefixes[0].tokens[0].start
    return len(preamble)


def _with_newline(text: str) -> str:
    return text if not text or text.endswith("\n") else text + "\n"


def arrange(screened: ScreenResult) -> tuple[str, str, str, str]:
    """(dataset preamble without its trailing `open … in`/`set_option … in` chain, that chain, the text to put between
    the trusted part and the visible code, the visible code).

    The chain prefixes the dataset's theorem, so it must stand right before the statement: with no helpers (or when the
    model's helpers already end with it) it closes the trusted part; after other helpers it goes inside the visible
    code just before the statement (else it would prefix the first helper and the theorem would lose it)."""
    st = screened.statement
    assert st is not None and screened.proof is not None
    preamble = _with_newline(st.preamble)
    cut = _trailing_prefixes(preamble)
    head, chain = preamble[:cut], preamble[cut:]
    helpers = screened.helpers
    if chain and helpers.strip() and not _code_text(helpers).endswith(_code_text(chain)):
        return head, chain, "", _with_newline(_with_newline(helpers) + chain + st.core + " :=" + screened.proof)
    return head, chain, chain, _with_newline(helpers + st.core + " :=" + screened.proof)


def _code_text(text: str) -> str:
    return " ".join(t.text for t in lex(text) if t.kind != "comment")


def build_check(screened: ScreenResult, header: str = DEFAULT_HEADER, snippet_id: str = "0", *,
                statement_check: bool = True) -> CheckPlan:
    """Build the snippet for an accepted screen result (with the statement check unless `statement_check=False`)."""
    if not screened.ok or screened.statement is None or screened.proof is None:
        raise ValueError("build_check needs an accepted ScreenResult")
    st = screened.statement
    imports, rest = split_header(header)
    reference = f"sdpo_ref_{secrets.token_hex(8)}"
    head, chain, before_visible, visible = arrange(screened)
    trusted = _with_newline(rest) + head
    if statement_check:   # the statement's `open X in` chain prefixes the reference as it prefixes the theorem
        trusted += chain + f"axiom {reference}{st.signature}\n"
    trusted += before_visible
    body = trusted + visible + "\n#print axioms " + st.name + "\n"
    offset = trusted.count("\n")
    audit_line = offset + visible.count("\n") + 2
    if statement_check:
        body += f"#check (rfl : type_of% @_root_.{st.name} = type_of% @{reference})\n"
    return CheckPlan(Snippet(snippet_id, _with_newline(imports), body), st.name, offset, audit_line, visible,
                     audit_line + 1 if statement_check else None)
