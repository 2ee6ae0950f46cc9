"""sdpo_data.toy_lean: the toy theorem set's rows and its REPL-double rules, judged through the real Lean reward."""
import json
import sys

import pandas as pd
import pytest

from sdpo_data.toy_lean import THEOREMS, write
from sdpo_eval.prover_eval import Verifier, load_problems


@pytest.fixture(scope="module")
def toy_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("toy")
    write(out)
    return out


def rows(toy_dir):
    return pd.concat([pd.read_parquet(toy_dir / f"toy_fewshot_{s}.parquet") for s in ("valid", "test")])


def test_rows_follow_the_recipe_format(toy_dir):
    table = rows(toy_dir)
    assert sorted(n["name"] for n in table["extra_info"]) == sorted(name for name, _, _ in THEOREMS)
    first = table.iloc[0]
    messages = list(first["prompt"])
    assert [m["role"] for m in messages] == ["user"]
    truth = json.loads(first["reward_model"]["ground_truth"])
    assert messages[0]["content"].endswith(f"```lean4\n{truth['formal_statement']}\n```\nAnswer:")
    assert first["data_source"] == "toy"


def judge(toy_dir, proofs: dict[str, str]) -> dict[str, dict]:
    problems = load_problems(sorted(toy_dir.glob("toy_fewshot_*.parquet")), list(proofs))
    verify = Verifier({"backend": "repl", "timeout_s": 10.0,
                       "repl_command": f"{sys.executable} -m lean_env.testing.fake_repl "
                                       f"--rules {toy_dir / 'toy_rules.json'}"})
    items = []
    for problem, tactic in zip(problems, proofs.values()):
        statement = json.loads(problem["ground_truth"])["formal_statement"]
        items.append({"solution_str": f"Here is the proof.\n```lean4\n{statement}\n  {tactic}\n```\n",
                      "ground_truth": problem["ground_truth"]})
    try:
        return dict(zip(proofs, verify(items)))
    finally:
        verify.close()


def test_double_accepts_closing_tactics_and_reports_the_goal_otherwise(toy_dir):
    out = judge(toy_dir, {"toy_add_7_5": "norm_num", "toy_mul_6_7": "intro h", "toy_le_3_10": "decide",
                          "toy_mod_17_5": "exact foo", "toy_lt_9_11": "sorry"})
    assert out["toy_add_7_5"]["verdict"] == "valid" and out["toy_add_7_5"]["score"] == 1.0
    assert out["toy_le_3_10"]["verdict"] == "valid"
    assert out["toy_mul_6_7"]["verdict"] == "lean_error" and out["toy_mul_6_7"]["infra"] == 0.0
    assert "unsolved goals" in out["toy_mul_6_7"]["feedback"] and "⊢ (6 : ℕ) * 7 = 42" in out["toy_mul_6_7"]["feedback"]
    assert "⊢ (17 : ℕ) % 5 = 2" in out["toy_mod_17_5"]["feedback"]
    assert out["toy_lt_9_11"]["score"] == 0.0  # the screen still rejects sorry before the double is asked
