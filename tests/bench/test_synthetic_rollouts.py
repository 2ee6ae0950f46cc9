"""bench/step_time/synthetic_rollouts.py: the step-time job's rollout file built without vLLM, shaped by the recorded
profile (reply tokens and vLLM seconds per length), in step_generate's format."""
from __future__ import annotations

import json

import pytest

from tests.bench.bench_scripts import on_path

on_path("step_time")
from synthetic_rollouts import PROFILE, reply_lengths, synthetic_rollouts  # noqa: E402

PROFILE_2 = {"samples": 8, "lengths": {"16": {"gen_s": 1.5, "response_tokens": 8 * 16 - 20}}}


def rollouts(profile: dict = PROFILE_2, lengths=(16,), seed: int = 0) -> dict:
    prompts = [[1, 2, 3], [4, 5]]
    messages = [[{"role": "user", "content": "a"}], [{"role": "user", "content": "b"}]]
    return synthetic_rollouts(prompts, messages, ["gt0", "gt1"], profile, list(lengths), vocab_size=50,
                              special_ids={0, 2, 49}, eos_id=2, seed=seed)


def test_reply_lengths_meet_the_recorded_total_with_full_replies_first():
    assert reply_lengths(4, 10, 40) == [10, 10, 10, 10]
    assert reply_lengths(4, 10, 35) == [10, 10, 10, 5]
    assert reply_lengths(4, 10, 25) == [10, 10, 4, 1]
    with pytest.raises(ValueError, match="cannot be"):
        reply_lengths(4, 10, 41)


def test_the_replies_follow_the_profile_and_avoid_special_tokens_but_eos_ends_the_short_ones():
    result = rollouts()
    row = result["lengths"][16]
    lengths = [len(r) for r in row["response_ids"]]
    assert sum(lengths) == 108 and max(lengths) == 16 and len(lengths) == 8
    assert row["gen_s"] == 1.5 and row["response_tokens"] == 108
    for ids, finish in zip(row["response_ids"], row["finish_reasons"]):
        assert finish == ("length" if len(ids) == 16 else "stop")
        body = ids if finish == "length" else ids[:-1]
        assert not {0, 2, 49} & set(body)
        if finish == "stop":
            assert ids[-1] == 2
    assert result["prompt_ids"] == [[1, 2, 3], [4, 5]] and result["engine_start_s"] is None


def test_the_same_seed_gives_the_same_replies_and_another_seed_others():
    assert rollouts(seed=1)["lengths"][16]["response_ids"] == rollouts(seed=1)["lengths"][16]["response_ids"]
    assert rollouts(seed=1)["lengths"][16]["response_ids"] != rollouts(seed=2)["lengths"][16]["response_ids"]


def test_a_length_the_profile_never_recorded_is_refused():
    with pytest.raises(ValueError, match="no recorded rollout at 4096"):
        rollouts(lengths=(4096,))


def test_the_committed_profile_has_every_length_the_job_runs():
    profile = json.loads(PROFILE.read_text())
    assert set(profile["lengths"]) == {"2048", "8192"} and profile["samples"] == 64
    for length, row in profile["lengths"].items():
        assert 0 < row["response_tokens"] <= 64 * int(length) and row["gen_s"] > 0
