"""The meta-level table's scan (`lean_env.tables.generators.make_meta`) on small files of our own."""
from lean_env.tables.generators.make_meta import declared, meta_declarations

FILE_A = """import Lean
open Lean Meta

namespace Linarith

/-- a doc comment that says MetaM -/
structure Preprocessor where
  name : String
  transform : Expr → MetaM (List Expr)

def Preprocessor.run (p : Preprocessor) : ℕ := 0

private def hidden : MetaM Unit := pure ()

theorem lt_irrefl' {a : ℕ} : ¬ a < a := Nat.lt_irrefl a

structure State where
  n : ℕ

def usesLinState (s : State) : ℕ := 0

end Linarith

def _root_.atRoot : CoreM Unit := pure ()
"""
FILE_B = """namespace Other
structure State where
  go : TacticM Unit
def usesState (s : State) : ℕ := 0
def usesPre (p : Linarith.Preprocessor) : ℕ := 0
end Other
"""


def test_declared_reads_names_in_their_namespace_and_skips_private_ones():
    names = {full for full, _, _ in declared(FILE_A)}
    assert {"Linarith.Preprocessor", "Linarith.Preprocessor.run", "Linarith.State", "atRoot"} <= names
    assert not any("hidden" in n for n in names) and not any("lt_irrefl" in n for n in names)


def test_meta_declarations_cascade_through_unique_type_names_only():
    found = meta_declarations({"A": ("pkg", FILE_A), "B": ("pkg", FILE_B)})
    want = {"Linarith.Preprocessor", "Linarith.Preprocessor.run", "atRoot", "Other.State", "Other.usesPre"}
    assert want <= set(found)
    assert "Linarith.State" not in found          # no meta type in it
    # `State` is declared twice: it cascades only within the namespace of the meta one (issue 57: a local
    # `abbrev M := ReaderT Context AtomM` and the `def`s typed `M …` beside it)
    assert "Other.usesState" in found
    assert "Linarith.usesLinState" not in found
    assert found["atRoot"] == "pkg:A"
