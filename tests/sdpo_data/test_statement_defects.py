"""Known-defective miniF2F statements (issue 57) are flagged in the prepared rows: the statements of the
DeepSeek-Prover-V1.5 copy that deepseek-ai/DeepSeek-Prover-V1.5 issue 26 and MoonshotAI/Kimina-Prover-Preview
issue 11 report (a big-operator body without parentheses, so the bound variable escapes as a phantom variable;
`mathd_algebra_314` without its real-type ascription, which over ℕ states 0 = 0). A repaired statement under the
same name is not flagged."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from sdpo_data.prepare import prepare_lean
from sdpo_data.statement_defects import KNOWN_DEFECTS, statement_defect

HEADER = "import Mathlib\nimport Aesop\n\nset_option maxHeartbeats 0\n\nopen BigOperators Real Nat Topology Rat\n\n"
SHARED = Path(__file__).resolve().parents[3] / "shared" / "data" / "minif2f.jsonl"
DEFECTIVE_314 = "theorem mathd_algebra_314 (n : ℕ) (h₀ : n = 11) : (1 / 4) ^ (n + 1) * 2 ^ (2 * n) = 1 / 4 := by\n"
REPAIRED_314 = "theorem mathd_algebra_314 (n : ℕ) (h₀ : n = 11) : (1 / 4 : ℝ) ^ (n + 1) * 2 ^ (2 * n) = 1 / 4 := by\n"
PHANTOM_342 = ("theorem mathd_algebra_342 (a d : ℝ) (h₀ : (∑ k in Finset.range 5, a + k * d) = 70)\n"
               "    (h₁ : (∑ k in Finset.range 10, a + k * d) = 210) : a = 42 / 5 := by\n")


def test_the_reported_statements_are_flagged_and_repaired_ones_are_not():
    assert "0 = 0" in statement_defect("minif2f", "mathd_algebra_314", DEFECTIVE_314)
    assert "phantom" in statement_defect("minif2f", "mathd_algebra_342", PHANTOM_342)
    assert statement_defect("minif2f", "mathd_algebra_314", REPAIRED_314) is None
    assert statement_defect("minif2f", "mathd_algebra_10", "theorem mathd_algebra_10 : True := by\n") is None
    assert statement_defect("proofnet", "mathd_algebra_314", DEFECTIVE_314) is None
    assert all(any(s.endswith(("DeepSeek-Prover-V1.5/issues/26", "Kimina-Prover-Preview/issues/11")) for s in d.sources)
               for d in KNOWN_DEFECTS["minif2f"].values())


def test_prepared_rows_carry_the_flag(tmp_path):
    rows = [{"name": "mathd_algebra_314", "split": "test", "formal_statement": DEFECTIVE_314, "header": HEADER},
            {"name": "mathd_algebra_10", "split": "test", "formal_statement": "theorem mathd_algebra_10 : True := by\n",
             "header": HEADER}]
    source = tmp_path / "m.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    summary = prepare_lean("minif2f", str(source), "kimina", tmp_path / "out")
    test = pd.read_parquet(summary["files"]["test"])
    assert [e["statement_defect"] != "" for e in test["extra_info"]] == [True, False]
    assert summary["statement_defects"] == ["mathd_algebra_314"]


@pytest.mark.skipif(not SHARED.exists(), reason="../shared/data/minif2f.jsonl is not here")
def test_every_flag_matches_a_statement_of_the_copy_we_use():
    records = [json.loads(line) for line in SHARED.read_text(encoding="utf-8").splitlines()]
    flagged = {r["name"] for r in records if statement_defect("minif2f", r["name"], r["formal_statement"])}
    assert flagged == set(KNOWN_DEFECTS["minif2f"])
