"""sdpo_eval.discovery.problems: the candidates, their base rates and the choice of the problems a job runs."""
from __future__ import annotations

import pytest

from sdpo_eval.discovery import problems


def test_candidates_are_the_largest_sums_or_every_toy_theorem(tmp_path):
    import pandas as pd

    from sdpo_data.addition_rows import write_data

    write_data(tmp_path, n_train=64, n_test=4)
    names = problems.candidates("demo", tmp_path, 5)
    rows = {e["name"]: sum(e["operands"]) for e in pd.read_parquet(tmp_path / "addition_train.parquet")["extra_info"]}
    assert len(names) == 5 and min(rows[n] for n in names) >= max(s for n, s in rows.items() if n not in names)
    assert problems.candidates("toy_lean", tmp_path, 5)[:2] == ["toy_add_7_5", "toy_mul_6_7"]


def test_base_rates_use_the_first_judged_samples_and_select_the_rarest():
    def rec(problem, attempt, score, infra=0):
        return {"problem": problem, "attempt": attempt, "score": score, "infra": infra}

    records = [rec("a", i, float(i in (2, 70))) for i in range(1, 71)]   # 1 of the first 64 (the 70th is past)
    records += [rec("b", i, 0.0) for i in range(1, 65)] + [rec("b", 64, 0.0, infra=1)]
    records += [rec("c", i, float(i % 4 == 0)) for i in range(1, 65)]   # 16/64 = 0.25: not rare
    records += [rec("d", i, 0.0) for i in range(1, 33)]                 # only 32 measured
    rates = problems.base_rates(records, samples=64)
    assert rates["a"] == {"valid": 1, "judged": 64, "rate": 1 / 64} and rates["b"]["judged"] == 64
    assert problems.select(rates, samples=64, max_rate=0.1, count=16) == ["b", "a"]
    assert problems.select(rates, samples=64, max_rate=0.1, count=1) == ["b"]


def test_a_chosen_problem_is_never_one_already_given_and_a_missing_data_folder_names_the_command(tmp_path):
    rates = {p: {"valid": 0, "judged": 64, "rate": 0.0} for p in ("a", "b", "c")}
    assert problems.select(rates, samples=64, max_rate=0.0, count=2, exclude=("a",)) == ["b", "c"]
    with pytest.raises(FileNotFoundError, match="sdpo_data.addition_rows"):
        problems.candidates("demo", tmp_path, 4)
