"""Issue 39, class 1: syntax that reads characters instead of tokens, switched on by an `open` the screen allowed.

ProofWidgets' JSX (`ProofWidgets/Data/Html.lean` @e6b6247, in the `import Mathlib` closure of mathlib4@2f65ba7):
`namespace ProofWidgets.Jsx`, `scoped syntax "<" ident jsxAttr* ">" jsxChild* "</" ident ">" : jsxElement`,
`scoped syntax jsxText : jsxChild`, `scoped syntax:max jsxElement : term`, and `jsxText` is a `ParserFn` that takes
every character but `{<>}$` (`takeWhile1Fn (not ∘ "{<>}$".contains)`). After `open ProofWidgets.Jsx`, Lean reads
`<b>a /- </b>` as an element whose text is `a /- `, while a token lexer reads `/- </b> …` as a comment up to the next
`-/`: whatever stands in between (an axiom, an `#eval`) is a command for Lean that the screen never sees. A quote
(`<b>" </b>`) hides code the same way, as a string for the lexer. `open X` resolves `X` against the current
namespaces and every open namespace (`Lean.ResolveName.resolveNamespace`), and entering `namespace X` activates X's
scoped syntax as `open` does (`Lean.Elab.Command.addNamespace` -> `activateScoped`), so each of these turns it on.
"""
from __future__ import annotations

import pytest

from lean_env import Verdict, screen
from lean_env.rules import LEXED_READERS, RAW_NAMESPACES, RAW_OPENERS, raw_syntax_rows
from tests.lean_env.test_verify_redteam_round2 import HEADER, SIG, ST, _answer

HIDDEN = "def s := <b>a /- </b>\naxiom cheat : False\n-- -/\n"           # a comment for the lexer, text for Lean
HIDDEN_STR = 'def s := <b>" </b>\naxiom cheat : False\ndef u := "\n'       # a string for the lexer, text for Lean
PROOF = f"{SIG} := by\n  exact cheat.elim"
ACTIVATIONS = {
    "open": "open ProofWidgets.Jsx\n{hide}",
    "open scoped": "open scoped ProofWidgets.Jsx\n{hide}",
    "open in": "open ProofWidgets.Jsx in\n{hide}",
    "open, then the short name": "open ProofWidgets\nopen Jsx\n{hide}",
    "open in, then the short name": "open ProofWidgets in\nopen Jsx in\n{hide}",
    "escaped name": "open «ProofWidgets».«Jsx»\n{hide}",
    "_root_": "open _root_.ProofWidgets.Jsx\n{hide}",
    "two names": "open Real ProofWidgets.Jsx\n{hide}",
    "namespace": "namespace ProofWidgets.Jsx\n{hide}end ProofWidgets.Jsx\n",
    "nested namespaces": "namespace ProofWidgets\nnamespace Jsx\n{hide}end Jsx\nend ProofWidgets\n",
    "namespace, then open": "namespace ProofWidgets\nopen Jsx\n{hide}end ProofWidgets\n",
    "set_option and open in": "set_option maxHeartbeats 400000 in\nopen ProofWidgets.Jsx in\n{hide}",
    "one open, both names": "open ProofWidgets Jsx\n{hide}",      # `Jsx` resolves after `ProofWidgets` is open
    "a namespace inside it": "namespace ProofWidgets.Jsx.Inner\n{hide}end ProofWidgets.Jsx.Inner\n",
    # Lean's `open` takes every identifier after it; the splitter ends its list at a tactic word (found by the
    # property test in tests/lean_env/test_screen_raw_reading_property.py)
    "a tactic word in the list": "open Real simp ProofWidgets.Jsx\n{hide}",
    "the list going on below": "open ProofWidgets\n  trivial Jsx\n{hide}",
}


def _screen(code: str):
    return screen(ST, _answer(code), header=HEADER)


@pytest.mark.parametrize("hide", [HIDDEN, HIDDEN_STR], ids=["comment", "string"])
@pytest.mark.parametrize("form", ACTIVATIONS.values(), ids=ACTIVATIONS.keys())
def test_an_open_that_switches_on_a_character_reader_is_rejected(form, hide):
    """Before the rule these were accepted: the lexer read the axiom as part of a comment or string."""
    result = _screen(form.format(hide=hide) + PROOF)
    assert result.verdict is Verdict.FORBIDDEN, result.reason
    assert "ProofWidgets.Jsx" in result.reason


@pytest.mark.parametrize("inside", [
    "by\n  open ProofWidgets.Jsx in exact cheat.elim",
    "by\n  open ProofWidgets in\n  open Jsx in\n  exact cheat.elim",
    "(open ProofWidgets.Jsx in cheat.elim)",
])
def test_an_open_inside_the_proof_is_checked_too(inside):
    result = _screen(f"{SIG} := {inside}")
    assert result.verdict is Verdict.FORBIDDEN and "ProofWidgets.Jsx" in result.reason, result.reason


@pytest.mark.parametrize("code", [
    "open ProofWidgets\n",                       # the parent: its scoped syntax is not the JSX
    "open Finset Real Nat Polynomial\n",
    "namespace ProofWidgets2\nend ProofWidgets2\n",
    "namespace Jsx\nend Jsx\n",                  # a root namespace of that name is not ProofWidgets.Jsx
    "open scoped BigOperators Topology\n",
    "open «ProofWidgets.Jsx»\n",                # one name component with a dot: not the namespace ProofWidgets.Jsx
])
def test_honest_opens_stay_accepted(code):
    result = _screen(code + f"{SIG} := by\n  subst h\n  norm_num")
    assert result.ok, result.reason


def test_the_generated_list_names_the_jsx_reader_and_its_namespace():
    rows = raw_syntax_rows()
    jsx = [r for r in rows if r.namespace == "ProofWidgets.Jsx"]
    assert jsx and {r.readers for r in jsx} == {("jsxText",)} and {r.scope for r in jsx} == {"scoped"}
    assert any(r.first_atom == "<" and r.category == "jsxElement" for r in jsx)
    assert ("ProofWidgets", "Jsx") in RAW_NAMESPACES


def test_every_global_reader_the_lexer_does_not_follow_is_stopped_at_its_first_atom():
    """A global syntax that reads characters is active everywhere, so the screen rejects its first atom (`#help`,
    rawIdent); the readers the lexer follows (doc comments, interpolated strings: a string holding `{` is a lexer
    error) need no rule."""
    unfollowed = [r for r in raw_syntax_rows() if r.scope == "global" and not set(r.readers) <= LEXED_READERS]
    assert unfollowed and all(r.first_atom in RAW_OPENERS for r in unfollowed)
    for opener in sorted(RAW_OPENERS):
        result = _screen(f"{SIG} := by\n  {opener} simp\n  norm_num")
        assert result.verdict is Verdict.FORBIDDEN, (opener, result.reason)


@pytest.mark.parametrize("text", ["/-- a doc -/\ntheorem aux : True := trivial\n",
                                  'def msg : String := s!"x = "\n'])
def test_followed_readers_pass(text):
    result = _screen(text + f"{SIG} := by\n  subst h\n  norm_num")
    assert result.ok, result.reason
