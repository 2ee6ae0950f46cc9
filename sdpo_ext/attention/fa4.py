"""flash-attn-4's varlen kernel for verl's packed rows, called with host-integer length bounds.

Why not transformers' own `flash_attention_4` on Hopper: for a packed row (no mask, positions restarting at 0)
transformers 5.9 derives `max_seqlen_q/k` as 0-d tensors (`prepare_fa_kwargs_from_position_ids`:
`cu_seq_lens.diff().max()`) and passes them on unless it is tracing. flash-attn-4 4.0.0b36 drops tensor hints only on
Blackwell (`_flash_attn_fwd`: `if arch // 10 in [10, 11]`); on Hopper the tensor reaches `cute.ceil_div`, which
raises "Expected IntTuple, whose leaves are integers, but got …": in verl's packed engine every algorithm failed on
its first forward (bench/step_time/README.md, packed step time). Departure from verl's default attention, with this
reason; the kernel, its layout and its causal convention are flash-attn's own.

Contract (transformers' AttentionInterface): query [B, Hq, Lq, D], key/value [B, Hkv, Lk, D] -> ([B, Lq, Hq, D],
None). The sequences are those `sdpo_ext.attention.varlen` finds: per row, where the positions restart (packed);
the kept tokens of each row (a 2-D padding mask); or one sequence per row, causal aligned to its end when Lq < Lk
(queries on a KV cache, the shared-prefix teacher). They are flattened to [total, H, D] with cumulative lengths
`cu_seqlens` and integer `max_seqlen`, flash-attn's varlen layout; GQA stays grouped (the kernel takes Hkv | Hq).
With `KEY_SPANS` (`sdpo_ext.attention.varlen.KeySpans`: the packed shared-prefix teacher) the query spans and their
keys are the ones it names: the keys and values are gathered by its `key_index`, and the kernel's causal mask is
aligned to the end of each span's keys.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Optional

import torch

from sdpo_ext.attention.varlen import KEY_SPANS, sequence_bounds, text_positions

ATTN_IMPLEMENTATION = "fa4_varlen"
"""The value of `actor_rollout_ref.model.override_config.attn_implementation` that selects this attention."""


def _kernel() -> Callable:
    from flash_attn.cute import flash_attn_varlen_func

    return flash_attn_varlen_func


def _segments(batch: int, lq: int, lk: int, attention_mask: Optional[torch.Tensor],
              position_ids: Optional[torch.Tensor]) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """Per sequence, the flat query and key indices into [B * Lq] and [B * Lk]."""
    queries, keys = [], []
    for b in range(batch):
        if attention_mask is not None:
            if lq != lk:
                raise NotImplementedError(f"attn_implementation={ATTN_IMPLEMENTATION} does not combine a padding "
                                          "mask with a KV cache")
            kept = attention_mask[b, -lk:].nonzero().flatten() + b * lq
            queries.append(kept)
            keys.append(kept)
        elif lq != lk or position_ids is None:
            queries.append(torch.arange(b * lq, (b + 1) * lq))
            keys.append(torch.arange(b * lk, (b + 1) * lk))
        else:
            rows = position_ids[b if position_ids.shape[0] > 1 else 0]
            for start, end in sequence_bounds(rows, lq):
                span = torch.arange(b * lq + start, b * lq + end)
                queries.append(span)
                keys.append(span)
    return queries, keys


def _cumulative(segments: list[torch.Tensor], device: torch.device) -> torch.Tensor:
    lengths = torch.tensor([0, *(len(s) for s in segments)], dtype=torch.int32)
    return lengths.cumsum(0, dtype=torch.int32).to(device)


def fa4_varlen_attention(
    module: torch.nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: Optional[torch.Tensor],
    dropout: float = 0.0,
    scaling: Optional[float] = None,
    sliding_window: Optional[int] = None,
    softcap: Optional[float] = None,
    is_causal: Optional[bool] = None,
    kernel: Optional[Callable] = None,
    **kwargs,
) -> tuple[torch.Tensor, None]:
    """flash-attn-4 varlen attention within each sequence (module docstring). `kernel` replaces
    `flash_attn.cute.flash_attn_varlen_func` (tests)."""
    if dropout or sliding_window is not None or softcap is not None or kwargs.get("s_aux") is not None:
        raise NotImplementedError(f"attn_implementation={ATTN_IMPLEMENTATION} supports full attention without "
                                  "dropout only (no sliding window, softcap or attention sinks): use flash_attention_4")
    batch, heads, lq, dim = query.shape
    lk = key.shape[2]
    causal = getattr(module, "is_causal", True) if is_causal is None else is_causal
    spans = kwargs.get(KEY_SPANS)
    if spans is not None:
        if batch != 1 or attention_mask is not None or lq != lk:
            raise NotImplementedError(f"{KEY_SPANS} takes one packed row without padding mask or KV cache")
        index = spans.key_index.to(query.device)
        out = (kernel or _kernel())(
            query[0].transpose(0, 1), key[0].transpose(0, 1)[index], value[0].transpose(0, 1)[index],
            cu_seqlens_q=spans.cu_seqlens_q.to(query.device), cu_seqlens_k=spans.cu_seqlens_k.to(query.device),
            max_seqlen_q=spans.max_seqlen_q, max_seqlen_k=spans.max_seqlen_k, softmax_scale=scaling, causal=causal)
        return (out[0] if isinstance(out, tuple) else out).reshape(1, lq, heads, -1), None
    position_ids = text_positions(kwargs, ATTN_IMPLEMENTATION)
    q_idx, k_idx = _segments(batch, lq, lk, attention_mask, position_ids)
    flat = query.transpose(1, 2).reshape(batch * lq, heads, dim)
    keys = key.transpose(1, 2).reshape(batch * lk, key.shape[1], dim)
    values = value.transpose(1, 2).reshape(batch * lk, value.shape[1], value.shape[3])
    kept = None
    if attention_mask is not None:  # only padding leaves gaps; otherwise the segments tile the rows in order
        kept = torch.cat(q_idx).to(query.device)
        flat, keys, values = flat[kept], keys[kept], values[kept]
    out = (kernel or _kernel())(
        flat, keys, values,
        cu_seqlens_q=_cumulative(q_idx, query.device), cu_seqlens_k=_cumulative(k_idx, query.device),
        max_seqlen_q=max(len(s) for s in q_idx), max_seqlen_k=max(len(s) for s in k_idx),
        softmax_scale=scaling, causal=causal)
    out = out[0] if isinstance(out, tuple) else out
    if kept is None:
        return out.reshape(batch, lq, heads, -1), None
    full = out.new_zeros(batch * lq, heads, out.shape[-1])
    full[kept] = out
    return full.reshape(batch, lq, heads, -1), None
