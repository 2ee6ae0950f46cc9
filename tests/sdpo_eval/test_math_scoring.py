"""MATH scores from graded samples (pure): infra exclusion, intervals, pass@k, maj@k ties, paired comparison; the
per-sample log's header check and torn-line recovery."""
from __future__ import annotations

import json

import pytest

from sdpo_attempts.pass_at_k import pass_at_k
from sdpo_eval.math_scoring import compare, format_table, majority_correct, score_table
from sdpo_eval.sample_log import open_log
from sdpo_eval.stats import bootstrap_mean_interval, wilson_interval


def rec(pid, sample, correct, key="k", infra=False, subject="algebra", model="m"):
    return {"model": model, "id": pid, "subject": subject, "sample": sample, "correct": correct, "key": key,
            "infra": infra, "verdict": "infra" if infra else ("valid" if correct else "wrong")}


def test_majority_vote_ties_and_silent_samples():
    assert majority_correct([rec("p", 0, False, "5"), rec("p", 1, True, "2"), rec("p", 2, True, "2")])
    assert not majority_correct([rec("p", 0, False, "5"), rec("p", 1, True, "2")])  # tie: first answer
    assert majority_correct([rec("p", 0, False, None), rec("p", 1, True, "2")])     # no answer, no vote
    assert not majority_correct([rec("p", 0, False, None)])


def test_one_sample_per_problem_uses_wilson_and_skips_infra():
    records = [rec("a", 0, True), rec("b", 0, False), rec("c", 0, True, subject="geometry"),
               rec("d", 0, False, infra=True)]
    table = score_table(records)
    assert table["overall"]["problems"] == 3 and table["overall"]["accuracy"] == pytest.approx(2 / 3)
    assert (table["overall"]["low"], table["overall"]["high"]) == pytest.approx(wilson_interval(2, 3))
    assert table["overall"]["infra_samples"] == 1 and table["overall"]["infra_problems"] == 1
    assert table["geometry"]["accuracy"] == 1.0


def test_n_samples_pass_at_k_and_bootstrap():
    records = ([rec("a", j, j < 3, key=str(j < 3)) for j in range(4)]
               + [rec("b", j, j == 0, key=str(j)) for j in range(4)])
    records.append(rec("c", 0, True))  # one judged sample: left out of pass@4 and maj@4
    table = score_table(records, ks=(1, 4))
    overall = table["overall"]
    assert overall["pass@4"] == pytest.approx((pass_at_k(4, 3, 4) + pass_at_k(4, 1, 4)) / 2) and overall["n@4"] == 2
    assert overall["maj@4"] == 1.0  # a: "True" x3 wins; b: four answers tie, the first (correct) one wins
    rates = [3 / 4, 1 / 4, 1.0]
    assert overall["accuracy"] == pytest.approx(sum(rates) / 3)
    assert (overall["low"], overall["high"]) == pytest.approx(bootstrap_mean_interval(rates))
    assert "maj@4" in format_table({"m": table}, None, (1, 4))


def test_paired_comparison_uses_sample_zero_of_problems_both_judged():
    a = [rec("p1", 0, True), rec("p2", 0, True), rec("p3", 0, False, infra=True)]
    b = [rec("p1", 0, False), rec("p2", 0, True), rec("p3", 0, True)]
    out = compare(a, b)
    assert out["overall"]["n"] == 2 and out["overall"]["difference"] == pytest.approx(0.5)
    with pytest.raises(ValueError, match="same problems"):
        compare(a, b[:2])


def test_bootstrap_interval_brackets_the_mean():
    low, high = bootstrap_mean_interval([0.0, 1.0] * 50)
    assert low < 0.5 < high and bootstrap_mean_interval([]) == (0.0, 1.0)


def test_sample_log_header_check_and_torn_line(tmp_path):
    path = tmp_path / "log.jsonl"
    log, done = open_log(path, {"n": 1, "seed": 0}, resume=False)
    log.write([{"model": "m", "id": "p", "sample": 0}])
    log.close()
    with path.open("a") as handle:
        handle.write('{"model": "m", "id": "q", "sam')
    with pytest.raises(ValueError, match="seed: 0 in the log, 1 now"):
        open_log(path, {"n": 1, "seed": 1}, resume=True)
    log, done = open_log(path, {"n": 1, "seed": 0}, resume=True)
    log.write([{"model": "m", "id": "q", "sample": 0}])
    log.close()
    assert list(done) == [("m", "p", 0)]
    assert [json.loads(line).get("id") for line in path.read_text().splitlines()] == [None, "p", "q"]
    with pytest.raises(FileExistsError):
        open_log(path, {"n": 1, "seed": 0}, resume=False)
