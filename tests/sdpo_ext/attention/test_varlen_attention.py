"""sdpo_ext.attention.varlen against an fp64 reference written from the definition (an explicit masked softmax over
each packed sequence), and through a real transformers model registered as verl's runs register it."""
from __future__ import annotations

import pytest
import torch

from sdpo_ext.attention.varlen import ATTN_IMPLEMENTATION, sequence_bounds, varlen_sdpa_attention


class _Causal(torch.nn.Module):
    is_causal = True


def reference(q, k, v, segments, scale):
    """softmax(q k^T * scale + block-diagonal causal mask) v, [B, H, L, D] -> [B, L, H, D], kv heads repeated."""
    k = k.repeat_interleave(q.shape[1] // k.shape[1], dim=1)
    v = v.repeat_interleave(q.shape[1] // v.shape[1], dim=1)
    length = q.shape[2]
    allowed = torch.zeros(length, length, dtype=torch.bool)
    for start, end in segments:
        allowed[start:end, start:end] = torch.ones(end - start, end - start, dtype=torch.bool).tril()
    scores = (q @ k.transpose(-1, -2)) * scale
    weights = scores.masked_fill(~allowed, float("-inf")).softmax(-1)
    return (weights @ v).transpose(1, 2)


def packed_positions(lengths):
    return torch.cat([torch.arange(n) for n in lengths])[None]


@pytest.mark.parametrize("lengths", [(7, 5, 9), (1, 1, 4), (12,)])
def test_each_packed_sequence_attends_only_to_itself_forward_and_backward(lengths):
    g = torch.Generator().manual_seed(0)
    total, heads, kv_heads, dim = sum(lengths), 4, 2, 8
    q, k, v = (torch.randn(1, h, total, dim, generator=g, dtype=torch.float64, requires_grad=True)
               for h in (heads, kv_heads, kv_heads))
    segments = sequence_bounds(packed_positions(lengths)[0], total)
    ours, _ = varlen_sdpa_attention(_Causal(), q, k, v, None, scaling=0.3, position_ids=packed_positions(lengths))
    theirs = reference(q, k, v, segments, 0.3)
    torch.testing.assert_close(ours, theirs, rtol=1e-10, atol=1e-10)
    upstream = torch.randn(ours.shape, generator=g, dtype=torch.float64)
    grads = torch.autograd.grad((ours * upstream).sum(), (q, k, v))
    expected = torch.autograd.grad((theirs * upstream).sum(), (q, k, v))
    for a, b in zip(grads, expected):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-10)


def test_sequence_bounds_follow_position_restarts():
    assert sequence_bounds(torch.tensor([0, 1, 2, 0, 0, 1]), 6) == [(0, 3), (3, 4), (4, 6)]
    assert sequence_bounds(torch.tensor([5, 6, 7]), 3) == [(0, 3)]  # one sequence that starts after a cache
    assert sequence_bounds(None, 4) == [(0, 4)]


def test_a_padding_mask_keeps_each_rows_tokens_and_zeros_the_padding():
    g = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(2, 2, 6, 4, generator=g, dtype=torch.float64) for _ in range(3))
    mask = torch.tensor([[1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 0, 0]], dtype=torch.bool)
    ours, _ = varlen_sdpa_attention(_Causal(), q, k, v, mask, scaling=0.5)
    torch.testing.assert_close(ours[0], reference(q[:1], k[:1], v[:1], [(0, 6)], 0.5)[0])
    torch.testing.assert_close(ours[1, :4], reference(q[1:, :, :4], k[1:, :, :4], v[1:, :, :4], [(0, 4)], 0.5)[0])
    assert ours[1, 4:].abs().max() == 0


def test_queries_on_a_kv_cache_see_the_cache_and_their_own_past():
    g = torch.Generator().manual_seed(2)
    q, k, v = (torch.randn(1, 2, 9, 4, generator=g, dtype=torch.float64) for _ in range(3))
    full = reference(q, k, v, [(0, 9)], 0.5)
    ours, _ = varlen_sdpa_attention(_Causal(), q[:, :, 6:], k, v, None, scaling=0.5,
                                    position_ids=torch.arange(6, 9)[None])
    torch.testing.assert_close(ours, full[:, 6:])


def test_sliding_windows_are_refused_not_ignored():
    q = torch.zeros(1, 2, 3, 4)
    with pytest.raises(NotImplementedError, match="full attention only"):
        varlen_sdpa_attention(_Causal(), q, q, q, None, sliding_window=2)


def test_a_registered_model_gives_each_packed_sequence_its_own_logits():
    """A real Qwen3 under the registered name: [a | b] packed with restarting positions and no mask gives the logits
    of a and b run alone, as verl's remove-padding forward needs; so does a right-padded batch."""
    from transformers import Qwen3Config, Qwen3ForCausalLM

    import sdpo_ext.plugin  # noqa: F401  (registers the attention, as `import verl` does in every worker)

    torch.manual_seed(0)
    config = Qwen3Config(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, head_dim=8,
                         attn_implementation=ATTN_IMPLEMENTATION)
    model = Qwen3ForCausalLM(config).eval()
    assert model.config._attn_implementation == ATTN_IMPLEMENTATION
    a, b = torch.randint(0, 64, (1, 7)), torch.randint(0, 64, (1, 5))
    with torch.no_grad():
        alone = torch.cat([model(a).logits[0], model(b).logits[0]])
        packed = model(input_ids=torch.cat([a, b], 1), position_ids=packed_positions((7, 5)), attention_mask=None,
                       use_cache=False).logits[0]
        padded = model(input_ids=torch.cat([a, torch.cat([b, b[:, :2]], 1)]),
                       attention_mask=torch.tensor([[1] * 7, [1] * 5 + [0] * 2]), use_cache=False).logits
    torch.testing.assert_close(packed, alone, rtol=0, atol=1e-5)
    torch.testing.assert_close(torch.cat([padded[0], padded[1, :5]]), alone, rtol=0, atol=1e-5)


def test_each_sequence_runs_torchs_fused_kernel_not_the_math_one():
    """A 3-D SDPA call falls back to the math kernel, which builds the L x L scores (CPU and CUDA alike); the packed
    GRPO update with the 3-D calls took 6x the unpacked one at 8K on the H200."""
    from torch.profiler import profile

    q = torch.randn(1, 4, 24, 16)
    with profile() as prof:
        varlen_sdpa_attention(_Causal(), q, q, q, None, position_ids=packed_positions((10, 14)))
    kernels = {e.name for e in prof.events() if e.name.startswith("aten::_scaled_dot_product")}
    assert kernels and "aten::_scaled_dot_product_attention_math" not in kernels, kernels


def _tiny_qwen3(attention: str):
    from transformers import Qwen3Config, Qwen3ForCausalLM

    import sdpo_ext.plugin  # noqa: F401  (registers the attention, as `import verl` does in every worker)

    torch.manual_seed(0)
    config = Qwen3Config(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, head_dim=8, attn_implementation=attention)
    return Qwen3ForCausalLM(config).eval().double()


def shared_prefix_logits(model, prompts, responses, shared):
    """The response-row logits of a row packed with each shared prefix once (the packed shared-prefix teacher)."""
    from sdpo_ext.attention.varlen import KEY_SPANS, KeySpans
    from sdpo_ext.teacher.shared_prefix import prefix_packing

    packing = prefix_packing(prompts, responses, shared)
    spans = KeySpans(packing.key_index, packing.cu_seqlens_q, packing.cu_seqlens_k,
                     int(packing.cu_seqlens_q.diff().max()), int(packing.cu_seqlens_k.diff().max()))
    positions = torch.cat([torch.arange(p, p + len(s)) for s, p in zip(packing.spans, packing.starts)])
    with torch.no_grad():
        return model(input_ids=torch.cat(packing.spans)[None], position_ids=positions[None], attention_mask=None,
                     use_cache=False, logits_to_keep=packing.rows, **{KEY_SPANS: spans}).logits[0]


def whole_sequence_logits(model, prompts, responses):
    """The same rows from each [prompt | response] run alone."""
    with torch.no_grad():
        return torch.cat([model(torch.cat([p, r])[None]).logits[0, len(p) - 1:-1] for p, r in zip(prompts, responses)])


def shared_prefix_case():
    g = torch.Generator().manual_seed(3)
    prefix, other = torch.randint(0, 64, (9,), generator=g), torch.randint(0, 64, (5,), generator=g)
    prompts = [torch.cat([prefix, torch.randint(0, 64, (n,), generator=g)]) for n in (1, 3, 2)] + [other]
    responses = [torch.randint(0, 64, (n,), generator=g) for n in (4, 6, 5, 3)]
    return prompts, responses, [9, 9, 9, 0]


def test_a_row_with_a_shared_prefix_once_gives_the_whole_sequences_logits():
    """Three samples share a 9-token prefix, stored once in the row; a fourth shares none. Their response-row logits
    equal those of each whole sequence run alone (fp64)."""
    model = _tiny_qwen3(ATTN_IMPLEMENTATION)
    prompts, responses, shared = shared_prefix_case()
    torch.testing.assert_close(shared_prefix_logits(model, prompts, responses, shared),
                               whole_sequence_logits(model, prompts, responses), rtol=0, atol=1e-10)
