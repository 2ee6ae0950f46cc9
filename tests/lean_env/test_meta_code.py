"""No model code runs inside the checker (issue 48 part 1): the meta-level API cannot be named or opened, and a tactic
configuration is literal data. The attacks are our own inputs after the class the issue describes (a configuration
field that is a function the tactic calls while the proof elaborates, reaching the environment or the message log).
"""
import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lean_env import Verdict, screen
from lean_env.meta_code import META_NAMES

HEADER = "import Mathlib\nimport Aesop\n\nset_option maxHeartbeats 0\n\nopen BigOperators Real Nat Topology Rat\n\n"
ST = "theorem t1 (x : ℝ) (h : x = 2) : x + 1 = 3 := by\n"
SIG = "theorem t1 (x : ℝ) (h : x = 2) : x + 1 = 3"
OK = f"{SIG} := by\n  subst h\n  norm_num"
F = Verdict.FORBIDDEN


def _screen(code: str):
    return screen(ST, f"```lean4\n{code}\n```", header=HEADER)


EVIL_PRE = ("def p : Linarith.GlobalPreprocessor where\n  name := \"p\"\n"
            "  transform := fun hs => do\n    let _ ← Lean.getEnv\n    return hs\n")

ATTACKS = [
    # a preprocessor, an oracle or a discharger handed to linarith: code the tactic runs while the proof elaborates
    f"{EVIL_PRE}{SIG} := by\n  subst h\n  linarith (config := {{ preprocessors := [p] }})",
    f"def q := 0\n{SIG} := by\n  subst h\n  linarith (config := {{ preprocessors := [q] }})",   # a list of code
    f"def q := 0\n{SIG} := by\n  subst h\n  linarith (config := {{ oracle := q }})",   # a name the answer declares
    f"def q := 0\n{SIG} := by\n  subst h\n  linarith (config := {{ oracle := .q }})",
    f"{SIG} := by\n  subst h\n  linarith (config := {{ oracle := ⟨fun _ _ => pure default⟩ }})",
    f"{SIG} := by\n  subst h\n  linarith (config := {{ discharger := do pure () }})",
    f"{SIG} := by\n  subst h\n  linarith (config := {{ discharger := (pure ()) }})",
    f"{SIG} := by\n  subst h\n  linarith (config := cfg.mk fun _ => 0)",
    f"def d := 0\n{SIG} := by\n  subst h\n  simp (config := {{ decide := true, maxSteps := d }})",
    f"{SIG} := by\n  subst h\n  aesop (add safe tactic norm_num)",
    f"{SIG} := by\n  subst h\n  solve_by_elim (cfg := {{ proc := fun _ _ => pure none }})",
    f"{SIG} := by\n  subst h\n  aesop (simp_config := {{ zeta := id false }})",
    # the meta-level API named, opened or entered
    f"{SIG} := by\n  run_tac Lean.getEnv\n  norm_num",
    f"open Lean in\ndef f := getEnv\n{OK}",
    f"open Lean.Elab.Command in\ndef f := 0\n{OK}",
    f"open Elab in\ndef f := 0\n{OK}",                       # may resolve to Lean.Elab under an open Lean
    f"namespace Lean.Elab\ndef f := 0\nend Lean.Elab\n{OK}",
    f"namespace IO\ndef f := 0\nend IO\n{OK}",
    f"def f := IO.FS.readFile \"x.lean\"\n{OK}",
    f"def f := _root_.Lean.MessageLog.empty\n{OK}",
    f"def f := «Lean».Environment.contains\n{OK}",
    f"def f := ``Lean.Meta.getMVarDecl\n{OK}",
    f"def f := Linarith.Preprocessor.mk\n{OK}",
    f"open Linarith in\ndef f : Preprocessor := default\n{OK}",   # after the model's own open
    f"namespace Linarith\ndef f : Preprocessor := default\nend Linarith\n{OK}",
    f"def f := processBigOpBinders\n{OK}",                   # through the header's `open BigOperators`
    f"def f := Lake.DSL.fooBar\n{OK}",
    f"def f := timeit\n{OK}",
]


@pytest.mark.parametrize("code", ATTACKS, ids=[f"attack-{i}" for i in range(len(ATTACKS))])
def test_code_that_could_run_in_the_checker_is_refused(code):
    r = _screen(code)
    assert not r.ok and r.verdict is F and r.reason, (r.verdict, r.reason)


HONEST = [
    f"{SIG} := by\n  subst h\n  simp (config := {{ decide := true }})",
    f"{SIG} := by\n  subst h\n  linarith (config := {{ splitNe := true, splitHypotheses := false }})",
    f"{SIG} := by\n  subst h\n  norm_num (config := {{ zeta := false, maxSteps := 100000 }})",
    f"{SIG} := by\n  subst h\n  simp (config := {{ }})",
    f"{SIG} := by\n  subst h\n  simp (config := {{ unfoldPartialApp := true, arith := true }}) only [add_comm]",
    f"{SIG} := by\n  subst h\n  simp (config := {{ zetaDelta := true, ground := .default }})",
    f"{SIG} := by\n  subst h\n  aesop (add safe norm_num) (rule_sets := [-builtin])",
    f"{SIG} := by\n  subst h\n  exact (by norm_num : (2 : ℝ) + 1 = 3)",
    f"lemma aux (n : ℕ) : n + 0 = n := Nat.add_zero n\n{OK}",
    f"open Finset in\nlemma aux (s : Finset ℕ) : s.card = s.card := rfl\n{OK}",   # a namespace of math and meta
    f"open Linarith in\nlemma aux (a : ℝ) (h : 0 < a) : 0 ≤ a := le_of_lt h\n{OK}",
    f"{SIG} := by\n  nlinarith [sq_nonneg (x - 2), h, Nat.succ_le_iff.mpr (Nat.zero_lt_one)]",
]


@pytest.mark.parametrize("code", HONEST, ids=[f"honest-{i}" for i in range(len(HONEST))])
def test_literal_configurations_and_math_names_are_accepted(code):
    r = _screen(code)
    assert r.ok, r.reason


def test_the_table_is_generated_and_holds_the_known_meta_api():
    """A spot check of `meta_names.txt` (make_meta): core's roots and scanned Mathlib meta-level declarations, and no
    mathematics (the cascade through type names stops at names declared more than once)."""
    assert {("Lean",), ("IO",), ("Lake",), ("Linarith", "Preprocessor"), ("Linarith", "GlobalPreprocessor"),
            ("BigOperators", "processBigOpBinders")} <= META_NAMES
    assert not {("Nat", "succ_le_iff"), ("Finset", "sum_range_succ"), ("Real", "sqrt"), ("sq_nonneg",)} & META_NAMES
    assert all("." not in p for name in META_NAMES for p in name)


# ---------------------------------------------------------------------------------------------- property test

_SAMPLE = sorted(random.Random(48).sample(sorted(META_NAMES), 300)) + [("Lean", "getEnv"), ("IO", "println")]
_HEADER_OPENS = ("BigOperators", "Real", "Nat", "Topology", "Rat")


def _spellings(name: tuple[str, ...]) -> list[str]:
    full = ".".join(name)
    out = [full, f"_root_.{full}", "«" + name[0] + "»" + "".join("." + p for p in name[1:]), f"``{full}"]
    if len(name) > 1:   # a tail, after opening what comes before it
        out.append(f"OPEN {'.'.join(name[:-1])}|{name[-1]}")
    return out


_WRAPS = [
    "{SIG} := by\n  subst h\n  exact {N}",
    "def helper := {N}\n{OK}",
    "{SIG} := by\n  subst h\n  linarith (config := {{ f := {N} }})",
    "{SIG} := by\n  subst h\n  simp [{N}]",
    "namespace Helpers\nlemma aux : True := by\n  have := {N}\n  trivial\nend Helpers\n{OK}",
]


def _mentions_meta(code: str) -> bool:
    """The oracle, independent of the screen: whether some word of `code` spells a meta name from the root, from
    the header's opens or from any namespace the code opens or enters (its tails included)."""
    opened = {()} | {tuple(o.split(".")) for o in _HEADER_OPENS}
    for m in re.finditer(r"\b(?:open|namespace)\s+((?:[\w.«»]+\s*)+)", code):
        for word in m.group(1).split():
            parts = tuple(word.replace("«", "").replace("»", "").split("."))
            opened |= {name[:k] for name in META_NAMES for k in range(len(name) + 1) if name[:k][-len(parts):] == parts}
    words = {tuple(w.replace("«", "").replace("»", "").removeprefix("_root_.").split("."))
             for w in re.findall(r"[\w'«».!?]+", code.replace("`", " "))}
    return any(w[:len(name) - len(p)] == name[len(p):] for w in words for name in META_NAMES for p in opened
               if name[:len(p)] == p and len(name) > len(p))


@settings(max_examples=150, deadline=None)
@given(name=st.sampled_from(_SAMPLE), which=st.integers(0, 4), wrap=st.sampled_from(_WRAPS))
def test_no_accepted_proof_mentions_a_meta_name(name, which, wrap):
    spelling = _spellings(name)[which % len(_spellings(name))]
    prefix = ""
    if spelling.startswith("OPEN "):
        opened, spelling = spelling[5:].split("|")
        prefix = f"open {opened} in\n"
    code = prefix + wrap.format(SIG=SIG, OK=OK, N=spelling)
    r = _screen(code)
    assert not (r.ok and _mentions_meta(code)), (code, r.reason)
    assert not r.ok, code   # every sample names a meta declaration: none may pass
