"""What the screen allows and forbids, as data plus small predicates (each returns a reason, or None when fine).

- Names: `sorry`, `admit`, `sorryAx` as a dotted part of an identifier mean SORRY. An identifier is forbidden when
  a dotted part (with `«»` removed) is in FORBIDDEN_PARTS or starts with `unsafe`, or it starts with `Lean.` + a
  metaprogramming namespace. This covers native evaluation
  (`native_decide`, `decide +native`, `(native := true)`, `Lean.ofReduceBool`), compiler hooks (`implemented_by`,
  `extern`), IO and elaboration-time code (`IO`, `by_elab`, `run_tac`, `Lean.Elab…`, `addDecl`, `evalExpr`) and
  proof-search suggestions (`exact?`). Commands such as `#eval`, `run_cmd`, `macro`, `instance` are not listed here:
  the command allowlist rejects them.
- Names are scanned in identifiers and in name literals (`` `sorryAx ``, ``` ``Lean.Elab.foo ```), which name a
  constant as surely as an identifier does; a syntax quotation (`` `(tactic| …) ``) is metaprogramming: FORBIDDEN.
- Options: `set_option` (plain, `… in` before a command, or inside a proof) only for an option of OPTION_BOUNDS with
  a decimal number in its bounds, or one of BOOLEAN_PREFIXES/BOOLEAN_OPTIONS (`linter.*`, `pp.*`, `tactic.hygienic`)
  with true/false, in any spelling (`«debug».skipKernelTC` is `debug.skipKernelTC`: not allowed). `0` turns a limit
  off (`maxHeartbeats 0` makes a proof that never ends a masked timeout, never a failure), so every bound starts at 1;
  the caps are 10x the trusted header's 400000 heartbeats, the 100000 of maxRecDepth that published proofs use
  (Seed-Prover's miniF2F proofs, `bench/lean/screen_real_proofs.py`), and about 20x Lean's defaults elsewhere
  (synthInstance.maxHeartbeats 20000, …). The boolean ones change which warnings print or whether tactic-made names
  are accessible or how messages print, never what the kernel accepts, and the model's options end with its section,
  before the check and the audit, whose messages are therefore printed under the header's options.
- `open`: only namespaces, optionally `scoped`; no `renaming` or `(…)` (they alias names); `open X hiding a b` only
  when no hidden name is part of an identifier the statement uses (hiding removes names, so the statement reads the
  same; issue 57).
- Syntax that reads characters (`lean_env/tables/raw_syntax.txt`): no `open`/`namespace` that could activate a
  namespace holding such syntax (`open_problem`, `namespace_problem`: ProofWidgets.Jsx), no identifier naming one
  anywhere (`raw_namespace_name`), and no first atom of a global one (RAW_OPENERS: `#help`), except the readers the
  lexer follows (LEXED_READERS).
- Attributes: the names of ALLOWED_ATTRIBUTES, each with only the argument words ATTRIBUTE_ARGS lists for it (and
  numbers): an argument that is a term, a tactic or a rule builder running code (aesop's `tactic`, `(pattern := …)`,
  `(rule_sets := …)`) is FORBIDDEN, since Lean elaborates or runs it while the helper is declared.
- Helper structures (`structure_problem`, issue 57): a proposition (`: Prop`) of fields only, fresh names, no
  attribute but `mk_iff`, no `extends`, `deriving`, universe or self-reference.
- Helpers: modifiers from ALLOWED_MODIFIERS, attributes as above, and a fresh name: no dotted suffix
  of its full name (namespaces included) may equal the theorem's name or an identifier the statement uses, so a
  helper can neither stand in for the theorem nor shadow what the statement means.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, NamedTuple

from lean_env.commands import Command
from lean_env.evaluated import AESOP_BUILDERS, AESOP_PHASES
from lean_env.lexer import Token, name_parts
from lean_env.tables import rows

if TYPE_CHECKING:
    from lean_env.commands import Prefix

DECLARATIONS = frozenset({"theorem", "lemma", "def", "abbrev"})
ALLOWED_MODIFIERS = frozenset({"private", "protected", "noncomputable"})
_PRIORITIES = frozenset({"high", "low", "mid", "default"})
ATTRIBUTE_ARGS: dict[str, frozenset[str]] = {   # attribute -> the words it may take (numbers are always fine)
    "simp": frozenset({"←", "↓", "↑", "<-"}) | _PRIORITIES,
    "reducible": frozenset(), "irreducible": frozenset(), "inline": frozenset(),
    "norm_cast": frozenset({"elim", "move", "squash"}), "push_cast": frozenset(),
    "nolint": frozenset({"unusedArguments", "simpNF", "docBlame", "defLemma", "checkType", "dupNamespace",
                         "unusedHavesSuffices", "synTaut", "explicitVarsOfIff", "fintypeFinite", "ge_or_gt"}),
    # aesop: phase, success probability `50%` or penalty, and the builders that only use the declaration's type
    # (not `tactic`, which runs the helper as TacticM code, nor the term-taking `(pattern := …)`, `(immediate := …)`)
    "aesop": AESOP_PHASES | AESOP_BUILDERS | {"%", "-"},
}
ALLOWED_ATTRIBUTES = frozenset(ATTRIBUTE_ARGS)
HEADER_MAX_HEARTBEATS = 400_000   # DEFAULT_HEADER's `set_option maxHeartbeats`, and the bound of the model's code
OPTION_BOUNDS: dict[str, tuple[int, int]] = {
    "maxHeartbeats": (1, 10 * HEADER_MAX_HEARTBEATS),
    "maxRecDepth": (1, 100_000),
    "synthInstance.maxHeartbeats": (1, 400_000),
    "synthInstance.maxSize": (1, 2_560),
    "exponentiation.threshold": (1, 5_120),
}
ALLOWED_OPTIONS = frozenset(OPTION_BOUNDS)
# options under these may be set to true or false: linters only print warnings, `pp.*` only changes how messages print
# (issue 48: one published pipeline adds pp.* lines to every proof); the model's options end with its section
BOOLEAN_PREFIXES = ("linter.", "pp.")
BOOLEAN_OPTIONS = frozenset({"tactic.hygienic"})   # and these
FORBIDDEN_PARTS = frozenset({
    "native_decide", "native", "ofReduceBool", "ofReduceNat", "reduceBool", "reduceNat", "trustCompiler",
    "implemented_by", "extern", "by_elab", "run_tac", "run_cmd", "run_elab", "run_meta", "evalExpr", "evalConst",
    "addDecl", "addAndCompile", "compileDecl", "IO", "exact?", "apply?", "rw?", "hint?",
    "library_search", "rw_search",   # proof search over the environment: it would find the reference axiom
    "hint", "observe", "observe?", "have?",   # the same search (Mathlib's Hint, Observe, Propose); keywords in Lean,
                                              # so never an honest identifier
    "CoreM", "MetaM", "TermElabM", "TacticM", "CommandElabM", "MacroM",   # metaprograms, also after `open Lean …`
    "_nested",   # the kernel's own names for nested inductives (a clash was a soundness bug, lean4#14616, v4.33)
})
_META = frozenset({"Elab", "Meta", "Environment", "Parser", "Compiler", "IR", "Syntax", "Macro"})


# Syntax that reads characters itself (`lean_env/tables/raw_syntax.txt`, made by `make_tables`). The lexer follows
# doc comments (nested, as `finishCommentBlock`) and interpolated strings (a string holding `{` is an error, and one
# without reads the same either way); any other reader is stopped before it can run: a scoped one by refusing every
# `open`/`namespace` that activates its namespace, a global one at its first atom.
LEXED_READERS = frozenset({"docComment", "interpolatedStr"})


class RawSyntaxRow(NamedTuple):
    """One row of `raw_syntax.txt`: a syntax that reads characters itself, its readers, scope, namespace, category,
    atoms and source module."""

    readers: tuple[str, ...]
    scope: str
    namespace: str
    category: str
    first_atom: str
    atoms: str
    source: str


def raw_syntax_rows() -> list[RawSyntaxRow]:
    """The rows of the shipped `raw_syntax.txt`."""
    return [RawSyntaxRow(tuple(r[0].split(",")), *r[1:]) for r in rows("raw_syntax.txt")]


_UNFOLLOWED = [r for r in raw_syntax_rows() if not set(r.readers) <= LEXED_READERS]
RAW_NAMESPACES = frozenset(tuple(r.namespace.split(".")) for r in _UNFOLLOWED if r.scope == "scoped")
RAW_OPENERS = frozenset(r.first_atom for r in _UNFOLLOWED if r.scope == "global")

_SORRY = re.compile(r"(?m)(?:^|\.)(sorry|admit|sorryAx)(?=\.|$)")
_FORBIDDEN = re.compile("(?m)(?:^|\\.)(" + "|".join(re.escape(p) for p in sorted(FORBIDDEN_PARTS)) +
                        r"|unsafe[^.\n]*|_aux[^.\n]*)(?=\.|$)|^Lean\.(?:" + "|".join(sorted(_META)) + r")(?=\.|$)")


def forbidden_names(idents: list[Token]) -> tuple[Token, str, bool] | None:
    """The first identifier or name literal using a sorry-like name (then True) or else a forbidden one (False), with
    the name.

    One regex pass over the names joined by newlines, with `«»` and a name literal's backticks removed: an escaped
    part such as `«a.b»` is then read as two parts, which can only find more, never less."""
    joined = "\n".join(t.text.lstrip("`") for t in idents).replace("«", "").replace("»", "")
    for pattern, is_sorry in ((_SORRY, True), (_FORBIDDEN, False)):
        m = pattern.search(joined)
        if m:
            return idents[joined.count("\n", 0, m.start())], m.group(1) or m.group(0), is_sorry
    return None


def prefix_problem(prefix: Prefix, statement_uses: frozenset[str] = frozenset()) -> str | None:
    """Why an `open …` or `set_option …` form is not allowed. `open X hiding a b` only hides names, so it is allowed
    when no hidden name is a part of an identifier the statement uses (`statement_uses`): then the statement reads
    the same (issue 57)."""
    args = prefix.tokens[1:]
    if prefix.keyword == "open" and len(args) > 2 and args[1].text == "hiding":
        return _hiding_problem(args, statement_uses)
    if prefix.keyword == "open":
        names = args[1:] if args and args[0].text == "scoped" else args
        if not names or any(t.kind != "ident" or t.text in ("renaming", "hiding", "scoped") for t in names):
            return "only `open A B` (optionally `scoped`, or `… in`) is allowed, not " + \
                " ".join(t.text for t in prefix.tokens)[:80]
        return next(filter(None, (open_problem(name_parts(t.text)) for t in names)), None)
    if len(args) != 2 or args[0].kind != "ident":
        return "malformed `set_option`"
    option = ".".join(name_parts(args[0].text))
    if option.startswith(BOOLEAN_PREFIXES) or option in BOOLEAN_OPTIONS:
        return None if args[1].text in ("true", "false") else f"`set_option {option}` takes true or false"
    if option not in OPTION_BOUNDS:
        return (f"the option `{option}` may not be set (allowed: {', '.join(sorted(OPTION_BOUNDS))}; linter.*, pp.*, "
                "tactic.hygienic with true/false)")
    low, high = OPTION_BOUNDS[option]
    if not (args[1].kind == "num" and args[1].text.isdigit() and low <= int(args[1].text) <= high):
        return f"`set_option {option}` needs a decimal number from {low} to {high}, not `{args[1].text}`"
    return None


def _hiding_problem(args: list[Token], statement_uses: frozenset[str]) -> str | None:
    """Why `open X hiding a b` (`args` after `open`) is not allowed: not one namespace and names, or a hidden name
    that is a part of an identifier of the statement."""
    if any(t.kind != "ident" or t.text in ("renaming", "hiding", "scoped") for t in (args[0], *args[2:])):
        return "only `open X hiding a b` (one namespace, then names) is allowed, not " + \
            " ".join(t.text for t in args)[:80]
    used = {part for name in statement_uses for part in name.split(".")}
    hidden = next((t.text for t in args[2:] if set(name_parts(t.text)) & used), None)
    if hidden is not None:
        return f"`open {args[0].text} hiding {hidden}` hides a name the statement uses (it could change what it means)"
    return open_problem(name_parts(args[0].text))


def open_problem(name: tuple[str, ...]) -> str | None:
    """Why `open <name>` may switch on syntax that reads characters (RAW_NAMESPACES). Lean resolves `name` against
    every enclosing and every open namespace (`resolveNamespace`), so any such namespace that ends with `name` could
    be the one opened."""
    name = name[1:] if name[:1] == ("_root_",) else name
    hit = next((ns for ns in sorted(RAW_NAMESPACES) if ns[-len(name):] == name), None) if name else None
    return None if hit is None else _raw_reason(f"`open {'.'.join(name)}`", hit)


def raw_namespace_name(code: list[Token]) -> tuple[Token, str] | None:
    """The first identifier of `code` (comments left out) that `open` could resolve to a namespace holding syntax that
    reads characters (`open_problem`), wherever it stands, with the reason; the name of a `namespace`/`end` command
    is left to `namespace_problem`, which knows the enclosing namespaces. Fail-closed: Lean's `open` takes every
    identifier after it (`open ProofWidgets trivial ProofWidgets.Jsx` names three), while the command splitter ends
    the list at a tactic word (a column-0 tactic may follow); so the name is refused anywhere, not only in what the
    splitter calls the `open` list. No honest proof names such a namespace (`Jsx`, `ProofWidgets.Jsx`) otherwise."""
    for before, token in zip([None, *code], code):
        if token.kind != "ident" or (before is not None and before.text in ("namespace", "end")):
            continue
        why = open_problem(name_parts(token.text))
        if why:
            return token, why
    return None


def namespace_problem(full_name: tuple[str, ...]) -> str | None:
    """Why entering the namespace `full_name` (its enclosing namespaces included) may switch on syntax that reads
    characters: entering a namespace activates the scoped syntax of it and of each namespace it is in."""
    hit = next((ns for ns in sorted(RAW_NAMESPACES) if full_name[:len(ns)] == ns), None)
    return None if hit is None else _raw_reason(f"`namespace {'.'.join(full_name)}`", hit)


def _raw_reason(what: str, namespace: tuple[str, ...]) -> str:
    return (f"{what} may switch on the scoped syntax of `{'.'.join(namespace)}`, which reads characters the screen "
            "cannot follow (lean_env/tables/raw_syntax.txt)")


def attribute_problem(attribute: list[Token], kind: str = "theorem") -> str | None:
    """Why one `@[…]` (its tokens between the brackets) on a declaration of `kind` (`theorem`, `def`, …) is not
    allowed: an unknown attribute or argument word, or an aesop rule whose builder the declaration's type picks
    (no builder word) on anything but a `theorem`/`lemma` (a proposition: never the tactic builder)."""
    if not attribute:
        return "the attribute `@[]` is not allowed"
    entries: list[list[Token]] = [[]]
    for t in attribute:
        if t.text == ",":
            entries.append([])
        else:
            entries[-1].append(t)
    for entry in entries:
        if not entry or entry[0].text not in ATTRIBUTE_ARGS:
            bad = entry[0].text if entry else ","
            return f"the attribute `{bad}` is not allowed (allowed: {', '.join(sorted(ALLOWED_ATTRIBUTES))})"
        words = ATTRIBUTE_ARGS[entry[0].text]
        bad_arg = next((t for t in entry[1:] if t.kind != "num" and t.text not in words), None)
        if bad_arg is not None:
            allowed = ", ".join(sorted(words)) or "none"
            return (f"`@[{entry[0].text} …]` may not take `{bad_arg.text}` (an attribute argument that is a term, "
                    f"a tactic or a code-running rule builder; allowed words: {allowed})")
        if entry[0].text == "aesop" and kind not in ("theorem", "lemma") and \
                not any(t.text in AESOP_BUILDERS for t in entry):
            return (f"`@[aesop …]` on a `{kind}` needs a builder word ({', '.join(sorted(AESOP_BUILDERS))}): "
                    "without one, aesop's default builder runs a definition of tactic type as a tactic")
    return None


def helper_problem(cmd: Command, full_name: tuple[str, ...], statement_uses: frozenset[str],
                   target: tuple[str, ...]) -> str | None:
    """Why a helper declaration (full name with its namespaces) is not allowed."""
    name = ".".join(full_name)
    bad_mod = next((m.text for m in cmd.modifiers if m.text not in ALLOWED_MODIFIERS), None)
    if bad_mod:
        return f"the modifier `{bad_mod}` is not allowed on `{name}`"
    for attribute in cmd.attributes:
        why = attribute_problem(attribute, cmd.head.text if cmd.head is not None else "")
        if why:
            return why
    if "_root_" in full_name:
        return f"`_root_` is not allowed in the helper name `{name}`"
    for k in range(len(full_name)):
        suffix = full_name[k:]
        if suffix == target:
            return f"the helper `{name}` reuses the theorem's name"
        if ".".join(suffix) in statement_uses:
            return f"the helper `{name}` shadows `{'.'.join(suffix)}`, which the statement uses"
    return None


_STRUCTURE_WORDS = frozenset({"extends", "deriving", "Sort", "class", "mutual", "inductive", "instance"})


def _mk_iff(attribute: list[Token]) -> bool:
    """Whether one `@[…]` is `mk_iff` with at most a name: trusted code that states a lemma about the structure."""
    return bool(attribute) and attribute[0].text == "mk_iff" and (len(attribute) == 1 or (
        len(attribute) == 2 and attribute[1].kind == "ident"))


def structure_problem(cmd: Command, full_name: tuple[str, ...], statement_uses: frozenset[str],
                      target: tuple[str, ...], text: str) -> str | None:
    """Why a helper `structure` is not allowed (issue 57). Allowed: `structure N [binders] : Prop where`, an optional
    `ctor ::` and fields, no modifier, no attribute but Mathlib's `@[mk_iff [name]]` (its lemma's name is fresh
    too), no `extends`/`deriving`, no universe (`.{u}`, `Sort`), and no field type naming `N` (a recursive or nested
    structure is an inductive type the post-v4.9 kernel fixes concern: docs/lean.md, kernel soundness). The name
    and every field's name are fresh as a helper's are, and no field is named like a part of an identifier the
    statement uses."""
    name = ".".join(full_name)
    if cmd.modifiers or any(not _mk_iff(a) for a in cmd.attributes):
        return f"the structure `{name}` may not carry attributes (but `@[mk_iff [name]]`) or modifiers"
    for attribute in cmd.attributes:   # Mathlib's `mk_iff` declares `<n>_iff` (or the name given) beside `N`
        iff = name_parts(attribute[1].text) if len(attribute) == 2 else (full_name[-1][:1].lower() + full_name[-1][1:]
                                                                          + "_iff",)
        why = helper_problem(Command(), (*full_name[:-1], *iff), statement_uses, target)
        if why:
            return why
    bad = next((t.text for t in cmd.body if t.text in _STRUCTURE_WORDS or t.text in (".{", "Type*", "Sort*")), None)
    bad = bad or next((f"Type {u.text}" for t, u in zip(cmd.body, cmd.body[1:])
                       if t.text == "Type" and (u.kind in ("ident", "num") or u.text in ("*", "_", "("))), None)
    if bad is not None:
        return f"the structure `{name}` may not use `{bad}` (only its own fields)"
    if any(t.kind == "ident" and full_name[-1] in name_parts(t.text) for t in cmd.body[1:]):
        return f"the structure `{name}` mentions itself (a recursive or nested inductive type)"
    where = next((i for i, t in enumerate(cmd.body) if t.text == "where"), None)
    if where is None or [t.text for t in cmd.body[max(0, where - 2):where]] != [":", "Prop"]:
        return (f"the structure `{name}` must be a proposition (`structure {full_name[-1]} … : Prop where`): a data "
                "structure's projections and constructor are what known kernel and checker exploits forge")
    fields = [t for i, t in enumerate(cmd.body[where + 1:], where + 1)
                                       if t.kind == "ident" and "\n" in text[cmd.body[i - 1].end:t.start]]
    used = {part for n in statement_uses for part in n.split(".")}
    for field_token in fields:
        why = helper_problem(Command(), (*full_name, *name_parts(field_token.text)), statement_uses, target)
        if why is None and set(name_parts(field_token.text)) & used:
            why = f"the field `{field_token.text}` of `{name}` is named like a part of the statement's identifiers"
        if why:
            return why
    return helper_problem(Command(), full_name, statement_uses, target)


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
