"""The core part of the token and command tables (`lean_env/tables/core.txt`) against Lean v4.9.0-rc1, the toolchain of
Mathlib 2f65ba7: words that became keywords only in later Lean stay identifiers, and atoms of packages'
`@[…_parser] leading_parser` definitions and `attribute [term_parser]` commands (read by make_tables) are tokens."""
import pytest

from lean_env.commands import COMMAND_KEYWORDS
from lean_env.lexer import lex
from lean_env.tables import load


def kinds(text):
    return [(t.kind, t.text) for t in lex(text)]


@pytest.mark.parametrize("word", ["module", "public", "coinductive", "grind_pattern", "assert_not_imported",
                                  "recommended_spelling", "docs_to_verso", "register_error_explanation"])
def test_words_that_are_keywords_only_after_lean_4_9_are_no_commands(word):
    assert word not in COMMAND_KEYWORDS


@pytest.mark.parametrize("command", ["#eval!", "#discr_tree_key", "#discr_tree_simp_key", "#with_exporting",
                                     "#import_path", "#check_assertions", "#dump_async_env_state"])
def test_hash_commands_added_after_lean_4_9_are_not_in_the_command_table(command):
    assert command not in COMMAND_KEYWORDS


@pytest.mark.parametrize("text,expected", [
    ("λ₀ | 1 => 2", [("sym", "λ₀"), ("sym", "|"), ("num", "1"), ("sym", "=>"), ("num", "2")]),   # Finsupp
])
def test_atoms_of_mathlib_term_parsers_are_tokens(text, expected):
    assert kinds(text) == expected


def test_leading_parser_atoms_are_in_the_tables():
    tokens = load("tokens.txt")
    assert {"λ₀", "fun₀", "PiType"} <= set(tokens)      # Mathlib's `fun₀` (Finsupp) and `Π` (Delaborators)
    assert "proof_wanted" in COMMAND_KEYWORDS           # Batteries' `@[command_parser]`
    assert {"single₀", "update₀"} <= set(tokens)        # `attribute [term_parser]` of a `local syntax` (DFinsupp)
