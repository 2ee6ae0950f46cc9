"""Read syntax declarations out of Lean 4 source text: the atoms (tokens) they add and the commands they define.

Contract: `declarations(text)` never raises and returns, for every `syntax`, `macro`, `elab`, `notation`,
`notation3`, `infix`/`infixl`/`infixr`, `prefix`, `postfix` and `binder_predicate` command of `text` (comments
skipped), its atoms in order, its category (`term` for the notation forms) and its scope. How Lean reads them
(`Lean.Elab.Syntax`, `Lean.Elab.Notation`, `Lean.Elab.Mixfix`, Lean 4.9): each `"…"` atom becomes a token after
trimming whitespace (`Lean.Parser.symbol`); `&"…"` is a non-reserved symbol and adds no token; the signature ends at
the category's `:` (`syntax`) or at `=>` (the others), outside parentheses. A `local` declaration is active only in
its own file, so it is skipped; `scoped`/`scoped[NS]` ones are active only in a namespace that is open.

`parser_definitions(text)` reads `@[cat_parser] def … := leading_parser …` definitions the same way (their atoms are
the string literals Lean coerces to `symbol`), and `parser_attributes(text)` the `attribute [cat_parser] n` commands
that add a parser declared elsewhere to a category, tokens included (`Lean.Parser.ParserAttribute.add`).
"""
from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass

from lean_env.tables.generators.source_lexemes import Lexeme, lexemes

HEADS = frozenset({"syntax", "macro", "elab", "notation", "notation3", "infix", "infixl", "infixr", "prefix", "postfix",
                   "binder_predicate"})
_PREFIX = re.compile(r"(?:\s*(?:/-.*?-/|@\[[^\]]*\]|scoped\[[^\]]*\]|scoped|local|private|protected|"
                     r"set_option\s+\S+\s+\S+\s+in|open\s[^\n]*?\sin))*\s*")


@dataclass(frozen=True)
class Declaration:
    """One syntax declaration of Lean source: its head, atoms, category, scope and the names it uses."""

    head: str                  # `syntax`, `notation`, ...
    atoms: tuple[str, ...]     # trimmed `"…"` atoms of the signature, in order, empty ones dropped
    category: str              # `term` for notation/infix/prefix/postfix/binder_predicate
    scope: str                 # global, scoped or local
    leading_atom: bool         # whether the signature starts with an atom (Lean's `first` atom)
    name: str = ""             # `(name := n)` of a syntax declaration, the defined name of a parser definition
    words: tuple[str, ...] = ()  # the identifiers of the signature or body: the parsers and categories it uses
    namespace: str = ""        # the namespace it was declared in (`scoped[NS]`: NS), whose `open` activates it


def _options_end(lex: list[Lexeme], k: int) -> int:
    """Skip `:prec` and `(name := …)`/`(priority := …)`-style options after a head at `k - 1`."""
    if k < len(lex) and lex[k].text == ":" and not lex[k].spaced:
        k += 2
    while k + 2 < len(lex) and lex[k].text == "(" and lex[k + 1].kind == "word" and lex[k + 2].text == ":=":
        depth = 0
        while k < len(lex):
            depth += {"(": 1, ")": -1}.get(lex[k].text, 0) if lex[k].kind == "sym" else 0
            k += 1
            if depth == 0:
                break
    return k


def _signature(lex: list[Lexeme], head: str, k: int, text: str) -> tuple[list[Lexeme], str, int] | None:
    """The lexemes of the signature from `k`, its category and the index after it; None if it never ends.

    `syntax name := stx` (a syntax abbreviation, no category) ends where the next command starts in column 0."""
    if head == "syntax" and k + 1 < len(lex) and lex[k].kind == "word" and lex[k + 1].text == ":=":
        j = k + 2
        while j < len(lex) and lex[j].start > 0 and text[lex[j].start - 1] != "\n":
            j += 1
        return lex[k + 2:j], "", j
    depth, category, limit = 0, "term", min(len(lex), k + 2000)
    for j in range(k, limit):
        t = lex[j]
        if t.kind == "sym" and t.text in "([{":
            depth += 1
        elif t.kind == "sym" and t.text in ")]}":
            depth -= 1
        elif depth == 0 and t.kind == "sym" and t.text == ":" and t.spaced and j + 1 < len(lex):
            category = lex[j + 1].text
            if head == "syntax":
                return lex[k:j], category, j + 2
        elif depth == 0 and t.text == "=>" and head != "syntax":
            return lex[k:j], category, j + 1
    return None


def declarations(text: str) -> list[Declaration]:
    """The syntax declarations of one Lean file; see the module docstring."""
    lex, out = lexemes(text), []
    at = namespaces(text, lex)
    k = 0
    while k < len(lex):
        t = lex[k]
        line_start = text.rfind("\n", 0, t.start) + 1
        if t.kind != "word" or t.text not in HEADS or not _PREFIX.fullmatch(text, line_start, t.start):
            k += 1
            continue
        before = text[line_start:t.start]
        scope = "local" if re.search(r"\blocal\b", before) else "scoped" if "scoped" in before else "global"
        explicit = re.search(r"scoped\[\s*([^\]\s]+)\s*\]", before)   # Mathlib's `scoped[NS]`: a root namespace
        namespace = explicit.group(1).removeprefix("_root_.") if explicit else at(t.start)
        first = _options_end(lex, k + 1)
        sig = _signature(lex, t.text, first, text)
        if sig is None:
            k += 1
            continue
        body, category, k_next = sig
        atoms = tuple(a.text.strip() for a in body if a.kind == "str" and a.text.strip())
        named = len(body) > 2 and body[0].kind == "word" and body[1].text == ":" and not body[1].spaced
        leading = body[2 if named else 0].kind == "str" if body else False   # `tk:"#conv "` names the atom
        name = next((lex[j + 2].text for j in range(k + 1, first - 2)
                     if lex[j].text == "name" and lex[j + 1].text == ":="), "")
        words = tuple(a.text for a in body if a.kind == "word")
        out.append(Declaration(t.text, atoms, category, scope, leading, name, words, namespace))
        k = k_next
    return out


_SCOPE_PREFIX = re.compile(r"[ \t]*(?:(?:noncomputable|private|public)\s+)*")
_PARSER_ATTR = re.compile(r"(?!builtin_)(\w+)_parser")
# Functions whose `String` argument is a message, an antiquotation name or a non-reserved symbol, not a token
# (`Lean.Parser.Basic`/`Extra`: their `ParserInfo` has no `collectTokens`, or they take no parser from the string).
_NOT_TOKEN_HEADS = frozenset({"nonReservedSymbol", "nonReservedSymbolNoAntiquot", "checkColGt", "checkColGe",
                              "checkColEq", "checkLineEq", "checkWsBefore", "checkNoWsBefore", "checkLinebreakBefore",
                              "errorAtSavedPos", "notFollowedBy", "mkAntiquot", "mkAntiquotSplice"})
_DEF_MODIFIERS = frozenset({"private", "protected", "noncomputable", "partial", "unsafe", "nonrec"})


def _attributes(lex: list[Lexeme], k: int) -> tuple[list[tuple[str, str]], int]:
    """`(category, scope)` of each `X_parser` attribute in the `@[…]` opening at `k`, and the index after `]`."""
    depth, j, parts, part = 0, k + 2, [], []
    while j < len(lex) and not (depth == 0 and lex[j].text == "]"):
        t = lex[j]
        depth += {"[": 1, "(": 1, "]": -1, ")": -1}.get(t.text, 0) if t.kind == "sym" else 0
        if depth == 0 and t.text == ",":
            parts, part = parts + [part], []
        else:
            part.append(t.text)
        j += 1
    return [a for a in map(_parser_attribute, parts + [part]) if a], j + 1


def _parser_attribute(words: list[str]) -> tuple[str, str] | None:
    """`(category, scope)` of one attribute instance (`scoped term_parser high`), None if no `X_parser`."""
    scope = words[0] if words and words[0] in ("scoped", "local") else "global"
    words = words[scope != "global":]
    m = _PARSER_ATTR.fullmatch(words[0]) if words else None
    return (m.group(1), scope) if m else None


def _parser_atoms(body: list[Lexeme]) -> tuple[str, ...]:
    """The tokens a `leading_parser` body adds (`Parser.info.collectTokens`): every `"…"` literal, trimmed, since a
    string is coerced to `symbol` (and `unicodeSymbol "λ" "fun"` adds both), except the arguments of a function in
    _NOT_TOKEN_HEADS (the head of the application the literal is an argument of) and `&"…"` (non-reserved)."""
    atoms = []
    for j, t in enumerate(body):
        if t.kind != "str" or not t.text.strip():
            continue
        i, depth = j - 1, 0
        while i >= 0:   # back to the application's head: over arguments and (…) groups, stop at an operator
            b = body[i]
            if b.kind == "sym" and b.text in ")]}":
                depth += 1
            elif b.kind == "sym" and b.text in "([{" and depth:
                depth -= 1
            elif not depth and (b.kind == "sym" or b.text == "fun"):
                break
            i -= 1
        if body[i + 1].text.rsplit(".", 1)[-1] not in _NOT_TOKEN_HEADS:
            atoms.append(t.text.strip())
    return tuple(atoms)


def parser_definitions(text: str) -> list[Declaration]:
    """`@[cat_parser] def name := leading_parser[:prec] body` (or `trailing_parser`) definitions of one file, as
    declarations of category `cat` whose atoms are `_parser_atoms(body)`; the body ends at the next line that starts
    in column 0. `builtin_cat_parser` (core Lean's own, supplied by core.txt) is not read. Lean adds these tokens as
    written (`Lean.Parser.ParserAttribute.add`): no leading identifier-like atom becomes non-reserved, so
    `leading_atom` is False."""
    lex, out, k = lexemes(text), [], 0
    at = namespaces(text, lex)
    while k + 1 < len(lex):
        if not (lex[k].text == "@" and lex[k + 1].text == "["):
            k += 1
            continue
        attrs, k = _attributes(lex, k)
        while k < len(lex) and lex[k].text in _DEF_MODIFIERS:
            k += 1
        if not attrs or k + 1 >= len(lex) or lex[k].text not in ("def", "abbrev"):
            continue
        name, j = lex[k + 1].text, k + 2
        while j < len(lex) and lex[j].text != ":=" and j < k + 50:
            j += 1
        if j + 1 >= len(lex) or lex[j + 1].text not in ("leading_parser", "trailing_parser"):
            continue
        end = j + 2
        while end < len(lex) and text[lex[end].start - 1:lex[end].start] not in ("\n", ""):
            end += 1
        atoms = _parser_atoms(lex[j + 2:end])
        words = tuple(a.text for a in lex[j + 2:end] if a.kind == "word")
        out.extend(Declaration(lex[j + 1].text, atoms, cat, scope, False, name, words, at(lex[k].start))
                   for cat, scope in attrs)
        k = end
    return out


def parser_attributes(text: str) -> list[tuple[str, str, tuple[str, ...]]]:
    """`(category, scope, names)` of each `attribute [cat_parser] n₁ n₂` command: it adds the parsers `nᵢ`, declared
    elsewhere (a `local syntax (name := nᵢ)` too), to `cat` with their tokens (`Lean.Parser.ParserAttribute.add`)."""
    out = []
    for m in re.finditer(r"^(local |scoped )?attribute\s*\[([^\]]*)\]([^\n]*)", text, re.M):
        names = tuple(m.group(3).split("--")[0].split())
        for attr in m.group(2).split(","):
            a = _parser_attribute(((m.group(1) or "").split()) + attr.split())
            if a:
                out.append((*a, names))
    return out


def namespaces(text: str, lex: list[Lexeme] | None = None) -> Callable[[int], str]:
    """`at(offset)`: the namespace open at `offset` of `text`, from its `namespace X` / `section [X]` / `end [X]`
    commands at the start of a line. As in Lean, `namespace A.B` opens one scope per component and `end A.B` closes
    as many (`end B` then `end A` works too); a section, `section A.B` or `mutual … end` opens scopes without a
    namespace."""
    changes, stack = [(0, "")], []   # stack: (namespace component or "", scopes it counts for)
    lex = lexemes(text) if lex is None else lex
    for k, t in enumerate(lex):
        if t.kind != "word" or t.text not in ("namespace", "section", "mutual", "end") or \
                not _SCOPE_PREFIX.fullmatch(text, text.rfind("\n", 0, t.start) + 1, t.start):
            continue
        arg = lex[k + 1].text if k + 1 < len(lex) and lex[k + 1].kind == "word" and t.text != "mutual" else ""
        parts = [p.strip("«»") for p in arg.split(".")] if arg else []
        if t.text == "namespace":
            stack.extend((p, 1) for p in parts)
        elif t.text in ("section", "mutual"):
            stack.append(("", max(1, len(parts))))
        else:
            closes = max(1, len(parts))
            while closes > 0 and stack:
                closes -= stack.pop()[1]
        changes.append((t.start, ".".join(p for p, _ in stack if p)))
    starts = [c[0] for c in changes]
    return lambda offset: changes[bisect.bisect_right(starts, offset) - 1][1]


def definitions(text: str) -> list[tuple[str, tuple[str, ...]]]:
    """`(name, words)` of each `def`/`abbrev` of one file: its name and the identifiers of its body (up to the next
    line that starts in column 0), from which `raw_syntax` tells which parsers read characters themselves."""
    lex, out = lexemes(text), []
    for k, t in enumerate(lex):
        if t.kind != "word" or t.text not in ("def", "abbrev") or k + 1 >= len(lex) or lex[k + 1].kind != "word":
            continue
        end = k + 2
        while end < len(lex) and text[lex[end].start - 1:lex[end].start] not in ("\n", ""):
            end += 1
        words = tuple(a.text for a in lex[k + 2:end] if a.kind == "word")
        out.append((lex[k + 1].text, words))
    return out


def leading_behaviour_categories(text: str) -> set[str]:
    """Categories declared with `(behavior := both|symbol)`: their leading identifier-like atom is no token."""
    return set(re.findall(r"declare_syntax_cat\s+(\S+)[^\n]*\(behavior\s*:=\s*(?:both|symbol)\)", text))


def imports(text: str) -> list[str]:
    """The modules a file imports: the `import X` pairs of its header (after an optional `prelude`)."""
    lex = lexemes(text)
    k = 1 if lex and lex[0].text == "prelude" else 0
    out = []
    while k + 1 < len(lex) and lex[k].text == "import" and lex[k + 1].kind == "word":
        out.append(lex[k + 1].text)
        k += 2
    return out
