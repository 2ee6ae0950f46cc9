"""Lean kernel soundness fixes after v4.9.0 (issue 48 part 4): for each fix whose exploit needs a construct the model
could write, the screen refuses that construct. The table with every fix and the layer that stops it is in
docs/lean.md ("Kernel soundness"); the inputs are our own, shaped after the entry point each fix names (lean4 PR
numbers from the v4.33.0/v4.34.0 release notes and the v4.32.1/v4.32.2 point releases)."""
import pytest

from lean_env import Verdict, screen

HEADER = "import Mathlib\nimport Aesop\n\nset_option maxHeartbeats 0\n\nopen BigOperators Real Nat Topology Rat\n\n"
ST = "theorem t1 (x : ℝ) (h : x = 2) : x + 1 = 3 := by\n"
SIG = "theorem t1 (x : ℝ) (h : x = 2) : x + 1 = 3"
OK = f"{SIG} := by\n  subst h\n  norm_num"

ENTRY_POINTS = [
    # 4.32.1, #14498: an `opaque` value with a free variable, seeded by a metaprogram in the same process
    ("14498-opaque", f"opaque o : ℕ := 0\n{OK}"),
    ("14498-metaprogram", f"def f := Lean.Kernel.Environment.addDecl\n{OK}"),
    # 4.32.2/4.33, #14577: phantom parameters of nesting inductives; #14582: an inductive applied to non-parameters
    ("14577-inductive", f"inductive W : Type where\n  | mk : List W → W\n{OK}"),
    ("14582-inductive", f"inductive I : ℕ → Type where\n  | mk : I 0\n{OK}"),
    # 4.32.2, #14576: a projection naming the wrong structure, built by a metaprogram (`Expr.proj`)
    ("14576-structure", f"structure C where\n  b : Bool\n{OK}"),
    ("14576-proj", f"def e := Lean.Expr.proj `C 0 (Lean.mkConst `x)\n{OK}"),
    # 4.33, #14616: a declaration whose name uses the kernel's `_nested` names
    ("14616-nested-name", f"def foo._nested.bar : ℕ := 0\n{OK}"),
    # 4.33, #14608: level parameters of recursive `partial`/`unsafe` definitions
    ("14608-partial", f"partial def loop : ℕ → ℕ\n  | n => loop n\n{OK}"),
    ("14608-unsafe", f"unsafe def u : ℕ := 0\n{OK}"),
    # 4.33, #14613, 4.34, #14806/#14807/#14808: crafted recursors and universe levels: inductives and classes
    ("14806-recursor", f"inductive T : Prop where\n  | a | b\n{OK}"),
    ("14807-class", f"class K : Prop where\n  p : True\n{OK}"),
    ("14613-mutual", f"mutual\ninductive A : Type where\n  | a : A\nend\n{OK}"),
]


@pytest.mark.parametrize("code", [c for _, c in ENTRY_POINTS], ids=[i for i, _ in ENTRY_POINTS])
def test_the_screen_refuses_each_kernel_exploit_entry_point(code):
    r = screen(ST, f"```lean4\n{code}\n```", header=HEADER)
    assert not r.ok and r.verdict is Verdict.FORBIDDEN and r.reason, (r.verdict, r.reason)
