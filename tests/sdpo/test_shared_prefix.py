"""sdpo_ext.shared_prefix: which prefix each sample shares with its group, and the one-entry prefix KV cache."""
from __future__ import annotations

import pytest
import torch

from sdpo_ext.shared_prefix import MIN_SHARED_PREFIX, PrefixKVCache, forward_calls, group_prefix_lengths

HEAD = list(range(1000, 1000 + MIN_SHARED_PREFIX + 10))  # chat template + original prompt


def test_identical_teacher_prompts_share_all_but_their_last_token():
    demo = HEAD + [7, 8, 9]  # a solved group: every failed sample is shown the same proof
    assert group_prefix_lengths([demo, demo, demo], ["a", "a", "a"], [True, True, True]) == [len(demo) - 1] * 3


def test_feedback_prompts_share_the_original_prompt_and_groups_do_not_mix():
    prompts = [HEAD + [1, 2], HEAD + [1, 3, 4], HEAD[:-1] + [5], HEAD + [6]]
    uids = ["a", "a", "b", "b"]
    assert group_prefix_lengths(prompts, uids, [True] * 4) == [len(HEAD) + 1, len(HEAD) + 1,
                                                               len(HEAD) - 1, len(HEAD) - 1]


def test_nothing_is_shared_with_inactive_samples_alone_or_below_the_minimum():
    prompts = [HEAD + [1], HEAD + [2], None, HEAD[: MIN_SHARED_PREFIX - 1] + [3], HEAD[: MIN_SHARED_PREFIX - 1] + [4]]
    uids = ["a", "a", "a", "b", "b"]
    # sample 1 is the only active one of its group (sample 0 is inactive, sample 2 masked)
    assert group_prefix_lengths(prompts, uids, [False, True, False, True, True]) == [0, 0, 0, 0, 0]


def test_an_active_sample_without_a_teacher_prompt_is_refused():
    with pytest.raises(ValueError, match="sample 1 is active"):
        group_prefix_lengths([HEAD, None], ["a", "a"], [True, True])
    with pytest.raises(ValueError, match="differ in length"):
        group_prefix_lengths([HEAD], ["a", "b"], [True])


def test_the_cache_computes_a_prefix_once_and_forgets_it_for_the_next():
    computed = []
    cache = PrefixKVCache()
    compute = lambda p: computed.append(p.tolist()) or f"kv{len(computed)}"  # noqa: E731
    a, b = torch.tensor(HEAD), torch.tensor(HEAD[:-1] + [0])
    assert cache.get(a, compute) == "kv1" and cache.get(a.clone(), compute) == "kv1"
    assert cache.get(b, compute) == "kv2" and cache.get(a, compute) == "kv3"  # one entry: a was dropped for b
    cache.clear()
    assert cache.get(a, compute) == "kv4"
    assert (cache.computed, cache.reused) == (4, 1)


def test_forward_calls_count_one_per_sample_and_one_per_prefix_not_cached():
    a, b = torch.tensor(HEAD), torch.tensor(HEAD[:-1] + [0])
    assert forward_calls([], None) == 0
    assert forward_calls([None, None], a) == 2
    assert forward_calls([a, a, a], None) == 4  # the group's prefix once, then each sample's rest
    assert forward_calls([a, a, b], a) == 4  # a is cached already; b is not
    assert forward_calls([a, b, a], None) == 6  # one entry: a is computed again after b
