"""Generate `tactics.txt`: the tactic names of the import closure, which `split_commands` reads as continuations.

    python -m lean_env.tables.generators.make_tactics --mathlib <git dir> --commit <mathlib commit> \\
        --package batteries=<git dir> --package aesop=<git dir> --package Qq=<git dir> \\
        --package proofwidgets=<git dir> --package importGraph=<git dir> [--core lean_env/tables/core_tactics.txt]

A tactic's leading word (`cases'`, `simp_rw`, `by_contra!`) is no token: the `tactic` and `conv` categories read it
as an identifier (`(behavior := both)`, `Lean.Elab.Term.toParserDescr.processAtom`), so `tokens.txt` cannot list it.
This scan reads the same syntax declarations as `make_tables` (same closure, same `lean_source` reader) and keeps the
first atom of each `tactic`/`conv` declaration when it is identifier-like. Core Lean's tactics come from
`core_tactics.txt` (transcribed from the lean4 source its header names, as `core.txt` is: no lean4 tree is scanned).
Output lines are `<name>\\t<scope>`, sorted, after `--` header lines naming the sources.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from lean_env.tables.generators.lean_source import declarations, parser_definitions
from lean_env.tables.generators.make_tables import (
    _IDENT_LIKE,
    add_source_arguments,
    closure_sources,
    source_packages,
    write_names,
)

_CATEGORIES = frozenset({"tactic", "conv"})


def tactic_names(texts: list[str]) -> dict[str, str]:
    """`{name: scope}` of the identifier-like leading atoms of the tactic and conv syntax of `texts` (a `local`
    declaration is left out: it is active only in its own file)."""
    names: dict[str, str] = {}
    for text in texts:
        for d in (*declarations(text), *parser_definitions(text)):
            if d.category in _CATEGORIES and d.leading_atom and d.atoms and \
                    d.scope != "local" and _IDENT_LIKE.fullmatch(d.atoms[0]):
                if names.get(d.atoms[0]) != "global":
                    names[d.atoms[0]] = d.scope
    return names


def build(mathlib: Path, commit: str, packages: dict[str, Path], core: Path) -> tuple[dict[str, str], list[str]]:
    """(tactic names, header lines) of the import closure of the Mathlib commit, plus core's (`core`)."""
    header, modules, core_rows = closure_sources(mathlib, commit, packages, core)
    names = tactic_names([text for _, text in modules.values()])
    for name, _, scope in (row.partition("\t") for row in core_rows):
        if names.get(name) != "global":
            names[name] = scope
    return names, header


def main(argv: list[str] | None = None) -> None:
    """The CLI (module docstring): write `tactics.txt`."""
    here = Path(__file__).parents[1]  # the shipped tables sit one folder up
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_source_arguments(ap)
    ap.add_argument("--core", type=Path, default=here / "core_tactics.txt", help="core Lean's tactic names")
    ap.add_argument("--out", type=Path, default=here / "tactics.txt")
    args = ap.parse_args(argv)
    names, header = build(args.mathlib, args.commit, source_packages(args), args.core)
    write_names(args.out, header,
                "-- format: <tactic name>\\t<scope> (global, or scoped: active after `open` of its namespace)", names)
    print(f"{len(names)} tactic names -> {args.out}")


if __name__ == "__main__":
    main()
