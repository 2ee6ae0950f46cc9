"""Lean's token and command tables as data (`tokens.txt`, `commands.txt`), its tactic names (`tactics.txt`: a
tactic's leading word is no token), the syntax that reads characters itself (`raw_syntax.txt`, `scoped_syntax.txt`)
and the meta-level API (`meta_names.txt`), all made from the sources by the build-time generators in `generators`
(`make_tables`, `make_tactics`, `make_meta`), which run from a checkout and are not part of the wheel. Nothing at
run time imports them: the screen reads the tables through `load` and `rows` below.

`load(name)` reads one table: the `--` lines are the header (sources and commits), every other line is
`<entry>\t<scope>` with scope `global` or `scoped` (active only after `open <namespace>`).
"""
from __future__ import annotations

from importlib.resources import files


def load(name: str) -> dict[str, str]:
    """`{entry: scope}` of the table file `name` shipped in this package (`tokens.txt`, `commands.txt`,
    `tactics.txt`)."""
    table = {}
    for line in files(__package__).joinpath(name).read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("--"):
            entry, _, scope = line.partition("\t")
            table[entry] = scope
    return table


def rows(name: str) -> list[list[str]]:
    """The tab-separated rows of the table file `name` (`raw_syntax.txt`, `scoped_syntax.txt`), header skipped."""
    text = files(__package__).joinpath(name).read_text(encoding="utf-8")
    return [line.split("\t") for line in text.splitlines() if line and not line.startswith("--")]
