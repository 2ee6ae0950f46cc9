"""Honest proofs the screen refused (issue 39 part 3), by class, each next to the cheats its relaxed rule still stops.

The classes come from the provers' published proofs (`bench/lean/screen_real_proofs.py`,
`bench/lean/results/screen_real_proofs.json`) and from the issue:
- a tactic block at column 0 (the proof as `statement\\n<tactics>`, as the non-overlapping-failures evaluation of
  Kimina-Prover-Distill, Goedel-Prover-SFT and DeepSeek-Prover-V2 checks them) with a tactic the continuation list
  lacked (`cases'`, `refine'`, `simp_rw`, `by_contra!`, `subst_vars`, ...), or a term line at column 0 inside brackets;
- the trusted header copied with its imports or opens in another order (Kimina-Prover-Preview, Seed-Prover);
- `set_option maxRecDepth 100000`, `tactic.hygienic false` (Seed-Prover);
- `noncomputable section … end` around the theorem (the issue).
Not accepted (the red-team corpora refuse them): `pp.*` options, a `#print axioms` after the theorem.
"""
import pytest

from lean_env import Verdict, build_check, screen

HEADER = "import Mathlib\nimport Aesop\n\nset_option maxHeartbeats 0\n\nopen BigOperators Real Nat Topology Rat\n\n"
ST = "theorem t1 (x : ℝ) (h : x = 2) : x + 1 = 3 := by\n"
SIG = "theorem t1 (x : ℝ) (h : x = 2) : x + 1 = 3"
F = Verdict.FORBIDDEN


def _screen(code: str, header: str = HEADER):
    return screen(ST, f"<think>plan</think>\n```lean4\n{code}\n```\n", header=header)


COLUMN_0_TACTICS = ["cases' h with a b", "refine' ⟨_, _⟩", "simp_rw [h]", "by_contra! h'", "contrapose! h",
                    "apply_fun (· + 1) at h", "induction' x using Nat.strong_induction_on with n ih", "subst_vars",
                    "revert h", "assumption", "replace h := h", "rcases h with ⟨a, b⟩", "push_cast at h",
                    "field_simp at h", "positivity", "interval_cases x", "nlinarith [h]", "rw_mod_cast [h]",
                    "exact_mod_cast h", "omega", "decide", "simp_all only [h]", "calc x + 1 = 2 + 1 := by rw [h]",
                    "iterate 2 simp", "erw [h]", "simp_arith", "simp_wf"]


@pytest.mark.parametrize("tactic", COLUMN_0_TACTICS)
def test_a_tactic_at_column_0_is_part_of_the_proof(tactic):
    r = _screen(f"{ST}{tactic}\nnorm_num")
    assert r.ok, r.reason
    assert r.proof.rstrip().endswith("norm_num")


@pytest.mark.parametrize("proof", [
    "nlinarith [sq_nonneg (x - 1), sq_nonneg (x + 1),\nmul_pos one_pos one_pos]",   # a list continued at column 0
    "have h2 : x + 1 = 3 := by\n  calc x + 1 = 2 + 1 := by rw [h]\n_ = 3 := by norm_num\nexact h2",   # a calc step
    "exact (by\nsubst h\nnorm_num : x + 1 = 3)",
    "subst h\ncalc\nx + 1 = 2 + 1 := by rfl\n_ = 3 := by norm_num",   # the first calc step (Kimina-Prover-Distill)
])
def test_a_term_line_at_column_0_inside_brackets_or_a_calc_step_is_part_of_the_proof(proof):
    r = _screen(f"{ST}{proof}")
    assert r.ok, r.reason


@pytest.mark.parametrize("proof", ["h ▸ by norm_num", "by_contra_helper h"])
def test_a_term_proof_at_column_0_after_the_assignment_is_part_of_the_proof(proof):
    r = _screen(f"{SIG} :=\n{proof}")
    assert r.ok, r.reason


@pytest.mark.parametrize("proof", [
    "norm_num\nmystery_command x",              # an unknown word at column 0, outside brackets: a new command
    "nlinarith [h,\n#eval 1]",                 # `#…` starts a command anywhere
    "nlinarith [h,\ninstance : Inhabited ℕ := ⟨0⟩]",   # so does a command keyword
    "norm_num\ndeclare_syntax_cat foo",
])
def test_a_command_at_column_0_is_still_a_command(proof):
    r = _screen(f"{ST}{proof}")
    assert not r.ok and r.verdict is F, r.reason


REORDERED = "import Aesop\nimport Mathlib\n\nset_option maxHeartbeats 0\n\nopen BigOperators Nat Rat Real Topology\n\n"


def test_the_trusted_header_copied_in_another_order_is_dropped():
    r = _screen(f"{REORDERED}{SIG} := by\n  subst h\n  norm_num")
    assert r.ok, r.reason
    assert "maxHeartbeats" not in r.helpers and "open" not in r.helpers


def test_a_header_line_that_the_trusted_header_lacks_is_model_code():
    trusted = HEADER.replace("maxHeartbeats 0", "maxHeartbeats 400000")
    r = _screen(f"{REORDERED}{SIG} := by\n  subst h\n  norm_num", header=trusted)   # `maxHeartbeats 0` is the model's
    assert not r.ok and "maxHeartbeats" in r.reason
    r = _screen(f"import Mathlib\nopen Real Finset\n{SIG} := by\n  subst h\n  norm_num")   # `Finset` is the model's
    assert r.ok and r.helpers.strip() == "open Real Finset", r.helpers
    r = _screen(f"import Mathlib\nset_option maxHeartbeats 0 in\n{SIG} := by\n  norm_num")   # it prefixes the theorem
    assert not r.ok and "maxHeartbeats" in r.reason


PROOFNET_HEADER = ("import Mathlib\n\nopen Complex Filter Function Metric Finset\nopen scoped BigOperators Topology\n\n"
                   "open scoped BigOperators Topology\n\n")


def test_a_proofnet_header_copied_in_another_order_is_dropped():
    copy = "import Mathlib\nopen scoped Topology BigOperators\nopen Finset Metric Function Filter Complex\n"
    r = _screen(f"{copy}{SIG} := by\n  subst h\n  norm_num", header=PROOFNET_HEADER)
    assert r.ok and r.helpers == "", (r.reason, r.helpers)
    r = _screen(f"import Mathlib\nopen Topology\n{SIG} := by\n  subst h\n  norm_num", header=PROOFNET_HEADER)
    assert r.ok and r.helpers.strip() == "open Topology", r.helpers   # not `open scoped`: the model's own open


@pytest.mark.parametrize("option", ["maxRecDepth 100000", "tactic.hygienic false", "tactic.hygienic true"])
def test_options_of_honest_proofs(option):
    r = _screen(f"set_option {option}\n{SIG} := by\n  subst h\n  norm_num")
    assert r.ok, r.reason


@pytest.mark.parametrize("option", ["maxRecDepth 100001", "pp.all 1", "tactic.hygienic 0",
                                    "debug.skipKernelTC true", "tactic.skipAssignedInstances true"])
def test_options_outside_the_bounds_are_refused(option):
    r = _screen(f"set_option {option}\n{SIG} := by\n  subst h\n  norm_num")
    assert not r.ok and r.verdict is F, r.reason


@pytest.mark.parametrize("code", [
    f"noncomputable section\n{SIG} := by\n  subst h\n  norm_num\nend",
    f"section\nopen Finset\nnoncomputable section\n{SIG} := by\n  subst h\n  norm_num\n\nend\nend",
    f"section S\n{SIG} := by\n  subst h\n  norm_num\nend S",
])
def test_sections_around_the_theorem(code):
    r = _screen(code)
    assert r.ok, r.reason
    lines = build_check(r, HEADER).snippet.body.splitlines()
    opened = sum(ln.startswith(("section", "noncomputable section")) for ln in lines)
    assert opened == sum(ln.split()[:1] == ["end"] for ln in lines)   # every section closes before the check
    assert lines[-3] == "end" and lines[-2].startswith("set_option maxHeartbeats")


@pytest.mark.parametrize("code", [
    f"noncomputable section\n{SIG} := by\n  subst h\n  norm_num",                 # left open: the assembler's `end`
    f"noncomputable section\n{SIG} := by\n  subst h\n  norm_num\nend\nend",       # one `end` too many
    f"namespace Foo\n{SIG} := by\n  subst h\n  norm_num\nend Foo",                # a namespace renames the theorem
    f"noncomputable section\n{SIG} := by\n  subst h\n  norm_num\nend\n#print axioms t1",
    f"section\n{SIG} := by\n  subst h\n  norm_num\nend\ntheorem t2 : True := trivial",
    f"section S\n{SIG} := by\n  subst h\n  norm_num\nend T",
])
def test_sections_that_do_not_close_after_the_theorem_are_refused(code):
    r = _screen(code)
    assert not r.ok and r.verdict is F, r.reason



# Issue 48 part 3: classes of honest proofs refused on a corpus of other provers' outputs and human-written solutions.
# Each is written here as our own input after the shape the published proofs have (source named per test).

@pytest.mark.parametrize("copy", [
    # BFS-Prover-V2's miniF2F files (nyc030325/BFS-Prover-V2 @4ef51ea): the header's opens, an own option, then a
    # copy of the header's `maxHeartbeats 0`; the same lines in the other order passed before
    "import Mathlib\nopen BigOperators Real Nat Topology\n\nset_option maxRecDepth 100000\n"
    "set_option maxHeartbeats 0\n",
    "import Mathlib\nopen Finset\nset_option maxHeartbeats 0\nopen BigOperators Real Nat Topology Rat\n",
])
def test_a_header_copy_after_the_models_own_option_is_dropped(copy):
    r = _screen(f"{copy}\n{SIG} := by\n  subst h\n  norm_num")
    assert r.ok, r.reason
    assert "maxHeartbeats" not in r.helpers and "BigOperators" not in r.helpers, r.helpers
    body = build_check(r, HEADER).snippet.body
    assert "set_option maxRecDepth 100000" in body or "open Finset" in body   # the model's own lines stay
    assert body.count("\n") == build_check(r, HEADER).audit_line   # the audit stays the file's last line


def test_a_header_copy_keeps_the_lines_of_the_answer_counted():
    code = f"set_option maxRecDepth 100000\nset_option maxHeartbeats 0\n{SIG} := by\n  subst h\n  norm_num"
    r = _screen(code)
    assert r.ok, r.reason
    plan = build_check(r, HEADER)
    visible = plan.visible_source.splitlines()
    assert visible[2].startswith(SIG), visible   # the theorem is still on the answer's third line


@pytest.mark.parametrize("copy", [
    "set_option maxRecDepth 100000\nset_option maxHeartbeats 0 in\n",   # `… in` prefixes the theorem: not a copy
    "set_option maxRecDepth 100000\nset_option maxHeartbeats 1\n",      # not what the header sets: the model's own
    "lemma aux : True := trivial\nset_option maxHeartbeats 0\n",         # after a helper: the model's own line
])
def test_what_is_not_a_header_copy_stays_the_models_own(copy):
    r = _screen(f"{copy}{SIG} := by\n  subst h\n  norm_num")
    if "maxHeartbeats 1\n" in copy:
        assert r.ok and "maxHeartbeats 1" in r.helpers, r.reason
    else:
        assert not r.ok and "maxHeartbeats" in r.reason, r.reason


@pytest.mark.parametrize("proof", [
    "have h2 : x = 2 := h\nh2 ▸ by norm_num",                   # the body of a `have` at column 0 (a term proof)
    "  let y := x\nshow y + 1 = 3 by subst h; norm_num",         # the body of a `let`
    "  Eq.trans (congrArg (· + 1) h)\n(by norm_num)",             # an argument at column 0
    "  have h2 : x + 1 = 2 + 1 := by\n    rw [h]\nh2.trans (by norm_num)",   # after a `by` block of the `have`
])
def test_a_term_proof_continued_at_column_0_is_part_of_the_proof(proof):
    """Lean reads an identifier at column 0 of a term as an argument (no position is saved in a declaration's body)
    or as the body of the `have`/`let` (`optSemicolon`): never as a command, since an identifier is no command
    keyword (`Lean.Parser.Term`: `argument` checks `checkColGt` against a saved position only)."""
    r = _screen(f"{SIG} :=\n{proof}")
    assert r.ok, r.reason
    assert r.proof.rstrip().endswith(proof.splitlines()[-1].strip())


@pytest.mark.parametrize("code", [
    f"{SIG} :=\nh ▸ by norm_num\n#eval 1",                         # a `#` command still starts a command
    f"{SIG} :=\nh ▸ by norm_num\ninstance : Inhabited ℕ := ⟨0⟩",   # and so does a command keyword
    f"{SIG} := by\n  subst h\n  norm_num\nmystery_command x",       # a tactic proof: a column-0 word is a command
])
def test_a_command_after_a_term_proof_is_still_a_command(code):
    r = _screen(code)
    assert not r.ok and r.verdict is F, r.reason


@pytest.mark.parametrize("code", [
    f"universe u\n{SIG} := by\n  subst h\n  norm_num",
    f"universe u v\nlemma aux {{α : Sort u}} (a : α) : a = a := rfl\n{SIG} := by\n  subst h\n  norm_num",
])
def test_universe_declarations_are_allowed(code):
    """`universe u` names universe variables for the model's section (closed by the assembler's `end`); it runs no
    code and declares no constant (compfiles, Mathlib's Archive)."""
    r = _screen(code)
    assert r.ok, r.reason
    assert r.helpers.startswith("universe u")


@pytest.mark.parametrize("code", [
    f"universe\n{SIG} := by\n  subst h\n  norm_num",
    f"@[simp] universe u\n{SIG} := by\n  subst h\n  norm_num",
    f"universe u in\n{SIG} := by\n  subst h\n  norm_num",
])
def test_malformed_universe_declarations_are_refused(code):
    r = _screen(code)
    assert not r.ok and r.verdict in (F, Verdict.STATEMENT_MISMATCH), r.reason


@pytest.mark.parametrize("option", ["pp.numericTypes true", "pp.funBinderTypes true", "pp.all false",
                                    "pp.proofs true", "pp.coercions.types true"])
def test_boolean_pp_options_are_allowed_in_the_models_section(option):
    """pp.* options change how messages print, never what the kernel or the judge accepts; the model's options end
    with its section, before the check and audit lines (a published pipeline adds such lines to every proof)."""
    for code in (f"set_option {option}\n{SIG} := by\n  subst h\n  norm_num",
                 f"set_option {option} in\n{SIG} := by\n  subst h\n  norm_num",
                 f"{SIG} := by\n  set_option {option} in\n  subst h\n  norm_num"):
        r = _screen(code)
        assert r.ok, r.reason
        body = build_check(r, HEADER).snippet.body.splitlines()
        assert body.index("end") > max(i for i, ln in enumerate(body) if "pp." in ln)


@pytest.mark.parametrize("option", ["pp.all 1", "pp.maxSteps 5", "pp.deepTerms.threshold 0", "pp.all yes"])
def test_pp_options_that_are_not_boolean_are_refused(option):
    r = _screen(f"set_option {option}\n{SIG} := by\n  subst h\n  norm_num")
    assert not r.ok and r.verdict is F, r.reason


@pytest.mark.parametrize("proof", [
    "\n  by\n  subst h\n  norm_num",                # Mathport's layout: `by` on its own line, tactics at its column
    "\n  by\n  have h₂ : x = 2; exact h\n  subst h₂; norm_num",   # tactics joined by `;`
])
def test_mathports_by_on_its_own_line_is_part_of_the_proof(proof):
    """The ported miniF2F proofs (rah4927/lean-dojo-mew, 85 in `screen_real_proofs.py`) all take this layout."""
    r = _screen(f"{SIG} :={proof}")
    assert r.ok, r.reason
    assert r.proof.rstrip().endswith("norm_num")


@pytest.mark.parametrize("proof", ["\n  by\n  native_decide", "\n  by\n  norm_num\n#eval 1",
                                   "\n  by\n  norm_num; exact?"])
def test_mathports_layout_does_not_hide_a_cheat(proof):
    r = _screen(f"{SIG} :={proof}")
    assert not r.ok and r.verdict is F, r.reason
