"""Lean dataset preparation: screening of broken rows, verl parquet contract, prompt styles, TTRL selection."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from sdpo_data.lean_rows import LEAN_DATASETS, screen_records, statement_problem
from sdpo_data.prepare import main, prepare_lean
from sdpo_data.prompts import PROMPT_STYLES, build_prompt, informal_text

HEADER = "import Mathlib\nimport Aesop\n\nset_option maxHeartbeats 0\n\nopen BigOperators Real Nat Topology Rat\n\n"
REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared" / "data"


def row(name, statement, split="valid", header=HEADER, informal="/-- Show it. -/\n"):
    return {"name": name, "split": split, "informal_prefix": informal, "formal_statement": statement,
            "goal": "", "header": header}


ROWS = [
    row("good_a", "theorem good_a (x : ℕ) (h : x = 2) : x + 1 = 3 := by\n"),
    row("good_b", "theorem good_b : (2 : ℝ) ≤ 3 := by\n", split="test"),
    row("dash_comment", "-- theorem dash_comment : 1 = 1 := by\n"),
    row("block_comment", "/- theorem block_comment : 1 = 1 := by -/\n", split="test"),
    row("empty", "   \n"),
    row("wrong_name", "theorem other_name : 1 = 1 := by\n", split="test"),
    row("good_a", "theorem good_a (x : ℕ) (h : x = 2) : x + 1 = 3 := by\n"),            # exact repeat
    row("good_b", "theorem good_b : (3 : ℝ) ≤ 4 :=", split="valid"),                    # same name, new theorem
    row("a_def", "def a_def (G : Type*) [Group G] :\n  CommGroup G :=", split="test"),
    row("no_header", "theorem no_header : True := by\n", header=None),
    row("bad_split", "theorem bad_split : True := by\n", split="train"),
    row("no_end", "theorem no_end : True\n"),
]


def write_jsonl(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def test_screen_excludes_broken_rows_with_reasons():
    report = screen_records(ROWS, LEAN_DATASETS["minif2f"])
    reasons = {name: reason.split(":")[0] for _, name, reason in report.excluded}
    assert reasons == {"dash_comment": "commented out", "block_comment": "commented out", "empty": "empty statement",
                       "wrong_name": "name mismatch", "good_a": "duplicate", "bad_split": "unknown split",
                       "no_end": "malformed statement"}
    kept = {(p.id, p.name, p.split, p.kind) for p in report.kept}
    assert kept == {("good_a", "good_a", "valid", "theorem"), ("good_b", "good_b", "test", "theorem"),
                    ("good_b__2", "good_b", "valid", "theorem"), ("a_def", "a_def", "test", "def"),
                    ("no_header", "no_header", "valid", "theorem")}
    defaulted = [p for p in report.kept if p.header_defaulted]
    assert [p.name for p in defaulted] == ["no_header"]
    assert defaulted[0].header == LEAN_DATASETS["minif2f"].default_header


def test_statement_problem_accepts_comment_before_live_declaration():
    statement = "/-- docstring mentioning theorem foo -/\ntheorem foo : True := by\n"
    assert statement_problem(statement, "foo") is None
    assert statement_problem("theorem foo : True := by -- done\n", "foo") is None


def test_prepare_writes_verl_rows_per_split(tmp_path):
    src = write_jsonl(tmp_path / "mini.jsonl", ROWS)
    summary = prepare_lean("minif2f", str(src), "kimina", tmp_path / "out")
    assert summary["kept"] == {"valid": 3, "test": 2}
    assert len(summary["excluded"]) == 7 and summary["excluded_by_reason"]["commented out"] == 2
    assert summary["renamed_clashes"] == 1 and summary["def_statements"] == 1 and summary["header_defaulted"] == 1
    valid = pd.read_parquet(tmp_path / "out" / "minif2f_kimina_valid.parquet")
    test = pd.read_parquet(tmp_path / "out" / "minif2f_kimina_test.parquet")
    assert list(valid.columns) == ["data_source", "prompt", "ability", "reward_model", "extra_info"]
    first = valid.iloc[0]
    assert first["data_source"] == "minif2f" and first["ability"] == "lean4"
    assert first["reward_model"]["style"] == "rule"
    truth = json.loads(first["reward_model"]["ground_truth"])
    assert truth == {"name": "good_a", "formal_statement": ROWS[0]["formal_statement"], "header": HEADER,
                     "lean_version": LEAN_DATASETS["minif2f"].lean_version}
    assert dict(first["extra_info"]) == {"name": "good_a", "split": "valid", "index": 0,
                                         "informal_prefix": "/-- Show it. -/\n", "statement_defect": ""}
    assert [m["role"] for m in first["prompt"]] == ["system", "user"]
    assert ROWS[0]["formal_statement"].rstrip() in first["prompt"][1]["content"]
    assert [e["name"] for e in valid["extra_info"]] == ["good_a", "good_b__2", "no_header"]
    assert [e["index"] for e in test["extra_info"]] == [0, 1]
    clash = json.loads(valid.iloc[1]["reward_model"]["ground_truth"])
    assert clash["name"] == "good_b" and clash["formal_statement"] == ROWS[7]["formal_statement"]


def test_prompt_styles_keep_statement_and_differ():
    statement, informal = "theorem t (a : ℤ) : a + 0 = a := by\n", "/-- Adding zero. -/\n"
    built = {style: build_prompt(style, statement, HEADER, informal) for style in PROMPT_STYLES}
    for style, messages in built.items():
        user = messages[-1]["content"]
        assert statement.rstrip() in user, style
        if style != "fewshot":  # model-family prompts: header + statement in the only code block
            assert "import Mathlib" in user and user.count("```lean4\n") == 1, style
    fewshot = built["fewshot"][0]["content"]
    assert fewshot.count("```lean4\n") == 5
    assert fewshot.endswith("```lean4\ntheorem t (a : ℤ) : a + 0 = a := by\n```\nAnswer:")
    assert built["kimina"][0]["content"] == "You are an expert in mathematics and proving theorems in Lean 4."
    assert "# Problem:Adding zero." in built["kimina"][1]["content"]
    assert len(built["goedel"]) == 1 and "/-- Adding zero. -/\ntheorem t" in built["goedel"][0]["content"]
    assert "a + 0 = a := by\n  sorry\n```" in built["goedel"][0]["content"]
    assert "exactly one ```lean4``` code block" in built["qwen"][1]["content"]
    goedel = build_prompt("goedel", "theorem u : True :=", HEADER, "")[0]["content"]
    assert goedel.count("theorem u : True := by\n  sorry") == 1
    assert informal_text("/-- text -/") == "text" and informal_text("plain") == "plain"
    with pytest.raises(ValueError, match="known"):
        build_prompt("nope", statement, HEADER)


def test_single_theorem_by_name_and_close_matches(tmp_path, capsys):
    src = write_jsonl(tmp_path / "mini.jsonl", ROWS)
    summary = prepare_lean("minif2f", str(src), "goedel", tmp_path / "out", theorem="good_b__2")
    rows = pd.read_parquet(summary["files"]["valid"])
    assert Path(summary["files"]["valid"]).name == "minif2f_goedel_good_b__2.parquet"
    assert len(rows) == 1 and rows.iloc[0]["extra_info"]["name"] == "good_b__2"
    with pytest.raises(ValueError, match=r"good_a"):
        prepare_lean("minif2f", str(src), "goedel", tmp_path / "out", theorem="good_aa")
    with pytest.raises(ValueError, match="excluded: commented out"):
        prepare_lean("minif2f", str(src), "goedel", tmp_path / "out", theorem="dash_comment")
    assert main(["lean", "--dataset", "minif2f", "--input", str(src), "--prompt-style", "qwen",
                 "--out-dir", str(tmp_path / "cli"), "--theorem", "missing_one"]) == 2
    assert "not found" in capsys.readouterr().err


def test_cli_summary_and_bad_input(tmp_path, capsys):
    src = write_jsonl(tmp_path / "mini.jsonl", ROWS)
    assert main(["lean", "--dataset", "proofnet", "--input", str(src), "--prompt-style", "qwen",
                 "--out-dir", str(tmp_path / "cli")]) == 0
    out = capsys.readouterr().out
    assert "kept 5 rows" in out and "excluded 7 rows" in out and "#2 dash_comment: commented out" in out
    assert (tmp_path / "cli" / "proofnet_qwen_test.parquet").exists()
    assert main(["lean", "--dataset", "minif2f", "--input", str(tmp_path / "absent.jsonl"),
                 "--prompt-style", "qwen"]) == 2
    (tmp_path / "broken.jsonl").write_text('{"name": "x"\n')
    assert main(["lean", "--dataset", "minif2f", "--input", str(tmp_path / "broken.jsonl"),
                 "--prompt-style", "qwen"]) == 2
    assert "broken.jsonl:1" in capsys.readouterr().err


def test_hub_style_field_names_are_mapped():
    records = [{"id": "p1", "_hf_split": "validation", "formal_statement": "theorem p1 : True := by\n",
                "informal_stmt": "Trivial.", "header": HEADER}]
    report = screen_records(records, LEAN_DATASETS["minif2f"])
    assert [(p.id, p.split, p.informal_prefix) for p in report.kept] == [("p1", "valid", "Trivial.")]


def test_cards_state_the_pinned_versions():
    for name, spec in LEAN_DATASETS.items():
        card = (REPO / "datasets" / f"{name}.md").read_text()
        assert spec.lean_version in card and spec.mathlib.split("@")[1] in card, name
    assert not list((REPO / "datasets").glob("*.py")) and not (REPO / "datasets" / "__init__.py").exists()


@pytest.mark.skipif(not (SHARED / "minif2f.jsonl").exists(), reason="shared data not present")
def test_real_minif2f_and_proofnet_counts(tmp_path):
    mini = prepare_lean("minif2f", str(SHARED / "minif2f.jsonl"), "kimina", tmp_path)
    assert mini["kept"] == {"valid": 244, "test": 244} and mini["excluded"] == []
    proofnet = prepare_lean("proofnet", str(SHARED / "proofnet.jsonl"), "goedel", tmp_path)
    assert proofnet["kept"] == {"valid": 185, "test": 186} and proofnet["excluded"] == []
    assert proofnet["def_statements"] == 14 and proofnet["renamed_clashes"] == 22
