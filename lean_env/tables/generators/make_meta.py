"""Generate `meta_names.txt`: the meta-level API of the import closure (elaborator, meta, core, environment, IO,
message log), which the screen refuses to let model code name or open.

    python -m lean_env.tables.generators.make_meta --mathlib <git dir> --commit <mathlib commit> \\
        --package batteries=<git dir> --package aesop=<git dir> --package Qq=<git dir> \\
        --package proofwidgets=<git dir> --package importGraph=<git dir> [--core lean_env/tables/core_meta.txt]

A declaration is meta-level when its signature or body names a meta type: one of core's monads and state types
(SEEDS: `MetaM`, `TacticM`, `TermElabM`, `CommandElabM`, `CoreM`, `MacroM`, `AttrM`, `SimpM`, `DelabM`, `ImportM`,
`IO`, `EIO`, `BaseIO`, `Environment`, `MessageLog`, and core's elaborator type abbreviations ELABORATOR_TYPES:
`Tactic`, `TermElab`, `CommandElab`, `Macro`, `Delab`, `Unexpander`, `Simproc`, …) or a type-like declaration (a
structure, class, inductive, or an upper-case `def`/`abbrev`) of the closure that is itself meta-level and whose last
name part is declared only once in the closure (a word as common as `State` or `Config` would make everything meta),
to a fixed point: so `Linarith.Preprocessor` (a structure whose field is a `MetaM` function) is meta, and so is every
declaration that mentions it; a meta type whose last part is declared more than once (a local `abbrev M := ReaderT
Context AtomM`) makes meta only the declarations of its own namespace that name it. Identifiers are compared by their
last name part (`Meta.Simp.Config` as `Config`). `private` declarations cannot be named from another file and are
left out. Core Lean is not scanned (no lean4 tree can be read here, see `core.txt`): `core_meta.txt` names core's
meta-level namespaces and root functions, transcribed.
Output: header lines, then `<full name>\\t<package>:<module>` per meta-level declaration, sorted; the core entries are
written with source `core`. The screen (`lean_env.rules.meta_name_problem`) refuses an identifier that resolves into
one of these names and an `open`/`namespace` of a namespace that holds one.
"""
from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path

from lean_env.tables.generators.lean_source import namespaces
from lean_env.tables.generators.make_tables import add_source_arguments, closure_sources, source_packages, write_names
from lean_env.tables.generators.source_lexemes import lexemes

# core's elaborator type abbreviations (issue 57): `def evalFoo : Tactic := …` names no monad, yet its value is
# TacticM code (`Tactic` is `Syntax → TacticM Unit`); likewise term and command elaborators, macros, delaborators,
# unexpanders, simprocs and simp dischargers, parenthesizers, formatters and parsers
ELABORATOR_TYPES = frozenset({"Tactic", "TermElab", "CommandElab", "Macro", "Delab", "Unexpander", "UnexpandM",
                              "Simproc", "DSimproc", "Discharge", "Parenthesizer", "ParenthesizerM", "Formatter",
                              "FormatterM", "Parser", "ParserFn", "TrailingParser"})
SEEDS = frozenset({"MetaM", "TacticM", "TermElabM", "CommandElabM", "CoreM", "MacroM", "AttrM", "SimpM", "DelabM",
                   "ImportM", "IO", "EIO", "BaseIO", "Environment", "MessageLog"}) | ELABORATOR_TYPES
_KINDS = frozenset({"def", "abbrev", "structure", "class", "inductive", "opaque"})
_TYPE_KINDS = frozenset({"structure", "class", "inductive"})
_LINE_PREFIX = re.compile(r"[ \t]*(?:@\[[^\]\n]*\][ \t\n]*)?(?:(?:noncomputable|protected|partial|unsafe|nonrec|"
                          r"scoped|local|class)\s+)*")


def declared(text: str) -> list[tuple[str, str, frozenset[str]]]:
    """`(full name, kind, words)` of each non-private `def`/`abbrev`/`structure`/`class`/`inductive`/`opaque` of one
    file that starts a line (after attributes and modifiers): its name in its namespace (`_root_.` removed) and the
    last components of the identifiers up to the next line starting in column 0."""
    lex, out = lexemes(text), []
    at = namespaces(text, lex)
    for k, t in enumerate(lex):
        if t.kind != "word" or t.text not in _KINDS or k + 1 >= len(lex) or lex[k + 1].kind != "word":
            continue
        line_start = text.rfind("\n", 0, t.start) + 1
        if not _LINE_PREFIX.fullmatch(text, line_start, t.start):
            continue
        end = k + 2
        while end < len(lex) and text[lex[end].start - 1:lex[end].start] not in ("\n", ""):
            end += 1
        name = lex[k + 1].text.replace("«", "").replace("»", "")
        space = at(t.start)
        full = name[len("_root_."):] if name.startswith("_root_.") else f"{space}.{name}" if space else name
        words = frozenset(w.text.rsplit(".", 1)[-1] for w in lex[k + 2:end] if w.kind == "word")
        out.append((full, t.text, words))
    return out


def meta_declarations(modules: dict[str, tuple[str, str]]) -> dict[str, str]:
    """`{full name: "<package>:<module>"}` of the meta-level declarations of `modules` (`{module: (package,
    text)}`), to the fixed point described in the module docstring. A meta type whose last name part is declared
    more than once (a local `abbrev M := ReaderT Context AtomM`) still makes meta every declaration in its own
    namespace that names it (issue 57: `def rewrite … : M Simp.Result` beside that `M`)."""
    decls = [(full, kind, words, f"{pkg}:{m}") for m, (pkg, text) in modules.items()
             for full, kind, words in declared(text)]
    declared_as = Counter(full.rsplit(".", 1)[-1] for full, _, _, _ in decls)
    meta_words, found = set(SEEDS), {}
    local: dict[str, set[str]] = {}   # a meta type's last part -> the namespaces it is meta in
    while True:
        new = {full: src for full, kind, words, src in decls if full not in found and
               (words & meta_words or _names_local(full, words, local))}
        if not new:
            return found
        found.update(new)
        for full, kind, _, _ in decls:   # a meta type, when its last name part is declared once (`State` is not)
            space, _, last = full.rpartition(".")
            if full in new and (kind in _TYPE_KINDS or last[:1].isupper()):
                if declared_as[last] == 1:
                    meta_words.add(last)
                elif space:
                    local.setdefault(last, set()).add(space)


def _names_local(full: str, words: frozenset[str], local: dict[str, set[str]]) -> bool:
    """Whether the declaration `full` names a meta type declared in its own namespace or one enclosing it."""
    space = full.rpartition(".")[0]
    return any(space == ns or space.startswith(ns + ".") for w in words & local.keys() for ns in local[w])


def build(mathlib: Path, commit: str, packages: dict[str, Path], core: Path) -> tuple[dict[str, str], list[str]]:
    """(meta-level names with their sources, header lines) of the import closure of the Mathlib commit plus core's."""
    header, modules, core_rows = closure_sources(mathlib, commit, packages, core)
    names = meta_declarations(modules)
    names.update({row.split("\t")[0]: "core" for row in core_rows})
    return names, header


def main(argv: list[str] | None = None) -> None:
    """The CLI (module docstring): write `meta_names.txt`."""
    here = Path(__file__).parents[1]  # the shipped tables sit one folder up
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_source_arguments(ap)
    ap.add_argument("--core", type=Path, default=here / "core_meta.txt", help="core Lean's meta-level names")
    ap.add_argument("--out", type=Path, default=here / "meta_names.txt")
    args = ap.parse_args(argv)
    names, header = build(args.mathlib, args.commit, source_packages(args), args.core)
    write_names(args.out, header, "-- format: <full name>\\t<package>:<module> (core: transcribed, core_meta.txt)",
                names)
    print(f"{len(names)} meta-level names -> {args.out}")


if __name__ == "__main__":
    main()
