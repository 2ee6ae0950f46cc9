"""sdpo_attempts.valid: the one rule for a valid attempt, on a verdict or, without one, on the score."""
from __future__ import annotations

from sdpo_attempts.valid import is_valid, valid_record


def test_the_verdict_decides_where_there_is_one_and_the_full_score_where_there_is_none():
    assert is_valid(1.0, "valid") and not is_valid(1.0, "cheat") and not is_valid(0.0, "wrong")
    assert is_valid(1.0, None) and not is_valid(0.99, None)


def test_a_record_flagged_infra_or_without_a_score_is_not_valid():
    assert valid_record({"score": 1.0, "verdict": "valid", "infra": 0})
    assert not valid_record({"score": 1.0, "verdict": "valid", "infra": 1})
    assert not valid_record({"verdict": None}) and valid_record({"score": 1, "verdict": None})
