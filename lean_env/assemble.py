"""Assemble the file that is actually checked: trusted header + dataset statement + model proof.

Layout of `Snippet.body` (line 1 = first body line):
  non-import header lines, dataset preamble up to its trailing `open … in` chain (if any)   <- trusted
  chain `axiom sdpo_ref_<nonce> <dataset signature>`   <- reference, elaborated before any model code (statement check)
  `section`, `set_option maxHeartbeats <bound>`          <- the model's scope: its `open`s and options end with it
  chain, unless model helpers precede the theorem       <- trusted
  model helper lemmas, [chain,] dataset statement `:=` model proof   <- "visible" code, line 1 = first line
  `end`
  `set_option maxHeartbeats <bound> in theorem _root_.sdpo_check_<nonce> : type_of% @_root_.sdpo_ref_<nonce> :=
   @_root_.<name>` (one line)                           <- statement check at `check_line`
  `#print axioms _root_.sdpo_check_<nonce>`                         <- axiom audit at `audit_line`, the last line
The statement check makes the kernel confirm that the constant the proof declared has, up to definitional equality,
the type of the dataset's statement elaborated in the clean header environment: so a statement whose notation,
instances or names the model's code changed fails there. Why this form (Lean 4.9 semantics, read in its sources):
- The check is a `theorem` (a `noncomputable def` for a `def` statement) added with `addDecl`, so the kernel re-checks
  that the value's type is the declared type (`Lean/Elab/MutualDef.lean`, `elabMutualDef`); unification hints and
  other elaborator-only defeq rules cannot make it pass. `#check` (an earlier form) never reaches the kernel.
- Every name is `_root_.`-qualified: `resolveGlobalName` resolves `_root_.x` by `resolveExact` to the root constant
  `x` only, never through the current namespace, `open` declarations or `export` aliases (`Lean/ResolveName.lean`).
  `type_of%` (`elabTypeOf`, `Lean/Elab/BuiltinNotation.lean`), `theorem`, `@`, `:` and `:=` are built-in syntax.
  The model cannot declare anything at root under the two names (the screen: fresh helper names, no `_root_`).
- The reference is the expected type and the model's constant the value, each used with `@` (no implicit arguments
  instantiated, no implicit lambda), so the whole `∀ …` statements are compared; a universe-polymorphic statement
  works because the header's universe parameters are unified with the value's (`Eq`/`rfl` between two `type_of%`
  would compare two independently generalised universe parameters and reject honest proofs).
- The section closes the model's `open`s (scoped notation, instances and tokens included) and `set_option`s before
  the check, which therefore runs in the trusted header's scope. It opens with a heartbeat bound (default 400000)
  that the model may raise within the screen's bounds: the dataset headers set `maxHeartbeats 0`, under which a
  proof that never ends is only stopped by the wall clock, a masked timeout that is never paid and never penalised.
- The check carries the same heartbeat bound, so a statement the model's context made expensive to compare fails
  with Lean's heartbeat error (a mismatch) instead of running into the wall clock (a masked timeout).
- A passing check prints nothing and declares `sdpo_check_<nonce>`; the audit is of that constant, so only a check
  that ran gives its one positive answer: a check rewritten into another command or skipped leaves no such constant
  ("Unknown constant"), and a file cut short loses the audit too. The check's axioms are the theorem's (its value)
  plus its type's, so the audit still covers the proof.
The nonce is drawn per check, so model code cannot name the reference or the check constant ahead of time (code that
runs during elaboration could still read it from the check line: the screen keeps such code out). Feedback line
numbers count from the first line of the visible code, i.e. the code the model wrote with the dataset's statement
substituted for its own copy.
"""
from __future__ import annotations

import re
import secrets
from dataclasses import dataclass

from lean_env.commands import split_commands
from lean_env.lexer import lex
from lean_env.rules import HEADER_MAX_HEARTBEATS
from lean_env.screen import ScreenResult
from lean_env.types import Snippet

DEFAULT_HEADER = ("import Mathlib\nimport Aesop\n\nset_option maxHeartbeats 400000\n\n"
                  "open BigOperators Real Nat Topology Rat")


@dataclass(frozen=True)
class CheckPlan:
    """The file to check (`snippet`) and where its parts sit: the visible code's offset, the statement check's line and
    the axiom audit's line (body lines), which `judge` and `render_feedback` read."""

    snippet: Snippet
    name: str
    visible_offset: int           # body line number = visible line number + visible_offset
    audit_line: int               # body line of the appended `#print axioms` (the last line)
    visible_source: str
    check_line: int | None = None  # body line of the statement check (None: no check)
    audited: str = ""              # the constant the audit must name: `sdpo_check_<nonce>`, or `name` without a check


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


def statement_check_line(name: str, reference: str, check: str, kind: str = "theorem", max_heartbeats: int = 0) -> str:
    """The one-line kernel-checked statement check declaring `check` (see the module docstring), under
    `max_heartbeats` unless 0. A `def` statement is data: its check is a `noncomputable def` (the compiler must not
    compile a noncomputable value)."""
    bound = f"set_option maxHeartbeats {max_heartbeats} in " if max_heartbeats else ""
    decl = "theorem" if kind in ("theorem", "lemma") else "noncomputable def"
    return f"{bound}{decl} _root_.{check} : type_of% @_root_.{reference} := @_root_.{name}"


def build_check(screened: ScreenResult, header: str = DEFAULT_HEADER, snippet_id: str = "0", *,
                statement_check: bool = True, max_heartbeats: int = HEADER_MAX_HEARTBEATS) -> CheckPlan:
    """Build the snippet for an accepted screen result (with the statement check unless `statement_check=False`;
    the model's code under `set_option maxHeartbeats <max_heartbeats>` unless it is 0)."""
    if not screened.ok or screened.statement is None or screened.proof is None:
        raise ValueError("build_check needs an accepted ScreenResult")
    st = screened.statement
    imports, rest = split_header(header)
    nonce = secrets.token_hex(8)
    reference, audited = f"sdpo_ref_{nonce}", (f"sdpo_check_{nonce}" if statement_check else st.name)
    head, chain, before_visible, visible = arrange(screened)
    trusted = _with_newline(rest) + head
    if statement_check:   # the statement's `open X in` chain prefixes the reference as it prefixes the theorem
        trusted += chain + f"axiom {reference}{st.signature}\n"
    trusted += "section\n" + (f"set_option maxHeartbeats {max_heartbeats}\n" if max_heartbeats else "")
    trusted += before_visible
    offset = trusted.count("\n")
    body = trusted + visible + "end\n"
    check_line = None
    if statement_check:
        body += statement_check_line(st.name, reference, audited, st.kind, max_heartbeats) + "\n"
        check_line = body.count("\n")
    body += f"#print axioms _root_.{audited}\n"
    return CheckPlan(Snippet(snippet_id, _with_newline(imports), body), st.name, offset, body.count("\n"), visible,
                     check_line, audited)
