"""Generate `tokens.txt` and `commands.txt` from the Lean sources a Mathlib commit builds on.

    python -m lean_env.tables.generators.make_tables --mathlib <git dir> --commit <mathlib commit> \\
        --package batteries=<git dir> --package aesop=<git dir> --package Qq=<git dir> \\
        --package proofwidgets=<git dir> --package importGraph=<git dir> [--out lean_env/tables]

The dependency commits are read from the Mathlib commit's `lake-manifest.json`; every git dir must hold its commit.
Only the modules that `import Mathlib` and `import Aesop` load are scanned (the import closure), since a token of
a module that is not imported is not in Lean's token table. Core Lean's tokens and commands (builtin parsers in
`Lean/Parser/*.lean`, notations in `Init/`, Lake's DSL) come from `core.txt` beside this file: the entries
transcribed from the lean4 sources it cites (the lean4 repository is too large to fetch here). Given a lean4 clone
(`--lean4 <git dir> --lean4-rev v4.9.0`), core's syntax declarations are scanned as well, in the same closure.
Output lines are `<entry>\\t<scope>` (scope `global` or `scoped`), sorted, after `--` header lines naming the sources.
`raw_syntax.txt` lists the syntax of the closure that reads characters itself instead of tokens (`raw_syntax`), and
`scoped_syntax.txt` every scoped syntax declaration with the namespace whose `open` activates it.
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
from dataclasses import dataclass, replace
from pathlib import Path

from lean_env.tables.generators.lean_source import (
    Declaration,
    declarations,
    imports,
    leading_behaviour_categories,
    parser_attributes,
    parser_definitions,
)
from lean_env.tables.generators.raw_syntax import RawSyntax, raw_syntax, readers

_ROOTS = ("Mathlib", "Aesop")           # what the trusted header imports
_IDENT_LIKE = re.compile(r"[^\W\d][\w'!?]*(?:\.[^\W\d][\w'!?]*)*")
_CORE_BOTH = {"tactic", "conv"}         # `Lean.Parser.Category.tactic`/`conv`: `(behavior := both)`
_CORE = {"Init", "Lean", "Lake", "Std"}  # core Lean's module roots (their tokens come from core.txt)


def _git(gitdir: Path, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", str(gitdir), *args], check=True, capture_output=True,
                          text=True).stdout


def _read_tree(gitdir: Path, commit: str) -> dict[str, str]:
    """`{path: text}` of the `.lean` files at `commit` (one `git cat-file --batch` process)."""
    paths = [p for p in _git(gitdir, "ls-tree", "-r", "--name-only", commit).splitlines() if p.endswith(".lean")]
    out = subprocess.run(["git", "--git-dir", str(gitdir), "cat-file", "--batch"], check=True, capture_output=True,
                         input="".join(f"{commit}:{p}\n" for p in paths).encode()).stdout
    files, i = {}, 0
    for p in paths:
        header_end = out.index(b"\n", i)
        size = int(out[i:header_end].split()[2])
        files[p] = out[header_end + 1:header_end + 1 + size].decode("utf-8", "replace")
        i = header_end + 1 + size + 1
    return files


def _closure(modules: dict[str, str]) -> list[str]:
    """Modules reachable by imports from _ROOTS and `Init` (every file without `prelude` imports it), among
    `modules` (`{module: text}`)."""
    seen, todo = set(), [r for r in (*_ROOTS, "Init") if r in modules]
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        seen.add(m)
        todo.extend(i for i in imports(modules[m]) if i in modules and i not in seen)
    return sorted(seen)


def _core(path: Path) -> tuple[dict[str, str], dict[str, str], list[str]]:
    tokens, commands, header = {}, {}, []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("-- format"):
            continue
        if line.startswith("--"):
            header.append(line)
        elif line.strip():
            kind, entry, scope, _ = line.split("\t")
            _add(tokens, entry, scope)
            if kind == "command":
                _add(commands, entry, scope)
    return tokens, commands, header


def _add(table: dict[str, str], entry: str, scope: str) -> None:
    if table.get(entry) != "global":
        table[entry] = scope


def _lean4_modules(gitdir: Path, rev: str) -> dict[str, str]:
    """`{module: text}` of a lean4 checkout: `src/Init/Core.lean` is `Init.Core`, `src/lake/Lake/X.lean` is `Lake.X`."""
    modules = {}
    for p, text in _read_tree(gitdir, rev).items():
        root = next((r for r in ("src/lake/", "src/") if p.startswith(r)), None)
        if root is not None:
            modules[p[len(root):-5].replace("/", ".")] = text
    return modules


@dataclass
class Tables:
    """What one run over the sources found: tokens, commands, the raw-syntax readers and rows, the scoped syntax."""

    tokens: dict[str, str]     # entry -> scope
    commands: dict[str, str]
    header: list[str]
    readers: dict[str, str]    # parser that reads characters -> `<package>:<module>`
    raw: list[RawSyntax]
    scoped: list[tuple[Declaration, str]]


def build(mathlib: Path, commit: str, packages: dict[str, Path], core: Path,
          lean4: tuple[Path, str] | None = None) -> Tables:
    """The tables of the import closure; tokens and commands map an entry to its scope.

    Read are the syntax declarations, the `@[cat_parser] … leading_parser` definitions and the `attribute [cat_parser]`
    commands of the import closure (`_scanned_declarations`). With `lean4` (git dir, revision), core's
    `syntax`/`notation`/... declarations are scanned too; its builtin parsers (`@[builtin_command_parser] …
    leading_parser "theorem "`) are not, so `core` still supplies those."""
    manifest = json.loads(_git(mathlib, "show", f"{commit}:lake-manifest.json"))
    revs = {p["name"]: (p["url"], p["rev"]) for p in manifest["packages"]}
    full = _git(mathlib, "rev-parse", commit).strip()
    tokens, commands, header = _core(core)
    header = [f"-- mathlib {full} (Lean {_git(mathlib, 'show', f'{commit}:lean-toolchain').strip()})", *header]
    modules: dict[str, str] = {}
    owner: dict[str, str] = {}
    if lean4 is not None:
        header.append(f"-- lean4 {_git(lean4[0], 'rev-parse', lean4[1] + '^{commit}').strip()} ({lean4[1]})")
        modules.update(_lean4_modules(*lean4))
        owner.update(dict.fromkeys(modules, "lean4"))
    for name, (url, rev) in sorted(revs.items()):
        if name not in packages:
            header.append(f"-- not scanned: {name} {url} {rev} (no module of it is in the import closure)")
            continue
        header.append(f"-- {name} {url} {rev}")
        for p, text in _read_tree(packages[name], rev).items():
            modules.setdefault(p[:-5].replace("/", "."), text)
            owner.setdefault(p[:-5].replace("/", "."), name)
    for p, text in _read_tree(mathlib, full).items():
        modules[p[:-5].replace("/", ".")] = text
        owner[p[:-5].replace("/", ".")] = "mathlib"
    scanned = _closure(modules)
    external = set() if lean4 else _CORE
    missing = {i for m in scanned for i in imports(modules[m]) if i not in modules and i.split(".")[0] not in external}
    if missing:
        raise SystemExit(f"error: modules not found: {sorted(missing)[:5]} (pass their package with --package)")
    header.append(f"-- {len(scanned)} modules scanned: the import closure of {', '.join(_ROOTS)}")
    both = _CORE_BOTH.union(*(leading_behaviour_categories(modules[m]) for m in scanned))
    for d in _scanned_declarations([modules[m] for m in scanned]):
        if d.scope == "local" or not d.atoms:
            continue
        for k, atom in enumerate(d.atoms):
            if k == 0 and d.leading_atom and d.category in both and _IDENT_LIKE.fullmatch(atom):
                continue   # a non-reserved symbol (`Lean.Elab.Term.toParserDescr.processAtom`)
            _add(tokens, atom, d.scope)
        if d.category == "command":
            _add(commands, d.atoms[0], d.scope)
    closure = {m: (owner[m], modules[m]) for m in scanned}
    found = readers(closure)
    raw, scoped = raw_syntax(closure, found)
    return Tables(tokens, commands, header, found, raw, scoped)


def _scanned_declarations(texts: list[str]) -> list[Declaration]:
    """The syntax declarations and `@[cat_parser]` definitions of `texts`, plus, for each `attribute [cat_parser] n`,
    the declaration named `n` (matched on its last component; a `local` one too) with the attribute's category and
    scope: Lean adds that parser's tokens again, with the attribute's kind (`Lean.Parser.ParserAttribute.add`)."""
    decls = [d for t in texts for d in (*declarations(t), *parser_definitions(t))]
    named: dict[str, list[Declaration]] = {}
    for d in decls:
        named.setdefault(d.name.strip("«»"), []).append(d)
    for t in texts:
        for category, scope, names in parser_attributes(t):
            for n in names:
                decls += [replace(d, category=category, scope=scope)
                          for d in named.get(n.rsplit(".", 1)[-1].strip("«»"), []) if d.name]
    return decls


def write(path: Path, table: dict[str, str], header: list[str]) -> None:
    """Write one `<entry>\t<scope>` table to `path` under `header`, entries sorted."""
    lines = header + ["-- format: <entry>\\t<scope> (global, or scoped: active after `open` of its namespace)"]
    lines += [f"{e}\t{table[e]}" for e in sorted(table)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_syntax(out: Path, tables: Tables) -> None:
    """`raw_syntax.txt` and `scoped_syntax.txt` (see the module docstring), with the tables' header."""
    unused = sorted(n for n, src in tables.readers.items() if n not in {r for x in tables.raw for r in x.readers})
    lines = tables.header + [
        f"-- readers of characters: {len(tables.readers)} parsers ({len(unused)} named by no syntax declaration: "
        + ", ".join(f"{n} ({tables.readers[n]})" for n in unused) + ")",
        "-- format: <readers>\\t<scope>\\t<namespace>\\t<category>\\t<first atom>\\t<atoms>\\t<package>:<module>"]
    (out / "raw_syntax.txt").write_text("\n".join(lines + sorted({x.line() for x in tables.raw})) + "\n",
                                        encoding="utf-8")
    scoped = sorted({"\t".join((d.namespace or "-", d.category or "-", d.atoms[0] if d.atoms else "-",
                                " ".join(d.atoms) or "-", source)) for d, source in tables.scoped})
    lines = tables.header + ["-- format: <namespace>\\t<category>\\t<first atom>\\t<atoms>\\t<package>:<module>"]
    (out / "scoped_syntax.txt").write_text("\n".join(lines + scoped) + "\n", encoding="utf-8")


def add_source_arguments(ap: argparse.ArgumentParser) -> None:
    """The flags naming the Lean sources to scan (make_tables and make_tactics read the same closure)."""
    ap.add_argument("--mathlib", type=Path, required=True, help="git dir of a mathlib4 clone or mirror")
    ap.add_argument("--commit", required=True, help="the Mathlib commit the statements use")
    ap.add_argument("--package", action="append", default=[], help="NAME=GITDIR for each lake-manifest package")


def source_packages(args: argparse.Namespace) -> dict[str, Path]:
    """{name: git dir} of the `--package NAME=GITDIR` flags."""
    return {k: Path(v) for k, _, v in (p.partition("=") for p in args.package)}


def closure_sources(mathlib: Path, commit: str, packages: dict[str, Path],
                    core: Path) -> tuple[list[str], dict[str, tuple[str, str]], list[str]]:
    """What make_meta and make_tactics scan: (header lines naming the sources, {module: (package, text)} of the
    import closure of the Mathlib commit and its `packages`, in closure order, the data lines of the `core` table).
    The header ends with the core table's own comment lines (its format line left out)."""
    manifest = json.loads(_git(mathlib, "show", f"{commit}:lake-manifest.json"))
    full = _git(mathlib, "rev-parse", commit).strip()
    header = [f"-- mathlib {full} (Lean {_git(mathlib, 'show', f'{commit}:lean-toolchain').strip()})"]
    modules: dict[str, tuple[str, str]] = {}
    for p in sorted(manifest["packages"], key=lambda p: p["name"]):
        if p["name"] in packages:
            header.append(f"-- {p['name']} {p['url']} {p['rev']}")
            for path, text in _read_tree(packages[p["name"]], p["rev"]).items():
                modules.setdefault(path[:-5].replace("/", "."), (p["name"], text))
    for path, text in _read_tree(mathlib, full).items():
        modules[path[:-5].replace("/", ".")] = ("mathlib", text)
    scanned = _closure({m: text for m, (_, text) in modules.items()})
    header.append(f"-- {len(scanned)} modules scanned: the import closure of Mathlib, Aesop")
    lines = core.read_text(encoding="utf-8").splitlines()
    header += [ln for ln in lines if ln.startswith("--") and not ln.startswith("-- format")]
    return header, {m: modules[m] for m in scanned}, [ln for ln in lines if ln and not ln.startswith("--")]


def write_names(out: Path, header: list[str], format_line: str, names: dict[str, str]) -> None:
    """`out`: the header lines, the format line, then `<name>\t<value>` for every name, sorted."""
    rows = [f"{n}\t{names[n]}" for n in sorted(names)]
    out.write_text("\n".join([*header, format_line, *rows]) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> None:
    """The CLI (module docstring): write `tokens.txt`, `commands.txt`, `raw_syntax.txt` and `scoped_syntax.txt`."""
    here = Path(__file__).parents[1]  # the shipped tables sit one folder up
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_source_arguments(ap)
    ap.add_argument("--core", type=Path, default=here / "core.txt", help="core Lean's tokens and commands")
    ap.add_argument("--lean4", type=Path, help="git dir of a lean4 clone: also scan core's syntax declarations")
    ap.add_argument("--lean4-rev", default="v4.9.0", help="the lean4 tag or commit to scan (with --lean4)")
    ap.add_argument("--out", type=Path, default=here, help="where tokens.txt and commands.txt go")
    args = ap.parse_args(argv)
    lean4 = (args.lean4, args.lean4_rev) if args.lean4 else None
    tables = build(args.mathlib, args.commit, source_packages(args), args.core, lean4)
    write(args.out / "tokens.txt", tables.tokens, tables.header)
    write(args.out / "commands.txt", tables.commands, tables.header)
    write_syntax(args.out, tables)
    print(f"{len(tables.tokens)} tokens, {len(tables.commands)} commands, {len(tables.raw)} syntax declarations "
          f"reading characters, {len(tables.scoped)} scoped -> {args.out}")


if __name__ == "__main__":
    main()
