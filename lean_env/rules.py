"""What the screen allows and forbids, as data plus small predicates (each returns a reason, or None when fine).

- Names: `sorry`, `admit`, `sorryAx` as a dotted part of an identifier mean SORRY. An identifier is forbidden when
  a dotted part (with `«»` removed) is in FORBIDDEN_PARTS or starts with `unsafe`, or it starts with `Lean.` + a
  metaprogramming namespace. This covers native evaluation
  (`native_decide`, `decide +native`, `(native := true)`, `Lean.ofReduceBool`), compiler hooks (`implemented_by`,
  `extern`), IO and elaboration-time code (`IO`, `by_elab`, `run_tac`, `Lean.Elab…`, `addDecl`, `evalExpr`) and
  proof-search suggestions (`exact?`). Commands such as `#eval`, `run_cmd`, `macro`, `instance` are not listed here:
  the command allowlist rejects them.
- Options: `set_option` (plain, `… in` before a command, or inside a proof) only for ALLOWED_OPTIONS or `linter.*`,
  with a number or boolean value, in any spelling (`«debug».skipKernelTC` is `debug.skipKernelTC`: not allowed).
- `open`: only namespaces, optionally `scoped`; no `renaming`, `hiding` or `(…)` (they alias names).
- Helpers: modifiers from ALLOWED_MODIFIERS, attributes from ALLOWED_ATTRIBUTES, and a fresh name: no dotted suffix
  of its full name (namespaces included) may equal the theorem's name or an identifier the statement uses, so a
  helper can neither stand in for the theorem nor shadow what the statement means.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

from lean_env.lexer import Token, name_parts

if TYPE_CHECKING:
    from lean_env.commands import Command, Prefix

DECLARATIONS = frozenset({"theorem", "lemma", "def", "abbrev"})
ALLOWED_MODIFIERS = frozenset({"private", "protected", "noncomputable"})
ALLOWED_ATTRIBUTES = frozenset({"simp", "reducible", "irreducible", "inline", "norm_cast", "push_cast", "nolint",
                                "aesop"})
ALLOWED_OPTIONS = frozenset({"maxHeartbeats", "maxRecDepth", "synthInstance.maxHeartbeats", "synthInstance.maxSize",
                             "exponentiation.threshold"})
FORBIDDEN_PARTS = frozenset({
    "native_decide", "native", "ofReduceBool", "ofReduceNat", "reduceBool", "reduceNat", "trustCompiler",
    "implemented_by", "extern", "by_elab", "run_tac", "run_cmd", "run_elab", "run_meta", "evalExpr", "evalConst",
    "addDecl", "addAndCompile", "compileDecl", "IO", "exact?", "apply?", "rw?", "hint?",
})
_META = frozenset({"Elab", "Meta", "Environment", "Parser", "Compiler", "IR", "Syntax", "Macro"})


_SORRY = re.compile(r"(?m)(?:^|\.)(sorry|admit|sorryAx)(?=\.|$)")
_FORBIDDEN = re.compile("(?m)(?:^|\\.)(" + "|".join(re.escape(p) for p in sorted(FORBIDDEN_PARTS)) +
                        r"|unsafe[^.\n]*)(?=\.|$)|^Lean\.(?:" + "|".join(sorted(_META)) + r")(?=\.|$)")


def forbidden_names(idents: list[Token]) -> tuple[Token, str, bool] | None:
    """The first identifier using a sorry-like name (then True) or else a forbidden one (False), with the name.

    One regex pass over the identifiers joined by newlines, with `«»` removed: an escaped part such as
    `«a.b»` is then read as two parts, which can only find more, never less."""
    joined = "\n".join(t.text for t in idents).replace("«", "").replace("»", "")
    for pattern, is_sorry in ((_SORRY, True), (_FORBIDDEN, False)):
        m = pattern.search(joined)
        if m:
            return idents[joined.count("\n", 0, m.start())], m.group(1) or m.group(0), is_sorry
    return None


def prefix_problem(prefix: Prefix) -> str | None:
    """Why an `open …` or `set_option …` form is not allowed."""
    args = prefix.tokens[1:]
    if prefix.keyword == "open":
        names = args[1:] if args and args[0].text == "scoped" else args
        if not names or any(t.kind != "ident" or t.text in ("renaming", "hiding", "scoped") for t in names):
            return "only `open A B` (optionally `scoped`, or `… in`) is allowed, not " + \
                " ".join(t.text for t in prefix.tokens)[:80]
        return None
    if len(args) != 2 or args[0].kind != "ident":
        return "malformed `set_option`"
    option = ".".join(name_parts(args[0].text))
    if option not in ALLOWED_OPTIONS and not option.startswith("linter."):
        return f"the option `{option}` may not be set (allowed: {', '.join(sorted(ALLOWED_OPTIONS))}, linter.*)"
    if args[1].kind != "num" and args[1].text not in ("true", "false"):
        return f"`set_option {option}` needs a number or true/false"
    return None


def helper_problem(cmd: Command, full_name: tuple[str, ...], statement_uses: frozenset[str],
                   target: tuple[str, ...]) -> str | None:
    """Why a helper declaration (full name with its namespaces) is not allowed."""
    name = ".".join(full_name)
    bad_mod = next((m.text for m in cmd.modifiers if m.text not in ALLOWED_MODIFIERS), None)
    if bad_mod:
        return f"the modifier `{bad_mod}` is not allowed on `{name}`"
    for attribute in cmd.attributes:
        first = [attribute[0]] + [attribute[k + 1] for k in range(len(attribute) - 1) if attribute[k].text == ","]
        bad = next((t.text for t in first if t.text not in ALLOWED_ATTRIBUTES), None) if attribute else "@[]"
        if bad:
            return f"the attribute `{bad}` is not allowed (allowed: {', '.join(sorted(ALLOWED_ATTRIBUTES))})"
    if "_root_" in full_name:
        return f"`_root_` is not allowed in the helper name `{name}`"
    for k in range(len(full_name)):
        suffix = full_name[k:]
        if suffix == target:
            return f"the helper `{name}` reuses the theorem's name"
        if ".".join(suffix) in statement_uses:
            return f"the helper `{name}` shadows `{'.'.join(suffix)}`, which the statement uses"
    return None


def statement_names(signature: list[Token]) -> frozenset[str]:
    """Identifiers of a statement's signature (after the name), without the names its leading binders bind."""
    binders: set[str] = set()
    depth, naming = 0, False
    for t in signature:
        if t.text in ("(", "{", "[", "⦃", "{{"):
            depth += 1
            naming = depth == 1 and t.text != "["   # `[Fintype α]` binds no name
        elif t.text in (")", "}", "]", "⦄", "}}"):
            depth -= 1
        elif depth == 0 and t.text.startswith(":"):
            break
        elif naming and t.kind == "ident":
            binders.add(t.text)
        else:
            naming = False
    return frozenset(".".join(name_parts(t.text)) for t in signature if t.kind == "ident") - binders
