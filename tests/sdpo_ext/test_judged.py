"""The judged-sample record (sdpo_ext.judged): built from a reward's extra info, the one rule for a valid sample, the
masked samples (infra, padding) and the attempt-log row."""
from __future__ import annotations

import dataclasses

import pytest

from sdpo_ext.judged import JudgedSample, is_valid


def sample(reward_info: dict, score: float = 0.0, padding: bool = False) -> JudgedSample:
    return JudgedSample.from_reward(reward_info, key="k0", uid="g0", problem="mathd_1", score=score,
                                    text="theorem t : 1 + 1 = 2 := by norm_num", response_tokens=12, padding=padding)


@pytest.mark.parametrize("score, verdict, valid", [
    (1.0, "valid", True),
    (0.0, "valid", True),          # the verdict decides where there is one
    (1.0, "lean_error", False),
    (1.0, "", False),
    (1.0, None, True),             # a reward without verdicts (MATH answer checking): the full score decides
    (0.99, None, False),
    (2.0, None, True),
])
def test_the_valid_rule(score, verdict, valid):
    assert is_valid(score, verdict) is valid


def test_a_record_reads_the_reward_info():
    judged = sample({"verdict": "lean_error", "feedback": "line 2: unsolved goals", "infra": 0.0, "score": 0.0})
    assert (judged.verdict, judged.feedback, judged.infra, judged.masked) == ("lean_error", "line 2: unsolved goals",
                                                                              False, False)
    bare = sample({}, score=1.0)  # a reward that only scores
    assert (bare.verdict, bare.feedback, bare.infra, bare.valid) == (None, "", False, True)
    assert sample({"feedback": None, "infra": None}).feedback == ""
    with pytest.raises(dataclasses.FrozenInstanceError):
        judged.score = 1.0


def test_infra_and_padding_are_masked_and_never_valid():
    infra = sample({"verdict": "valid", "infra": 1.0}, score=1.0)
    assert infra.infra and infra.masked and not infra.valid
    padding = sample({"verdict": "valid"}, score=1.0, padding=True)
    assert padding.padding and padding.masked and not padding.infra and not padding.valid
    assert sample({"verdict": "valid"}, score=1.0).valid


def test_the_attempt_row_carries_the_proof_only_of_a_valid_sample():
    solved = sample({"verdict": "valid"}, score=1.0).attempt()
    assert solved == {"problem": "mathd_1", "sample_key": "k0", "response_tokens": 12, "verdict": "valid",
                      "score": 1.0, "infra": 0.0, "proof": "theorem t : 1 + 1 = 2 := by norm_num"}
    assert sample({"verdict": "lean_error"}).attempt()["proof"] is None
    failed_server = sample({"verdict": "infra", "infra": 1.0}).attempt()
    assert failed_server["infra"] == 1.0 and failed_server["proof"] is None
