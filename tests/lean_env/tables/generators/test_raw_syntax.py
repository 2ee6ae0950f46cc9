"""make_tables' list of syntax that reads characters (`raw_syntax.txt`) and of scoped syntax (`scoped_syntax.txt`),
on synthetic Lean sources shaped like ProofWidgets' JSX, Mathlib's `#help` and `scoped[NS]` notation."""
from __future__ import annotations

from lean_env.tables.generators.lean_source import declarations, namespaces
from lean_env.tables.generators.make_tables import main
from lean_env.tables.generators.raw_syntax import raw_syntax, readers
from tests.lean_env.tables.lean_trees import mathlib_tree, source_flags

HTML = '''namespace Widgets
inductive Html where
  | text : String → Html
namespace Jsx
declare_syntax_cat jsxElement
declare_syntax_cat jsxChild
def textForbidden : String := "{<>}$"
def jsxText : Parser :=
  withAntiquot (mkAntiquot "jsxText" `jsxText) {
    fn := fun c s =>
      let s := takeWhile1Fn (not ∘ textForbidden.contains) "expected text" c s
      mkNodeToken `jsxText s.pos c s }
def jsxTextLike : Parser := jsxText <|> ident
scoped syntax "<" ident ">" jsxChild* "</" ident ">" : jsxElement
scoped syntax jsxTextLike : jsxChild
scoped syntax:max jsxElement : term
scoped syntax "plain⟪" term "⟫" : term
local syntax "here_only" jsxText : term
end Jsx
end Widgets
syntax withPosition("#helpme " (colGt rawIdent)?) : command
syntax "twice " term : term
scoped[Pointwise] notation "𝔓" => 1
'''
NESTED = '''namespace A
mutual
def f := 1
end
namespace B.C
section
scoped syntax "in_abc" : term
end
end B.C
scoped syntax "in_a" : term
end A
scoped syntax "at_root" : term
'''


def test_namespaces_follow_namespace_section_mutual_and_end():
    at = namespaces(NESTED)
    assert [d.namespace for d in declarations(NESTED)] == ["A.B.C", "A", ""]
    assert at(NESTED.index("def f")) == "A" and at(len(NESTED)) == ""


def test_a_dotted_namespace_may_be_closed_one_component_at_a_time():
    text = "namespace P.Q\nsection S.T\nend S.T\nend Q\nscoped syntax \"in_p\" : term\nend P\n"
    assert [d.namespace for d in declarations(text)] == ["P"]


def test_scoped_bracket_names_its_namespace():
    (d,) = [d for d in declarations(HTML) if d.atoms == ("𝔓",)]
    assert d.scope == "scoped" and d.namespace == "Pointwise"


def test_readers_are_the_definitions_that_read_characters_and_those_built_on_them():
    found = readers({"M": ("pkg", HTML)})
    assert {"jsxText", "jsxTextLike"} <= set(found) and found["jsxText"] == "pkg:M"
    assert "textForbidden" not in found and found["rawIdent"] == "core"


def test_raw_syntax_follows_closure_categories_to_the_syntax_a_user_can_type():
    modules = {"M": ("pkg", HTML)}
    raw, scoped = raw_syntax(modules, readers(modules))
    lines = {r.line() for r in raw}
    assert "jsxTextLike\tscoped\tWidgets.Jsx\tjsxChild\t-\t-\tpkg:M" in lines
    assert "jsxTextLike\tscoped\tWidgets.Jsx\tjsxElement\t<\t< > </ >\tpkg:M" in lines
    assert "jsxTextLike\tscoped\tWidgets.Jsx\tterm\t-\t-\tpkg:M" in lines    # the way in from a term
    assert "rawIdent\tglobal\t-\tcommand\t#helpme\t#helpme\tpkg:M" in lines
    assert not any("plain⟪" in ln or "here_only" in ln or "twice" in ln for ln in lines)   # tokens only, or local
    assert {(d.namespace, d.atoms[0] if d.atoms else "-") for d, _ in scoped} == {
        ("Widgets.Jsx", "<"), ("Widgets.Jsx", "-"), ("Widgets.Jsx", "plain⟪"), ("Pointwise", "𝔓")}


def test_make_tables_writes_both_lists_with_their_sources(tmp_path):
    commit = mathlib_tree(tmp_path / "mathlib", {
        "Mathlib.lean": "import Mathlib.Html\n",
        "Mathlib/Html.lean": HTML,
        "Mathlib/Unused.lean": "namespace Z\ndef r : Parser := rawFn\nscoped syntax r : term\nend Z\n",
    })
    main([*source_flags(tmp_path, commit, "-- core\n"),
          "--out", str(tmp_path)])
    raw = (tmp_path / "raw_syntax.txt").read_text(encoding="utf-8").splitlines()
    assert f"-- mathlib {commit} (Lean leanprover/lean4:v4.9.0)" in raw
    assert any(ln.startswith("-- readers of characters:") and "jsxText (mathlib:Mathlib.Html)" in ln
               and "jsxTextLike" not in ln for ln in raw)   # jsxTextLike is named by syntax, jsxText only by it
    rows = [ln.split("\t") for ln in raw if not ln.startswith("--")]
    assert {(r[0], r[1], r[2]) for r in rows} == {("jsxTextLike", "scoped", "Widgets.Jsx"),
                                                  ("rawIdent", "global", "-")}
    assert all(r[-1] == "mathlib:Mathlib.Html" for r in rows)   # Mathlib/Unused.lean is outside the closure
    scoped = [ln.split("\t") for ln in (tmp_path / "scoped_syntax.txt").read_text().splitlines()
              if not ln.startswith("--")]
    assert sorted(r[0] for r in scoped) == ["Pointwise", "Widgets.Jsx", "Widgets.Jsx", "Widgets.Jsx", "Widgets.Jsx"]
