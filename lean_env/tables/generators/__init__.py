"""Build time only, not in the wheel: the generators that refresh the shipped tables of `lean_env.tables` from a
checkout of the Lean sources. `make_tables` (`tokens.txt`, `commands.txt`, `raw_syntax.txt`, `scoped_syntax.txt`),
`make_tactics` (`tactics.txt`) and `make_meta` (`meta_names.txt`), over `lean_source` (the syntax declarations of
Lean source text), `source_lexemes` (its reader) and `raw_syntax` (the syntax that reads characters itself).
"""
