"""Teacher prompts that share a prefix within a group, and the teacher's KV cache of that prefix.

A group's teacher prompts start alike: the chat template and the original prompt; in a solved group every failed
sample is shown the same sibling's proof, so their teacher prompts are identical. With
`sdpo.teacher.share_prompt_prefix` the teacher forward computes that prefix once per group and, per sample, only the
rest: the logits at the response rows are those of the whole sequence (same tokens, positions and causal attention),
up to rounding. Two ways: on the packed path (padding removed, `sdpa_varlen` or `fa4_varlen` attention) one forward
of a row where each distinct prefix appears once and every sample's rest attends to it (`prefix_packing`); otherwise
sample by sample on the prefix's KV cache (`PrefixKVCache`).
"""
from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
import torch

# tokens: a shorter shared prefix is not worth a cached forward
MIN_SHARED_PREFIX = 64
# the batch field (int64 [B]) the driver sends: each sample's shared prefix length (0: none)
TEACHER_PREFIX_LEN = "sdpo_teacher_prefix_len"


def full_attention_only(hf_config: Any) -> bool:
    """Whether every layer attends to all earlier tokens: a cached prefix is then exact. Sliding-window layers drop
    old tokens and linear-attention layers (Qwen3.5) keep a running state, which a prefix cache cannot share."""
    config = getattr(hf_config, "text_config", None) or hf_config
    layer_types = getattr(config, "layer_types", None) or ()
    return not getattr(config, "use_sliding_window", False) and all(t == "full_attention" for t in layer_types)


def _common_prefix(a: np.ndarray, b: np.ndarray) -> int:
    n = min(len(a), len(b))
    differ = np.flatnonzero(a[:n] != b[:n])
    return int(differ[0]) if len(differ) else n


def group_prefix_lengths(prompts: Sequence[Optional[Sequence[int]]], uids: Sequence[Hashable],
                         active: Sequence[bool]) -> list[int]:
    """Per sample, the longest prefix its teacher prompt shares with another active teacher prompt of its group, at
    most its length - 1 (so the row predicting its first response token is computed with the rest of the prompt). 0
    for an inactive sample, the only active sample of its group, or a shared prefix under MIN_SHARED_PREFIX tokens.
    With another, not every, prompt: a solved group's correct sample is shown something else than its failed siblings,
    who all see the same proof and so share their whole prompts."""
    if not len(prompts) == len(uids) == len(active):
        raise ValueError(f"prompts, uids and active differ in length: {len(prompts)}, {len(uids)}, {len(active)}")
    groups: dict[Hashable, list[int]] = {}
    for i, (uid, on) in enumerate(zip(uids, active)):
        if on:
            if prompts[i] is None:
                raise ValueError(f"sample {i} is active but has no teacher prompt")
            groups.setdefault(uid, []).append(i)
    lengths = [0] * len(prompts)
    for members in groups.values():
        ids = {i: np.asarray(prompts[i]) for i in members}
        for i in members:
            shared = max((_common_prefix(ids[i], ids[j]) for j in members if j != i), default=0)
            length = min(shared, len(ids[i]) - 1)
            lengths[i] = length if length >= MIN_SHARED_PREFIX else 0
    return lengths


def micro_batch_group(lengths: Sequence[int], group_size: int, cap: int) -> int:
    """How many consecutive samples verl's dynamic batching should keep in one micro-batch (its `force_group_size`) so
    that a group's teacher prompts meet in one teacher row: the largest g dividing `group_size` and len(lengths)
    whose blocks of g consecutive sequences (`lengths`, tokens) each fit `cap`; 1 when no larger one does. verl's own
    balancing spreads a group's samples over micro-batches, where no prefix is shared. Consecutive samples are a
    group's on one GPU (the rollout's order); with several, verl's batch balancing deals a group's samples out to
    the ranks, and blocks may then mix groups: the logits stay the same, less is shared."""
    def fits(g: int) -> bool:
        return all(sum(lengths[s:s + g]) <= cap for s in range(0, len(lengths), g))

    return max([1] + [g for g in range(2, group_size + 1) if group_size % g == 0 and len(lengths) % g == 0 and fits(g)])


def _same_prefix(cached: Optional[torch.Tensor], prefix: torch.Tensor) -> bool:
    return cached is not None and torch.equal(cached, prefix.cpu())


def forward_calls(prefixes: Sequence[Optional[torch.Tensor]], cached: Optional[torch.Tensor]) -> int:
    """Teacher module calls for samples with these shared prefixes (None: none), given the prefix in the cache: one
    per sample, plus one per prefix that is not the last one cached (PrefixKVCache holds one)."""
    calls, last = 0, cached
    for prefix in prefixes:
        calls += 1
        if prefix is not None and not _same_prefix(last, prefix):
            calls, last = calls + 1, prefix.cpu()
    return calls


class PrefixKVCache:
    """The KV cache of the last prefix computed: one group at a time, since verl's micro-batches keep a group's
    samples together (a shuffled mini-batch only costs hits). `clear()` whenever the teacher's weights change."""

    def __init__(self):
        self._prefix: Optional[torch.Tensor] = None
        self._cache: Any = None
        self.computed = 0  # prefix forwards
        self.reused = 0  # samples that reused one

    def get(self, prefix: torch.Tensor, compute: Callable[[torch.Tensor], Any]) -> Any:
        """The cache of `prefix` (1-D token ids): the stored one if it is the same prefix, else `compute(prefix)`."""
        if _same_prefix(self._prefix, prefix):
            self.reused += 1
            return self._cache
        self.clear()
        self._cache = compute(prefix)
        self._prefix = prefix.cpu().clone()
        self.computed += 1
        return self._cache

    @property
    def prefix(self) -> Optional[torch.Tensor]:
        """The cached prefix (CPU token ids), None when empty."""
        return self._prefix

    def clear(self) -> None:
        """Drop the cached prefix and its KV cache."""
        self._prefix, self._cache = None, None


@contextmanager
def extended(cache: Any) -> Iterator[Any]:
    """A prefix's KV cache (transformers' DynamicCache) for one forward on top of it; afterwards each layer holds the
    prefix's own key and value tensors again, rather than a slice that would keep the longer ones' memory alive."""
    saved = [(layer.keys, layer.values) for layer in cache.layers]
    try:
        yield cache
    finally:
        for layer, (keys, values) in zip(cache.layers, saved):
            layer.keys, layer.values = keys, values


@dataclass(frozen=True)
class PrefixPacking:
    """One packed row of teacher sequences whose shared prefixes appear once (`prefix_packing`).

    spans: token ids of each span, in row order; starts: each span's first position; owners: per span, the sample
    (index into the inputs) whose temperature it takes; key_index, cu_seqlens_k: span s (rows cu_seqlens_q[s] ..
    cu_seqlens_q[s+1]) attends to rows key_index[cu_seqlens_k[s]:cu_seqlens_k[s+1]], causally aligned to their end;
    rows: per sample in input order, the rows predicting its response tokens (as `packed_rows.response_logit_rows`)."""

    spans: list[torch.Tensor]
    starts: list[int]
    owners: list[int]
    key_index: torch.Tensor
    cu_seqlens_q: torch.Tensor
    cu_seqlens_k: torch.Tensor
    rows: torch.Tensor


def prefix_packing(prompts: Sequence[torch.Tensor], responses: Sequence[torch.Tensor],
                   shared: Sequence[int]) -> PrefixPacking:
    """The samples' [teacher prompt | response] in one row, each distinct shared prefix (prompt[:P], P = shared[i];
    0: none) once: a prefix span at positions 0..P-1 attends to itself; a sample's rest (prompt[P:] + response) at
    positions P.. attends to its prefix span and itself. Per layer the keys and values of every position equal the
    whole sequence's, so the logits do too, up to rounding; the model runs Σ_prefixes P + Σ_i (L_i - P_i) tokens
    instead of Σ_i L_i. Requires P < len(prompt) (the row predicting the first response token is in the rest)."""
    if not len(prompts) == len(responses) == len(shared):
        raise ValueError(f"prompts, responses and shared differ in length: {len(prompts)}, {len(responses)}, "
                         f"{len(shared)}")
    spans, starts, owners, keys, rows = [], [], [], [], []
    prefix_rows: dict[tuple[int, ...], torch.Tensor] = {}
    offset = 0
    for i, (prompt, response, length) in enumerate(zip(prompts, responses, shared)):
        length = int(length)
        if not 0 <= length < len(prompt):
            raise ValueError(f"sample {i}: shared prefix {length} must lie in [0, {len(prompt)}) (its prompt length)")
        before = torch.empty(0, dtype=torch.long)
        if length:
            key = tuple(prompt[:length].tolist())
            if key not in prefix_rows:
                prefix_rows[key] = torch.arange(offset, offset + length)
                spans.append(prompt[:length])
                starts.append(0)
                owners.append(i)
                keys.append(prefix_rows[key])
                offset += length
            before = prefix_rows[key]
        rest = torch.cat([prompt[length:], response.to(prompt.device)])
        spans.append(rest)
        starts.append(length)
        owners.append(i)
        keys.append(torch.cat([before, torch.arange(offset, offset + len(rest))]))
        first = offset + len(prompt) - length - 1
        rows.append(torch.arange(first, first + len(response)))
        offset += len(rest)
    cumulative = lambda lengths: torch.tensor([0, *lengths]).cumsum(0).to(torch.int32)  # noqa: E731
    return PrefixPacking(spans=spans, starts=starts, owners=owners,
                         key_index=torch.cat(keys) if keys else torch.empty(0, dtype=torch.long),
                         cu_seqlens_q=cumulative([len(s) for s in spans]),
                         cu_seqlens_k=cumulative([len(k) for k in keys]),
                         rows=torch.cat(rows) if rows else torch.empty(0, dtype=torch.long))
