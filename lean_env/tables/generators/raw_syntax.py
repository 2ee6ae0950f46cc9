"""Find the syntax of an import closure that reads characters itself instead of Lean's tokens, and the scoped syntax.

A parser built from tokens (`syntax "x" term : cat`) is read by `lean_env.lexer` as Lean reads it once its atoms are
in the token table. A parser that reads characters itself is not: ProofWidgets' JSX text (`jsxText`, a `ParserFn`
over `takeWhile1Fn`) takes quotes and comment openers as text, so where Lean reads text the lexer reads a string or
a comment, and the two disagree about where commands start. `raw_syntax(modules)` finds such syntax:
1. readers: core Lean's parsers of that kind that syntax names directly (CORE_READERS), every definition whose body
   calls a character-level function of `Lean.Parser.Basic` (CHARACTER_FUNCTIONS), then every definition whose body
   names a reader, to a fixpoint (`Mathlib.Util.Superscript`: `superscript` -> `scriptParser` -> `takeWhile1Fn`);
2. the syntax declarations (`syntax`, `macro`, `notation`…, `@[cat_parser]` definitions) whose signature names a
   reader or a category that holds one (a category declared in the closure, to a fixpoint; core's `term`, `tactic`…
   are reachable anyway and are not followed), each with the readers it reaches, its scope and namespace.
A scoped one is active only where its namespace is open (`open NS`, `open NS in`, `namespace NS`), which is what the
screen must refuse (`lean_env.rules`); a global one from its leading atom on.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from lean_env.tables.generators.lean_source import Declaration, declarations, definitions, parser_definitions

CHARACTER_FUNCTIONS = frozenset({   # `Lean.Parser.Basic`: the functions that read the input string itself
    "takeWhileFn", "takeWhile1Fn", "takeUntilFn", "satisfyFn", "satisfySymbolFn", "chFn", "rawFn", "rawCh",
    "strLitFnAux", "charLitFnAux", "numberFnAux", "identFn", "identFnAux", "mkIdResult", "finishCommentBlock",
    "whitespace", "mkNodeToken", "quotedCharFn", "quotedCharCoreFn", "hexDigitFn", "decimalNumberFn", "ParserFn",
})
CORE_READERS = {   # core Lean's own readers of characters that syntax declarations name (`Lean.Parser.Basic`/`Extra`)
    "interpolatedStr": "s!\"…{e}…\": string text and `{` term `}` (`interpolatedStrFn`)",
    "docComment": "/-- … -/ (`finishCommentBlock`, nested)",
    "rawIdent": "an identifier read without the token table (`identFn`)",
}
_CATEGORY = re.compile(r"^[ \t]*(?:scoped |local )?declare_syntax_cat\s+(\S+)", re.M)


@dataclass(frozen=True)
class RawSyntax:
    """A syntax declaration that reaches a character-reading parser, with those readers and its source module."""

    readers: tuple[str, ...]   # the readers it reaches, sorted
    declaration: Declaration
    source: str                # `<package>:<module>`

    def line(self) -> str:
        """Its row of `raw_syntax.txt` (tab-separated, `-` for an empty field)."""
        d = self.declaration
        return "\t".join((",".join(self.readers), d.scope, d.namespace or "-", d.category or "-",
                          d.atoms[0] if d.atoms else "-", " ".join(d.atoms) or "-", self.source))


def _last(word: str) -> str:
    return word.rsplit(".", 1)[-1].strip("«»")


def readers(modules: dict[str, tuple[str, str]]) -> dict[str, str]:
    """`{name: source}` of the definitions of `{module: (package, text)}` that read characters (a name is its last
    component; source `<package>:<module>`), plus CORE_READERS (source `core`)."""
    defs = [(_last(name), {_last(w) for w in words}, f"{package}:{module}")
            for module, (package, text) in sorted(modules.items()) for name, words in definitions(text)]
    found = dict.fromkeys(CORE_READERS, "core")
    found.update((name, source) for name, words, source in defs if words & CHARACTER_FUNCTIONS)
    grown = True
    while grown:
        new = {name: source for name, words, source in defs if name not in found and not words.isdisjoint(found)}
        found.update(new)
        grown = bool(new)
    return found


def raw_syntax(modules: dict[str, tuple[str, str]], found: dict[str, str]) -> tuple[list[RawSyntax],
                                                                                 list[tuple[Declaration, str]]]:
    """`(raw, scoped)` for `{module: (package, text)}` and its `readers`: the syntax reaching a reader of characters
    (see the module docstring), and every scoped syntax declaration with its source `<package>:<module>`; local ones
    are skipped."""
    texts = [text for _, text in modules.values()]
    categories = {c for text in texts for c in _CATEGORY.findall(text)}
    decls = [(d, f"{package}:{module}") for module, (package, text) in sorted(modules.items())
             for d in (*declarations(text), *parser_definitions(text)) if d.scope != "local"]
    reach: dict[str, set[str]] = {r: {r} for r in found}   # reader or closure category -> readers it leads to
    grown = True
    while grown:
        grown = False
        for d, _ in decls:
            got = set().union(*(reach.get(_last(w), set()) for w in d.words))
            if d.category in categories and not got <= reach.setdefault(d.category, set()):
                reach[d.category] |= got
                grown = True
    raw = [RawSyntax(tuple(sorted(got)), d, source) for d, source in decls
           if (got := set().union(*(reach.get(_last(w), set()) for w in d.words)))]
    return raw, [(d, source) for d, source in decls if d.scope == "scoped"]
