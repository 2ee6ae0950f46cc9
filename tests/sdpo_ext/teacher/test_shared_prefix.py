"""sdpo_ext.teacher.shared_prefix: which prefix each sample shares with its group, and the one-entry prefix KV cache."""
from __future__ import annotations

import pytest
import torch

from sdpo_ext.teacher.shared_prefix import (
    MIN_SHARED_PREFIX,
    PrefixKVCache,
    forward_calls,
    group_prefix_lengths,
    micro_batch_group,
    prefix_packing,
)

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


def test_only_models_whose_every_layer_attends_to_all_tokens_can_share_a_prefix():
    from types import SimpleNamespace

    from transformers import Qwen3Config

    from sdpo_ext.teacher.shared_prefix import full_attention_only

    assert full_attention_only(Qwen3Config(num_hidden_layers=2))
    assert not full_attention_only(Qwen3Config(num_hidden_layers=2, use_sliding_window=True, sliding_window=16,
                                               max_window_layers=0))
    hybrid = SimpleNamespace(text_config=SimpleNamespace(layer_types=["linear_attention", "full_attention"]))
    assert not full_attention_only(hybrid)  # Qwen3.5: a running state, not a cache of every token


def test_a_forward_on_top_of_the_prefix_leaves_the_prefix_tensors_in_the_cache():
    from transformers import LlamaConfig, LlamaForCausalLM

    from sdpo_ext.teacher.shared_prefix import extended

    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(vocab_size=32, hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                                         num_attention_heads=2, num_key_value_heads=1)).eval()
    ids = torch.randint(0, 32, (1, 12))
    with torch.no_grad():
        cache = model(input_ids=ids[:, :5], use_cache=True).past_key_values
        prefix = [(layer.keys, layer.values) for layer in cache.layers]
        with extended(cache) as longer:
            cached = model(input_ids=ids[:, 5:], past_key_values=longer, use_cache=True).logits
            assert longer.get_seq_length() == 12
        whole = model(input_ids=ids).logits[:, 5:]
    torch.testing.assert_close(cached, whole, rtol=1e-5, atol=1e-5)
    assert cache.get_seq_length() == 5
    assert all(layer.keys is k and layer.values is v for layer, (k, v) in zip(cache.layers, prefix))


def test_a_packing_holds_each_prefix_once_and_every_rest_attends_to_it():
    prefix = torch.arange(100, 106)
    prompts = [torch.cat([prefix, torch.tensor([1])]), torch.cat([prefix, torch.tensor([2, 3])]), torch.tensor([9, 8])]
    responses = [torch.tensor([41, 42]), torch.tensor([43]), torch.tensor([44, 45, 46])]
    packing = prefix_packing(prompts, responses, [6, 6, 0])
    assert [s.tolist() for s in packing.spans] == [prefix.tolist(), [1, 41, 42], [2, 3, 43], [9, 8, 44, 45, 46]]
    assert packing.starts == [0, 6, 6, 0] and packing.owners == [0, 0, 1, 2]
    assert packing.cu_seqlens_q.tolist() == [0, 6, 9, 12, 17] and packing.cu_seqlens_q.dtype == torch.int32
    keys = packing.key_index.split(packing.cu_seqlens_k.diff().tolist())
    assert [k.tolist() for k in keys] == [list(range(6)), [*range(6), 6, 7, 8], [*range(6), 9, 10, 11],
                                          list(range(12, 17))]
    # the rows predicting each response token: the last prompt row on, in sample order
    assert packing.rows.tolist() == [6, 7, 10, 13, 14, 15]
    row = torch.cat(packing.spans)
    targets = torch.cat([row[r + 1:r + 2] for r in packing.rows.tolist()])
    assert targets.tolist() == torch.cat(responses).tolist()
    # the model runs 6 + 3 + 3 + 5 = 17 tokens instead of 9 + 9 + 5
    assert len(row) == 17 < sum(len(p) + len(r) for p, r in zip(prompts, responses))


def test_a_prefix_as_long_as_its_prompt_is_refused():
    with pytest.raises(ValueError, match="sample 0: shared prefix 3"):
        prefix_packing([torch.tensor([1, 2, 3])], [torch.tensor([4])], [3])


def test_failed_siblings_share_their_whole_prompt_beside_a_correct_sample_shown_something_else():
    demo, own = HEAD + [7, 8, 9], HEAD + [5]  # the failed ones see the proof; the correct one its own feedback
    assert group_prefix_lengths([own, demo, demo, demo], ["a"] * 4, [True] * 4) == [len(HEAD)] + [len(demo) - 1] * 3


def test_verls_micro_batches_keep_the_largest_group_part_that_fits():
    assert micro_batch_group([3000] * 16, 8, 26624) == 8  # 2K replies: a whole group of 8 fits
    assert micro_batch_group([9226] * 16, 8, 26624) == 2  # 8K replies: pairs
    assert micro_batch_group([9226] * 16, 8, 9000) == 1
    assert micro_batch_group([3000] * 12, 8, 26624) == 4  # a shard of 12 samples: blocks of 4
