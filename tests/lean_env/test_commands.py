"""Lean's command table: generated from syntax declarations (lean_env.tables), and split_commands starting a command at
each of its keywords."""
import subprocess

import pytest

from lean_env import screen
from lean_env.commands import COMMAND_KEYWORDS, split_commands
from lean_env.lexer import lex
from lean_env.tables import load
from lean_env.tables.generators.lean_source import declarations, imports, parser_attributes, parser_definitions
from lean_env.tables.generators.make_tables import main
from tests.lean_env.tables.lean_trees import git_tree, mathlib_tree, source_flags

ST = "theorem t1 (x : ℝ) (h : x = 2) : x + 1 = 3 := by\n"
OK = "theorem t1 (x : ℝ) (h : x = 2) : x + 1 = 3 := by\n  subst h\n  norm_num"


def heads(text):
    code = [t for t in lex(text) if t.kind != "comment"]
    return [c.head.text if c.head else None for c in split_commands(code, text)]


@pytest.mark.parametrize("keyword", ["variables", "unif_hint", "include", "omit", "parameter", "assert_instance",
                                     "lemma", "irreducible_def", "theorem", "instance", "#check", "open private",
                                     "compile_inductive%", "notation3", "scoped", "alias", "sudo"])
def test_the_table_has_core_batteries_and_mathlib_commands(keyword):
    assert keyword in load("commands.txt")


@pytest.mark.parametrize("command", ["variables (hf : False)", "unif_hint h (x : ℕ) where ⊢ x =?= 0",
                                     "include hf", "omit hf", "parameter (hf : False)", "open private foo from Bar",
                                     "compile_inductive% Nat", "recall foo : True", "alias foo := bar"])
def test_a_command_keyword_starts_a_command_at_any_column(command):
    text = f"lemma a : True := by\n  trivial\n  {command}\n{OK}"
    assert heads(text) == ["lemma", command.split()[0] if "private" not in command else "open private", "theorem"]


def test_a_line_starting_with_an_unknown_command_still_starts_one():
    assert heads("lemma a : True := by\n  trivial\nfrobnicate x\n") == ["lemma", "frobnicate"]


@pytest.mark.parametrize("command", ["variables (hf : False)", "unif_hint h where ⊢ (2 : ℝ) =?= 3",
                                     "include hf", "parameter (hf : False)"])
def test_the_screen_rejects_commands_folded_into_a_helper(command):
    r = screen(ST, f"```lean4\nlemma a : True := by\n  trivial\n  {command}\n{OK}\n```")
    assert not r.ok and f"`{command.split()[0]}` is not allowed" in r.reason


def test_every_command_keyword_is_a_token():
    assert COMMAND_KEYWORDS <= set(load("tokens.txt"))


SOURCE = '''
/-- `syntax "fake" : command` in a doc comment is no declaration -/
syntax (name := foo) "foo " term " bar" : command
/- N -/ elab (name := include) "include" (ppSpace ident)+ : command => pure ()
elab tk:"#conv " conv:conv " => " e:term : command => do logInfo "not a token"
syntax "simp_like" (" only")? : tactic
syntax irredDefLemma := atomic(" (" &"lemma" " := ") ident ")"
local notation "ℓ" => 1
scoped[Real] notation "π'" => 2
notation3"∑ᶠ' "(...)", "r:67:(scoped f => finsum f) => r
infixl:65 " +' " => HAdd.hAdd
macro_rules | `(foo $x bar) => `(x)
def s := "syntax \\"str\\" : command"
'''


def test_declarations_read_atoms_categories_and_scopes():
    found = {(d.head, d.atoms, d.category, d.scope) for d in declarations(SOURCE)}
    assert found == {
        ("syntax", ("foo", "bar"), "command", "global"),
        ("elab", ("include",), "command", "global"),
        ("elab", ("#conv", "=>"), "command", "global"),
        ("syntax", ("simp_like", "only"), "tactic", "global"),
        ("syntax", ("(", ":=", ")"), "", "global"),
        ("notation", ("ℓ",), "term", "local"),
        ("notation", ("π'",), "term", "scoped"),
        ("notation3", ("∑ᶠ'", ","), "term", "global"),
        ("infixl", ("+'",), "term", "global"),
    }


def test_imports_read_the_header_only():
    assert imports("prelude\nimport A.B\nimport C\n/-- import D -/\ndef x := 1\nimport E") == ["A.B", "C"]


PARSERS = """
namespace Finsupp
/-- `fun₀ | i => a` -/
@[term_parser]
def fun₀ := leading_parser:maxPrec
  ppAllowUngrouped >> unicodeSymbol "λ₀" "fun₀" >> matchAlts

@[inherit_doc, scoped command_parser high]
def «want» := leading_parser
  declModifiers false >> "want " >> declId >> sepBy1 ident ", " >>
    checkColGt "not a token" >> nonReservedSymbol "soft" >> &"softer" >> optional (symbol " ⟶ ")

@[tactic_parser] private def tac := leading_parser nonReservedSymbol "my_tac" >> notFollowedBy ("⋆" >> x) "msg"
def helper : Parser := leading_parser "not_attributed"
@[builtin_term_parser] def core := leading_parser "core_only"
local syntax (name := stxOne) "one₀" term:arg : term
"""


def test_parser_definitions_read_the_tokens_lean_adds():
    found = {(d.name, d.atoms, d.category, d.scope) for d in parser_definitions(PARSERS)}
    assert found == {   # no message, non-reserved symbol, unattributed or builtin parser
        ("fun₀", ("λ₀", "fun₀"), "term", "global"),
        ("«want»", ("want", ",", "⟶"), "command", "scoped"),
        ("tac", ("⋆",), "tactic", "global"),
    }
    assert ("stxOne", ("one₀",), "local") in {(d.name, d.atoms, d.scope) for d in declarations(PARSERS)}
    assert parser_attributes("attribute [term_parser] Finsupp.stxOne -- why\nattribute [simp] x\n") == [
        ("term", "global", ("Finsupp.stxOne",))]



def test_make_tables_scans_the_import_closure_at_the_manifest_commits(tmp_path):
    rev = git_tree(tmp_path / "batteries", {
        "Batteries.lean": "import Batteries.Used\n",
        "Batteries/Used.lean": "syntax \"#used\" : command\ninfixl:65 \" ⊕⊕' \" => f\n",
        "Batteries/Unused.lean": 'syntax "#unused" : command\n',
    })
    packages = [{"name": "batteries", "url": "u", "rev": rev}, {"name": "Cli", "url": "c", "rev": "0"}]
    commit = mathlib_tree(tmp_path / "mathlib", {
        "Mathlib.lean": "import Mathlib.A\n",
        "Mathlib/A.lean": "import Batteries.Used\nimport Lean\nsyntax \"variables\" ident : command\n"
                          "local notation \"ℓ\" => 1\nscoped notation \"ε'\" => 2\n",
        "Mathlib/B.lean": 'syntax "#not_imported" : command\n',
    }, packages=packages)
    core = "-- core\ncommand\tunif_hint\tglobal\tsrc/Init/Meta.lean\ntoken\t∑'\tglobal\tMathlib\n"
    main([*source_flags(tmp_path, commit, core),
          "--package", f"batteries={tmp_path / 'batteries' / '.git'}", "--out", str(tmp_path)])
    commands = (tmp_path / "commands.txt").read_text(encoding="utf-8")
    tokens = (tmp_path / "tokens.txt").read_text(encoding="utf-8")
    assert f"-- mathlib {commit}" in commands and f"-- batteries u {rev}" in commands and "not scanned: Cli" in tokens
    assert [ln for ln in commands.splitlines() if not ln.startswith("--")] == [
        "#used\tglobal", "unif_hint\tglobal", "variables\tglobal"]
    assert [ln for ln in tokens.splitlines() if not ln.startswith("--")] == [
        "#used\tglobal", "unif_hint\tglobal", "variables\tglobal", "ε'\tscoped", "∑'\tglobal", "⊕⊕'\tglobal"]


def test_make_tables_reads_parser_definitions_and_parser_attributes(tmp_path):
    commit = mathlib_tree(tmp_path / "mathlib", {
        "Mathlib.lean": "import Mathlib.Parsers\nimport Mathlib.Attr\n",
        "Mathlib/Parsers.lean": PARSERS,
        "Mathlib/Attr.lean": "import Mathlib.Parsers\nattribute [term_parser] Finsupp.stxOne\n",
    })
    main([*source_flags(tmp_path, commit, "-- core\n"),
          "--out", str(tmp_path)])
    tokens = (tmp_path / "tokens.txt").read_text(encoding="utf-8")
    assert [ln for ln in tokens.splitlines() if not ln.startswith("--")] == [
        ",\tscoped", "fun₀\tglobal", "one₀\tglobal", "want\tscoped", "λ₀\tglobal", "⋆\tglobal", "⟶\tscoped"]
    commands = (tmp_path / "commands.txt").read_text(encoding="utf-8")
    assert [ln for ln in commands.splitlines() if not ln.startswith("--")] == ["want\tscoped"]


def test_make_tables_scans_core_declarations_in_the_closure_given_a_lean4_clone(tmp_path):
    git_tree(tmp_path / "lean4", {
        "src/Init.lean": "prelude\nimport Init.Core\n",
        "src/Init/Core.lean": "prelude\ninfixr:30 \" ⊕' \" => PSum\n",
        "src/Lean.lean": "import Lean.Elab.UnifHint\n",
        "src/Lean/Elab/UnifHint.lean": "syntax \"unif_hint\" ident : command\n",
        "src/Lean/Unimported.lean": "syntax \"#never\" : command\n",
        "src/lake/Lake/CLI/Main.lean": "namespace Lake.DSL\nscoped syntax \"require\" ident : command\n",
    })
    subprocess.run(["git", "-C", str(tmp_path / "lean4"), "tag", "v4.9.0"], check=True)
    commit = mathlib_tree(tmp_path / "mathlib", {
        "Mathlib.lean": "import Lean\nimport Lake.CLI.Main\n",
    })
    core = "-- core\ncommand\ttheorem\tglobal\tsrc/Lean/Parser/Command.lean\n"
    main([*source_flags(tmp_path, commit, core),
          "--lean4", str(tmp_path / "lean4" / ".git"), "--out", str(tmp_path)])
    commands = (tmp_path / "commands.txt").read_text(encoding="utf-8")
    assert "-- lean4 " in commands and "(v4.9.0)" in commands
    assert [ln for ln in commands.splitlines() if not ln.startswith("--")] == [
        "require\tscoped", "theorem\tglobal", "unif_hint\tglobal"]
    tokens = (tmp_path / "tokens.txt").read_text(encoding="utf-8")
    assert "⊕'\tglobal" in tokens and "#never" not in tokens
