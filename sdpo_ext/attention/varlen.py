"""Varlen attention in pure PyTorch: each packed sequence attends only to itself, without flash-attn.

verl's remove-padding forward (`actor_rollout_ref.model.use_remove_padding=true`, what every Lean recipe ships) calls
the model on one row `[1, T]` that holds several sequences back to back, with `attention_mask=None` and positions
that restart at 0 for each sequence. flash-attn's varlen kernel keeps the sequences apart; this module does the same
with torch's SDPA, one causal call per sequence:

    O[s] = softmax(Q[s] K[s]^T * scale + causal) V[s]        for each packed sequence s = [start_s, end_s)

so the work is sum_s L_s^2 and no T x T mask is ever built. A sequence starts where a position does not follow the
previous one (p_t != p_{t-1} + 1), the rule transformers' `find_packed_sequence_indices` and flash-attn's
`prepare_fa_kwargs_from_position_ids` use. With a 2-D padding mask (padding kept) each row's kept tokens form its
sequence, as flash-attn's unpad does; padded rows come back as zeros. With a KV cache (queries shorter than keys: the
shared-prefix teacher) the one sequence is causal aligned to its end (query i sees keys up to i + L_k - L_q). With
`KEY_SPANS` among the forward's keywords (`KeySpans`: the packed shared-prefix teacher) each query span of the one row
attends to the keys it names, causal aligned to their end.

It is the CPU path (tests, CI, debugging a packed run without CUDA); on GPUs use flash_attention_2 or, on Hopper and
Blackwell, flash_attention_4. Registered under ATTN_IMPLEMENTATION by `sdpo_ext.plugin`; its mask function is
transformers' flash-attention one (None without padding, else the 2-D mask). The contract of transformers'
AttentionInterface: query [B, Hq, Lq, D], key/value [B, Hkv, Lk, D] -> ([B, Lq, Hq, D], None).
"""
from __future__ import annotations

from typing import NamedTuple, Optional

import torch
import torch.nn.functional as F

ATTN_IMPLEMENTATION = "sdpa_varlen"
"""The value of `actor_rollout_ref.model.override_config.attn_implementation` that selects this attention."""
KEY_SPANS = "sdpo_key_spans"
"""The model-forward keyword (passed on to the attention function) that carries a packed row's `KeySpans`."""


class KeySpans(NamedTuple):
    """One packed row whose query spans attend to keys anywhere in the row (sdpo_ext.teacher.shared_prefix.
    prefix_packing): span s is rows [cu_seqlens_q[s], cu_seqlens_q[s+1]) (the spans tile the row in order) and attends
    to rows key_index[cu_seqlens_k[s]:cu_seqlens_k[s+1]], causal aligned to their end; flash-attn's varlen layout."""

    key_index: torch.Tensor  # int64 [K]
    cu_seqlens_q: torch.Tensor  # int32 [S + 1]
    cu_seqlens_k: torch.Tensor  # int32 [S + 1]
    max_seqlen_q: int
    max_seqlen_k: int

    def to(self, device: torch.device) -> KeySpans:
        """The same spans with their tensors on `device`."""
        return self._replace(key_index=self.key_index.to(device), cu_seqlens_q=self.cu_seqlens_q.to(device),
                             cu_seqlens_k=self.cu_seqlens_k.to(device))


def sequence_bounds(position_ids: Optional[torch.Tensor], length: int) -> list[tuple[int, int]]:
    """[(start, end)] of the packed sequences in one row of `length` positions (position_ids [L] or None: one)."""
    if position_ids is None:
        return [(0, length)]
    breaks = (position_ids[1:] != position_ids[:-1] + 1).nonzero().flatten() + 1
    edges = [0, *breaks.tolist(), length]
    return list(zip(edges[:-1], edges[1:]))


def text_positions(kwargs: dict, implementation: str) -> Optional[torch.Tensor]:
    """transformers' `position_ids` [B or 1, L] of a text model, or None; other shapes (e.g. multimodal rope
    positions) are refused, naming `implementation`."""
    position_ids = kwargs.get("position_ids")
    if position_ids is not None and position_ids.dim() != 2:
        raise NotImplementedError(f"attn_implementation={implementation} takes 1-D positions per row (text models), "
                                  f"not position_ids of shape {tuple(position_ids.shape)}")
    return position_ids


def _causal(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, scale: Optional[float], dropout: float,
            causal: bool) -> torch.Tensor:
    """SDPA of one sequence, [H, Lq, D] x [H, Lk, D]; causal aligned to the end when Lq < Lk (a KV cache)."""
    lq, lk = q.shape[-2], k.shape[-2]
    mask = None
    if causal and lq != lk:
        mask = torch.ones(lq, lk, dtype=torch.bool, device=q.device).tril(diagonal=lk - lq)
    # 4-D on purpose: torch's flash and memory-efficient SDPA kernels take [B, H, L, D]; a 3-D call may fall back to
    # the math kernel, which builds the L x L scores (suspected cause of a slow packed update at 8K:
    # bench/step_time/README.md, packed step time)
    return F.scaled_dot_product_attention(q[None], k[None], v[None], attn_mask=mask, dropout_p=dropout, scale=scale,
                                          is_causal=causal and lq == lk)[0]


def varlen_sdpa_attention(
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
    **kwargs,
) -> tuple[torch.Tensor, None]:
    """Attention within each packed sequence (module docstring); transformers' AttentionInterface signature."""
    if sliding_window is not None or softcap is not None or kwargs.get("s_aux") is not None:
        raise NotImplementedError(f"attn_implementation={ATTN_IMPLEMENTATION} supports full attention only (no "
                                  "sliding window, softcap or attention sinks): use sdpa or flash_attention_2")
    causal = getattr(module, "is_causal", True) if is_causal is None else is_causal
    groups = query.shape[1] // key.shape[1]
    key, value = key.repeat_interleave(groups, dim=1), value.repeat_interleave(groups, dim=1)
    batch, lq, lk = query.shape[0], query.shape[2], key.shape[2]
    out = query.new_zeros(batch, query.shape[1], lq, query.shape[3])
    spans = kwargs.get(KEY_SPANS)
    if spans is not None:
        if batch != 1 or attention_mask is not None or lq != lk:
            raise NotImplementedError(f"{KEY_SPANS} takes one packed row without padding mask or KV cache")
        cu_q, cu_k = spans.cu_seqlens_q.tolist(), spans.cu_seqlens_k.tolist()
        for s in range(len(cu_q) - 1):
            keys = spans.key_index[cu_k[s]:cu_k[s + 1]].to(key.device)
            out[0, :, cu_q[s]:cu_q[s + 1]] = _causal(query[0, :, cu_q[s]:cu_q[s + 1]], key[0][:, keys],
                                                     value[0][:, keys], scale=scaling, dropout=dropout, causal=causal)
        return out.transpose(1, 2).contiguous(), None
    position_ids = text_positions(kwargs, ATTN_IMPLEMENTATION)
    for b in range(batch):
        if attention_mask is not None:  # padding kept: the row's kept tokens are its sequence
            if lq != lk:
                raise NotImplementedError(f"attn_implementation={ATTN_IMPLEMENTATION} does not combine a padding "
                                          "mask with a KV cache")
            kept = attention_mask[b, -lk:].nonzero().flatten()
            out[b, :, kept] = _causal(query[b][:, kept], key[b][:, kept], value[b][:, kept], scale=scaling,
                                      dropout=dropout, causal=causal)
            continue
        if lq != lk:  # queries on top of a KV cache: one sequence
            out[b] = _causal(query[b], key[b], value[b], scale=scaling, dropout=dropout, causal=causal)
            continue
        rows = position_ids[b if position_ids.shape[0] > 1 else 0] if position_ids is not None else None
        for start, end in sequence_bounds(rows, lq):
            out[b, :, start:end] = _causal(query[b, :, start:end], key[b, :, start:end], value[b, :, start:end],
                                           scale=scaling, dropout=dropout, causal=causal)
    return out.transpose(1, 2).contiguous(), None
