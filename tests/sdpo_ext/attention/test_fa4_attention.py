"""sdpo_ext.attention.fa4: the flattening to flash-attn's varlen layout and its integer length bounds, with a stand-in
for `flash_attn.cute.flash_attn_varlen_func` written from its docstring (q [total_q, Hq, D], k/v [total_k, Hkv, D],
int32 cumulative lengths, causal aligned to the end of each key sequence, Hkv | Hq). The kernel itself only runs on
Hopper/Blackwell: bench/step_time/packed_parity.py --attention fa4_varlen checks it there."""
from __future__ import annotations

import pytest
import torch

from sdpo_ext.attention import fa4 as fa4_attention
from sdpo_ext.attention.fa4 import ATTN_IMPLEMENTATION, fa4_varlen_attention
from tests.sdpo_ext.attention.test_varlen_attention import _Causal, packed_positions, reference


class StandIn:
    """flash-attn's varlen contract in torch; records the arguments of each call."""

    def __init__(self):
        self.calls = []

    def __call__(self, q, k, v, *, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, softmax_scale, causal):
        self.calls.append(dict(cu_seqlens_q=cu_seqlens_q, cu_seqlens_k=cu_seqlens_k, max_seqlen_q=max_seqlen_q,
                               max_seqlen_k=max_seqlen_k, q_rows=q.shape[0]))
        assert cu_seqlens_q.dtype == torch.int32 and cu_seqlens_k.dtype == torch.int32
        out = []
        groups = q.shape[1] // k.shape[1]
        for s in range(len(cu_seqlens_q) - 1):
            qs = q[cu_seqlens_q[s]:cu_seqlens_q[s + 1]].transpose(0, 1)
            ks = k[cu_seqlens_k[s]:cu_seqlens_k[s + 1]].transpose(0, 1).repeat_interleave(groups, 0)
            vs = v[cu_seqlens_k[s]:cu_seqlens_k[s + 1]].transpose(0, 1).repeat_interleave(groups, 0)
            scores = (qs @ ks.transpose(-1, -2)) * softmax_scale
            if causal:
                lq, lk = qs.shape[1], ks.shape[1]
                allowed = torch.ones(lq, lk, dtype=torch.bool).tril(diagonal=lk - lq)
                scores = scores.masked_fill(~allowed, float("-inf"))
            out.append((scores.softmax(-1) @ vs).transpose(0, 1))
        return torch.cat(out), None   # (out, lse) as flash-attn returns with return_lse


def _qkv(seed, batch, length, heads=4, kv_heads=2, dim=8, kv_length=None):
    g = torch.Generator().manual_seed(seed)
    shapes = ((batch, heads, length, dim), (batch, kv_heads, kv_length or length, dim),
              (batch, kv_heads, kv_length or length, dim))
    return (torch.randn(s, generator=g, dtype=torch.float64, requires_grad=True) for s in shapes)


@pytest.mark.parametrize("lengths", [(7, 5, 9), (1, 1, 4), (12,)])
def test_a_packed_row_is_one_varlen_call_with_integer_bounds(lengths):
    q, k, v = _qkv(0, 1, sum(lengths))
    kernel = StandIn()
    ours, _ = fa4_varlen_attention(_Causal(), q, k, v, None, scaling=0.3, position_ids=packed_positions(lengths),
                                   kernel=kernel)
    theirs = reference(q, k, v, [(0, lengths[0])] if len(lengths) == 1 else
                       list(zip([0, *torch.tensor(lengths).cumsum(0)[:-1].tolist()],
                                torch.tensor(lengths).cumsum(0).tolist())), 0.3)
    torch.testing.assert_close(ours, theirs, rtol=1e-10, atol=1e-10)
    (call,) = kernel.calls
    assert type(call["max_seqlen_q"]) is int and type(call["max_seqlen_k"]) is int  # the Hopper failure: a tensor
    assert call["max_seqlen_q"] == max(lengths) and call["cu_seqlens_q"].tolist() == [0, *torch.tensor(
        lengths).cumsum(0).tolist()]
    grads = torch.autograd.grad(ours.sum(), (q, k, v))
    expected = torch.autograd.grad(theirs.sum(), (q, k, v))
    for a, b in zip(grads, expected):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-10)


def test_padding_is_dropped_before_the_kernel_and_comes_back_as_zeros():
    q, k, v = _qkv(1, 2, 6)
    mask = torch.tensor([[1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 0, 0]], dtype=torch.bool)
    kernel = StandIn()
    ours, _ = fa4_varlen_attention(_Causal(), q, k, v, mask, scaling=0.5, kernel=kernel)
    assert kernel.calls[0]["q_rows"] == 10 and kernel.calls[0]["max_seqlen_k"] == 6
    torch.testing.assert_close(ours[0], reference(q[:1], k[:1], v[:1], [(0, 6)], 0.5)[0])
    torch.testing.assert_close(ours[1, :4], reference(q[1:, :, :4], k[1:, :, :4], v[1:, :, :4], [(0, 4)], 0.5)[0])
    assert ours[1, 4:].abs().max() == 0


def test_queries_on_a_kv_cache_are_aligned_to_the_end():
    q, k, v = _qkv(2, 1, 9)
    full = reference(q, k, v, [(0, 9)], 0.5)
    ours, _ = fa4_varlen_attention(_Causal(), q[:, :, 6:], k, v, None, scaling=0.5,
                                   position_ids=torch.arange(6, 9)[None], kernel=StandIn())
    torch.testing.assert_close(ours, full[:, 6:])


def test_what_the_kernel_cannot_do_is_refused_not_ignored():
    q = torch.zeros(1, 2, 3, 4)
    for option in ({"sliding_window": 2}, {"softcap": 30.0}, {"dropout": 0.1}):
        with pytest.raises(NotImplementedError, match="full attention without dropout"):
            fa4_varlen_attention(_Causal(), q, q, q, None, kernel=StandIn(), **option)


def test_a_registered_model_gives_each_packed_sequence_its_own_logits(monkeypatch):
    """A real Qwen3 under the registered name, the kernel replaced by the stand-in: [a | b] packed with restarting
    positions gives the logits of a and b run alone under eager attention."""
    from transformers import Qwen3Config, Qwen3ForCausalLM

    import sdpo_ext.plugin  # noqa: F401  (registers the attention, as `import verl` does in every worker)

    monkeypatch.setattr(fa4_attention, "_kernel", lambda: StandIn())
    torch.manual_seed(0)
    config = Qwen3Config(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, head_dim=8, attn_implementation="eager")
    model = Qwen3ForCausalLM(config).eval()
    a, b = torch.randint(0, 64, (1, 7)), torch.randint(0, 64, (1, 5))
    with torch.no_grad():
        alone = torch.cat([model(a).logits[0], model(b).logits[0]])
        model.set_attn_implementation(ATTN_IMPLEMENTATION)
        packed = model(input_ids=torch.cat([a, b], 1), position_ids=packed_positions((7, 5)), attention_mask=None,
                       use_cache=False).logits[0]
    torch.testing.assert_close(packed, alone, rtol=0, atol=1e-5)


def test_a_row_with_a_shared_prefix_once_is_one_call_on_the_gathered_keys(monkeypatch):
    """The packed shared-prefix teacher's row (tests/sdpo_ext/attention/test_varlen_attention.py) through fa4_varlen
    with the stand-in kernel: one call whose keys are gathered per span, the same logits as each whole sequence."""
    from tests.sdpo_ext.attention.test_varlen_attention import (
        _tiny_qwen3,
        shared_prefix_case,
        shared_prefix_logits,
        whole_sequence_logits,
    )

    kernel = StandIn()
    monkeypatch.setattr(fa4_attention, "_kernel", lambda: kernel)
    model = _tiny_qwen3(ATTN_IMPLEMENTATION)
    prompts, responses, shared = shared_prefix_case()
    ours = shared_prefix_logits(model, prompts, responses, shared)
    model.set_attn_implementation("eager")  # its softmax runs in fp32
    torch.testing.assert_close(ours, whole_sequence_logits(model, prompts, responses), rtol=0, atol=1e-6)
    first = kernel.calls[0]  # layer 0: the prefix once (9), each rest; the rests' keys include the prefix
    assert first["cu_seqlens_q"].tolist() == [0, 9, 14, 23, 30, 38] and first["q_rows"] == 38
    assert first["cu_seqlens_k"].diff().tolist() == [9, 14, 18, 16, 8] and type(first["max_seqlen_k"]) is int
    assert len(kernel.calls) == 2  # one per layer
