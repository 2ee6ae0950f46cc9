"""`make_tactics`: the tactic names of the import closure (`tactics.txt`), which `split_commands` reads as continuations
of a tactic block at column 0. The tree is built here, as tests/lean_env/test_commands.py does for `make_tables`."""

from lean_env.commands import COMMAND_KEYWORDS, CONTINUATIONS, split_commands
from lean_env.lexer import lex
from lean_env.tables import load
from lean_env.tables.generators.make_tactics import main, tactic_names
from tests.lean_env.tables.lean_trees import mathlib_tree, source_flags

TACTICS = """
syntax (name := casesM) "cases' " term : tactic
macro "by_contra!" t:term : tactic => `(tactic| skip)
scoped syntax "nat_tac" : tactic
local syntax "file_only" : tactic
syntax "ring_nf" : conv
syntax "#cmd" : command
syntax "term_word" term : term
syntax "⟪" term "⟫" : tactic
"""


def test_tactic_names_are_the_leading_words_of_tactic_and_conv_syntax():
    assert tactic_names([TACTICS]) == {"cases'": "global", "by_contra!": "global", "nat_tac": "scoped",
                                       "ring_nf": "global"}


def test_make_tactics_scans_the_import_closure_and_adds_core_names(tmp_path):
    commit = mathlib_tree(tmp_path / "mathlib", {
        "Mathlib.lean": "import Mathlib.Tactics\n",
        "Mathlib/Tactics.lean": TACTICS,
        "Mathlib/NotImported.lean": 'syntax "not_imported" : tactic\n',
    })
    core = "-- core: src/Init/Tactics.lean\n-- format: x\nexact\tglobal\nnat_tac\tglobal\n"
    main([*source_flags(tmp_path, commit, core),
          "--out", str(tmp_path / "tactics.txt")])
    lines = (tmp_path / "tactics.txt").read_text(encoding="utf-8").splitlines()
    assert f"-- mathlib {commit} (Lean leanprover/lean4:v4.9.0)" in lines and "-- core: src/Init/Tactics.lean" in lines
    assert [ln for ln in lines if not ln.startswith("--")] == [
        "by_contra!\tglobal", "cases'\tglobal", "exact\tglobal", "nat_tac\tglobal", "ring_nf\tglobal"]


def test_the_shipped_list_holds_the_tactics_honest_proofs_put_in_column_0():
    shipped = load("tactics.txt")
    for name in ("cases'", "refine'", "simp_rw", "by_contra!", "contrapose!", "induction'", "apply_fun", "subst_vars",
                 "revert", "assumption", "replace", "rcases", "obtain", "nlinarith", "positivity", "_"):
        assert name in shipped and name in CONTINUATIONS, name
    assert len(shipped) > 300


def test_a_command_keyword_in_the_list_still_starts_a_command():
    # `count_heartbeats` is a Mathlib command and tactic; `split_commands` checks command keywords first
    both = sorted(set(load("tactics.txt")) & COMMAND_KEYWORDS)
    assert both == ["count_heartbeats", "count_heartbeats!"]
    text = "theorem t : True := by\n  trivial\ncount_heartbeats in\nlemma u : True := trivial\n"
    heads = [c.head.text for c in split_commands([t for t in lex(text) if t.kind != "comment"], text)]
    assert heads[:2] == ["theorem", "count_heartbeats"]
