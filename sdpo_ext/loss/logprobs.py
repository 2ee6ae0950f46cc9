"""Log-probabilities of softmax(logits / T) over the vocabulary, row-chunked so that no full-size fp32 copy of the
logits stays alive: at chosen ids (``gather_logp``, the student's top-K ``student_topk``, the sampled tokens
``token_log_probs``), the full log-softmax, and the rows' log-normalisers and entropies (``softmax_stats``).

Contract: logits are ``[N, V]`` floating point, N rows (response positions), V the vocabulary; results are at least
fp32 (fp64 kept) and normalised over the full vocabulary; temperature T > 0.
"""

from __future__ import annotations

import torch
import torch.utils.checkpoint


class _GatheredLogSoftmax(torch.autograd.Function):
    """log_softmax(x / T) of a 2-D tensor at ``ids`` [N, k], in fp32, ``chunk_rows`` rows at a time (or from the
    rows' log-normalisers ``lse`` when the caller has them: no pass over the vocabulary then).

    Saves only the input (which the model keeps anyway), the ids and the [N] log-normalisers; the
    backward recomputes softmax chunk by chunk and writes ONE gradient buffer in the logits' dtype:
    d/dx_v = (g_v - p_v * sum_k g_k) / T with g scattered at the ids. No full-size fp32 copy stays alive.
    """

    @staticmethod
    def forward(ctx, logits: torch.Tensor, ids: torch.Tensor, temperature: float, chunk_rows: int,
                lse: torch.Tensor | None) -> torch.Tensor:
        out_dtype = torch.promote_types(logits.dtype, torch.float32)
        if lse is None:
            lse = torch.empty(logits.shape[0], dtype=out_dtype, device=logits.device)
            for start in range(0, logits.shape[0], chunk_rows):
                block = logits[start:start + chunk_rows].to(out_dtype)
                lse[start:start + chunk_rows] = torch.logsumexp(block / temperature if temperature != 1.0 else block,
                                                                dim=-1)
        lse = lse.to(out_dtype)
        ctx.save_for_backward(logits, ids, lse)
        ctx.temperature = temperature
        ctx.chunk_rows = chunk_rows
        return torch.gather(logits, -1, ids).to(out_dtype) / temperature - lse[:, None]

    @staticmethod
    def backward(ctx, grad_out: torch.Tensor):
        logits, ids, lse = ctx.saved_tensors
        grad = torch.empty_like(logits)
        for start in range(0, logits.shape[0], ctx.chunk_rows):
            stop = start + ctx.chunk_rows
            g_out = grad_out[start:stop].to(lse.dtype)
            # in place on one fp32 copy of the chunk: −softmax, then the gathered gradients added at the ids
            block = logits[start:stop].to(lse.dtype, copy=True)
            if ctx.temperature != 1.0:
                block.div_(ctx.temperature)
            block.sub_(lse[start:stop, None]).exp_().neg_()
            block.mul_(g_out.sum(-1, keepdim=True)).scatter_add_(-1, ids[start:stop], g_out)
            if ctx.temperature != 1.0:
                block.div_(ctx.temperature)
            grad[start:stop] = block
        return grad, None, None, None, None


def _check_logits(name: str, logits: torch.Tensor) -> None:
    if logits.dim() != 2 or logits.shape[-1] < 1:
        raise ValueError(f"{name} must be [N, V] with V >= 1, got shape {tuple(logits.shape)}")
    if not logits.is_floating_point():
        raise ValueError(f"{name} must be floating point, got {logits.dtype}")


def _check_temperature(temperature: float) -> float:
    temperature = float(temperature)
    if not temperature > 0.0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    return temperature


def full_log_softmax(logits: torch.Tensor, temperature: float = 1.0, chunk_rows: int | None = None) -> torch.Tensor:
    """[N, V] -> [N, V]: log_softmax(logits / T) in fp32, computed ``chunk_rows`` rows at a time."""
    _check_logits("logits", logits)
    temperature = _check_temperature(temperature)
    step = chunk_rows or max(1, logits.shape[0])
    parts = []
    for start in range(0, logits.shape[0], step):
        block = logits[start:start + step]
        block = block / temperature if temperature != 1.0 else block
        parts.append(torch.log_softmax(block, dim=-1, dtype=torch.promote_types(block.dtype, torch.float32)))
    if not parts:  # no rows
        return torch.empty(logits.shape, dtype=torch.promote_types(logits.dtype, torch.float32), device=logits.device)
    return torch.cat(parts, dim=0) if len(parts) != 1 else parts[0]


@torch.no_grad()
def softmax_stats(logits: torch.Tensor, chunk_rows: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """[N, V] -> (log-normaliser lse = log Σ_v exp x_v [N], entropy H = −Σ_v p_v log p_v [N]) of softmax(logits),
    at least fp32, no gradient: one read of each ``chunk_rows`` block gives both, so a caller that needs the
    log-probs at a few ids (``gather_logp(..., log_normalizer=lse)``) and the entropy makes no other pass."""
    _check_logits("logits", logits)
    step = chunk_rows or max(1, logits.shape[0])
    dtype = torch.promote_types(logits.dtype, torch.float32)
    lse = torch.empty(logits.shape[0], dtype=dtype, device=logits.device)
    ent = torch.empty_like(lse)
    for start in range(0, logits.shape[0], step):
        block = logits[start:start + step].to(dtype)
        block_lse = torch.logsumexp(block, dim=-1)
        # in place only on the fp32 copy that .to() made of lower-precision logits, never on the caller's tensor
        logp = block.sub_(block_lse[:, None]) if dtype != logits.dtype else block - block_lse[:, None]
        lse[start:start + step] = block_lse
        # a −inf logit (a masked token) has p = 0: clamping its log p to the dtype's least finite value makes its
        # p·log p 0 instead of NaN
        logp.clamp_(min=torch.finfo(logp.dtype).min)
        ent[start:start + step] = -torch.linalg.vecdot(torch.exp(logp), logp)
    return lse, ent


def entropy(logits: torch.Tensor, chunk_rows: int | None = None) -> torch.Tensor:
    """[N, V] -> [N] fp32: H = −Σ_v p_v log p_v of softmax(logits), ``chunk_rows`` rows at a time, no gradient."""
    return softmax_stats(logits, chunk_rows)[1].float()


def student_topk(
    student_logits: torch.Tensor, k: int, temperature: float = 1.0, chunk_rows: int | None = None,
    log_normalizer: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """[N, V] -> (log-probs [N, k] fp32, ids [N, k]): the student's k most likely tokens and their
    true log-probabilities log_softmax(logits / T) (normalised over the full vocabulary; ``log_normalizer`` as in
    ``gather_logp``)."""
    _check_logits("student_logits", student_logits)
    temperature = _check_temperature(temperature)
    if not 1 <= int(k) <= student_logits.shape[-1]:
        raise ValueError(f"k must be in [1, V={student_logits.shape[-1]}], got {k}")
    step = chunk_rows or max(1, student_logits.shape[0])
    detached = student_logits.detach()
    ids = torch.cat(
        [torch.topk(detached[i:i + step], int(k), dim=-1).indices for i in range(0, detached.shape[0], step)]
        or [torch.empty((0, int(k)), dtype=torch.long, device=detached.device)]
    )
    return gather_logp(student_logits, ids, temperature, chunk_rows, log_normalizer), ids


def gather_logp(
    logits: torch.Tensor, ids: torch.Tensor, temperature: float = 1.0, chunk_rows: int | None = None,
    log_normalizer: torch.Tensor | None = None,
) -> torch.Tensor:
    """[N, V], ids [N, k] -> [N, k]: log_softmax(logits / T) at ``ids``, fp32, without materialising
    the full log-softmax (gathered logit minus the row's log-normaliser). ``log_normalizer`` [N], at T = 1 only: the
    rows' logsumexp(logits) when the caller has it (``softmax_stats``); the forward then reads only the ids."""
    _check_logits("logits", logits)
    temperature = _check_temperature(temperature)
    if ids.dim() != 2 or ids.shape[0] != logits.shape[0]:
        raise ValueError(f"ids must be [N={logits.shape[0]}, k], got shape {tuple(ids.shape)}")
    if chunk_rows is not None and chunk_rows < 1:
        raise ValueError(f"chunk_rows must be >= 1 or None, got {chunk_rows}")
    if log_normalizer is not None and log_normalizer.shape != logits.shape[:1]:
        raise ValueError(f"log_normalizer must be [N={logits.shape[0]}], got shape {tuple(log_normalizer.shape)}")
    if log_normalizer is not None and temperature != 1.0:  # softmax_stats normalises the logits as they are
        raise ValueError(f"a log_normalizer is only taken at temperature 1, got {temperature}")
    return _GatheredLogSoftmax.apply(logits, ids, temperature, chunk_rows or max(1, logits.shape[0]),
                                     None if log_normalizer is None else log_normalizer.detach())


def _log_softmax_at(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    return torch.log_softmax(logits, dim=-1).gather(-1, labels.unsqueeze(-1)).squeeze(-1)


def token_log_probs(logits: torch.Tensor, labels: torch.Tensor, *, fp32: bool, chunk_rows: int = 1024) -> torch.Tensor:
    """[N, V], labels [N] -> [N] fp32: log_softmax(logits)[i, labels[i]], the per-token log-probs verl's engine gives
    a policy loss. ``fp32``: in float32 (what flash-attn's cross-entropy kernel gives); else in the logits' dtype, the
    value of verl's fallback (logprobs_from_logits_v2, log_softmax row by row), so that both match the old log-probs
    verl computed the same way. ``chunk_rows`` rows per kernel, each chunk recomputed in the backward instead of
    keeping its log-softmax; verl's fallback launches one log_softmax per row, which is one token once padding is
    removed."""
    _check_logits("logits", logits)
    if labels.shape != logits.shape[:1]:
        raise ValueError(f"labels must be [N={logits.shape[0]}], got shape {tuple(labels.shape)}")
    if fp32:
        return gather_logp(logits, labels.unsqueeze(-1), chunk_rows=chunk_rows).squeeze(-1)
    # split, not slicing: a slice's backward writes a full-size zero gradient per chunk
    parts = [torch.utils.checkpoint.checkpoint(_log_softmax_at, rows, row_labels, use_reentrant=False)
             for rows, row_labels in zip(logits.split(chunk_rows), labels.split(chunk_rows))]
    return torch.cat(parts).float() if parts else logits.new_zeros(0, dtype=torch.float32)
