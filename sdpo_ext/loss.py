"""SDPO loss math: divergences between student and teacher next-token distributions, the
top-K support, importance weights, the sampled-token variant and loss aggregation.

Conventions: every ``*_logp`` tensor holds natural-log probabilities; the last dimension of a
distribution tensor is its support. The teacher is always a constant (detached here). Formulas,
defaults and departures from the paper / the authors' code (lasgroup/SDPO) are in docs/sdpo_math.md.
"""

from __future__ import annotations

import math

import torch
import torch.utils.checkpoint

AGG_MODES = ("token-mean", "token-sum", "seq-mean-token-sum", "seq-mean-token-sum-norm", "seq-mean-token-mean")

# The authors clamp log(sum p) to <= -1e-7 before log(1 - sum p), so the tail bucket always
# keeps at least ~1e-7 of mass and never becomes log(0) = -inf or NaN.
TAIL_LOG_MASS_CLAMP = -1e-7


def _as_float(t: torch.Tensor) -> torch.Tensor:
    """At least fp32 (fp64 stays fp64, which the gradient checks use)."""
    return t if t.dtype == torch.float64 else t.float()


def _check_alpha(alpha: float) -> float:
    alpha = float(alpha)
    if not 0.0 <= alpha <= 1.0:  # also rejects NaN
        raise ValueError(f"alpha must be in [0, 1] (0 = forward KL, 1 = reverse KL), got {alpha}")
    return alpha


def _plogp_ratio(logp: torch.Tensor, logq: torch.Tensor) -> torch.Tensor:
    """Elementwise p·(log p − log q), with the convention 0·log(0/q) = 0 (p = 0 from log p = −inf)."""
    p = logp.exp()
    return torch.where(p > 0, p * (logp - logq), torch.zeros_like(p))


def kl(p_logp: torch.Tensor, q_logp: torch.Tensor) -> torch.Tensor:
    """KL(p‖q) = Σ p (log p − log q) over the last dimension."""
    return _plogp_ratio(p_logp, q_logp).sum(-1)


def add_tail_bucket(logp: torch.Tensor) -> torch.Tensor:
    """``[..., K] -> [..., K+1]``: append log(1 − Σ_k p_k), the mass outside the support.

    Stable form: log(−expm1(s)) with s = logsumexp(logp) clamped to ≤ −1e-7 (authors' clamp), so a
    support holding all the mass (Σp ≥ 1 through rounding) gives a tail of ~1e-7 instead of NaN.
    """
    if logp.dim() < 1 or logp.shape[-1] < 1:
        raise ValueError(f"add_tail_bucket needs a non-empty last dimension, got shape {tuple(logp.shape)}")
    log_mass = torch.logsumexp(logp, dim=-1, keepdim=True).clamp(max=TAIL_LOG_MASS_CLAMP)
    tail = torch.log(-torch.expm1(log_mass))
    return torch.cat([logp, tail], dim=-1)


def renormalize(logp: torch.Tensor) -> torch.Tensor:
    """log-probabilities renormalised over the last dimension: logp − logsumexp(logp)."""
    return logp - torch.logsumexp(logp, dim=-1, keepdim=True)


def divergence(
    student_logp: torch.Tensor, teacher_logp: torch.Tensor, alpha: float, add_tail: bool = False
) -> torch.Tensor:
    """Per-position divergence between student S and teacher T, ``[..., S] -> [...]``.

    alpha = 0: forward KL(T‖S); alpha = 1: reverse KL(S‖T); 0 < alpha < 1: generalized JSD
    (1−α)·KL(S‖M) + α·KL(T‖M) with M = (1−α)S + αT, log M = logsumexp(log(1−α)+log S, log α+log T).
    ``add_tail`` first appends the tail bucket (see ``add_tail_bucket``) to both; without it both are
    renormalised over the support (authors' top-K rule; a no-op up to rounding on the full vocab). Inputs are
    log-probabilities over a common support (the caller gathers them); computed in fp32 (fp64 kept);
    the teacher is detached, so gradients reach the student only.
    """
    alpha = _check_alpha(alpha)
    if student_logp.shape != teacher_logp.shape:
        raise ValueError(f"student and teacher log-probs must share a shape, got {tuple(student_logp.shape)} "
                         f"vs {tuple(teacher_logp.shape)}")
    if student_logp.dim() < 1 or student_logp.shape[-1] < 1:
        raise ValueError(f"divergence needs a non-empty support dimension, got shape {tuple(student_logp.shape)}")
    s = _as_float(student_logp)
    t = _as_float(teacher_logp.detach()).to(s.dtype)
    if add_tail:
        s, t = add_tail_bucket(s), add_tail_bucket(t)
    else:
        s, t = renormalize(s), renormalize(t)
    if alpha == 0.0:
        return kl(t, s)
    if alpha == 1.0:
        return kl(s, t)
    log_m = torch.logsumexp(torch.stack([s + math.log(1.0 - alpha), t + math.log(alpha)]), dim=0)
    return (1.0 - alpha) * kl(s, log_m) + alpha * kl(t, log_m)


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


def token_advantage(student_token_logp: torch.Tensor, teacher_token_logp: torch.Tensor) -> torch.Tensor:
    """Per-token advantage of the sampled-token variant: A_t = log pT(y_t) − log pS(y_t), detached."""
    if student_token_logp.shape != teacher_token_logp.shape:
        raise ValueError(f"shape mismatch: {tuple(student_token_logp.shape)} vs {tuple(teacher_token_logp.shape)}")
    return (_as_float(teacher_token_logp) - _as_float(student_token_logp)).detach()


def importance_weights(
    log_prob: torch.Tensor,
    old_log_prob: torch.Tensor,
    is_clip: float | None,
    rollout_is_weights: torch.Tensor | None = None,
) -> torch.Tensor:
    """w = min(exp(clamp(log π − log π_old, −20, 20)), is_clip) (no clip if None), times the
    rollout-correction weights when given; detached (a weight, not a path for gradients)."""
    if log_prob.shape != old_log_prob.shape:
        raise ValueError(
            f"log_prob {tuple(log_prob.shape)} and old_log_prob {tuple(old_log_prob.shape)} differ in shape"
        )
    if is_clip is not None and not float(is_clip) > 0.0:
        raise ValueError(f"is_clip must be > 0 or None, got {is_clip}")
    ratio = torch.exp((_as_float(log_prob) - _as_float(old_log_prob)).detach().clamp(-20.0, 20.0))
    if is_clip is not None:
        ratio = ratio.clamp(max=float(is_clip))
    if rollout_is_weights is not None:
        if rollout_is_weights.shape != log_prob.shape:
            raise ValueError(
                f"rollout_is_weights {tuple(rollout_is_weights.shape)} must match log_prob {tuple(log_prob.shape)}"
            )
        ratio = ratio * _as_float(rollout_is_weights.detach())
    return ratio


def _apply_sample_mask(loss_mat: torch.Tensor, sample_mask: torch.Tensor | None) -> torch.Tensor:
    """Zero the rows (samples) without a teacher signal; ``where`` so a NaN there cannot leak."""
    if sample_mask is None:
        return loss_mat
    mask = sample_mask.bool()
    if mask.dim() == 1:
        mask = mask[:, None]
    if mask.shape[0] != loss_mat.shape[0]:
        raise ValueError(f"sample_mask {tuple(sample_mask.shape)} does not match loss matrix {tuple(loss_mat.shape)}")
    return torch.where(mask, loss_mat, torch.zeros((), dtype=loss_mat.dtype, device=loss_mat.device))


def _times_weights(loss_mat: torch.Tensor, is_weights: torch.Tensor | None) -> torch.Tensor:
    if is_weights is None:
        return loss_mat
    if is_weights.shape != loss_mat.shape:
        raise ValueError(f"is_weights {tuple(is_weights.shape)} must match the per-token loss {tuple(loss_mat.shape)}")
    return loss_mat * is_weights.detach()


def distillation_loss_matrix(
    per_token_divergence: torch.Tensor,
    is_weights: torch.Tensor | None,
    sample_mask: torch.Tensor | None = None,
) -> torch.Tensor:
    """Per-token loss ``[B, T]`` = divergence × IS weight; rows with ``sample_mask`` False (no
    teacher signal) become exact zeros (they still count in the normaliser, see aggregate_loss)."""
    return _apply_sample_mask(_times_weights(_as_float(per_token_divergence), is_weights), sample_mask)


def sampled_token_loss_matrix(
    student_token_logp: torch.Tensor,
    teacher_token_logp: torch.Tensor,
    is_weights: torch.Tensor | None,
    sample_mask: torch.Tensor | None = None,
) -> torch.Tensor:
    """Sampled-token variant (alpha = 1 only): l_t = −A_t · w_t · log pS(y_t), A_t = log pT − log pS
    detached, so ∇l_t = −A_t w_t ∇log pS(y_t): the policy gradient with a per-token advantage.
    Its value equals the authors' sg(log pS − log pT)·log pS (times w)."""
    advantage = token_advantage(student_token_logp, teacher_token_logp)
    loss = -advantage * _as_float(student_token_logp)
    return _apply_sample_mask(_times_weights(loss, is_weights), sample_mask)


def _masked_sum(values: torch.Tensor, mask: torch.Tensor, dim: int | None = None) -> torch.Tensor:
    """Σ values·mask over ``dim`` (all if None); values outside the mask (even NaN) contribute 0."""
    valid = torch.where(mask.bool(), values, torch.zeros((), dtype=values.dtype, device=values.device)) * mask
    return valid.sum() if dim is None else valid.sum(dim=dim)


def aggregate_loss(
    loss_mat: torch.Tensor,
    loss_mask: torch.Tensor,
    mode: str,
    dp_size: int = 1,
    batch_num_tokens: int | torch.Tensor | None = None,
    global_batch_size: int | torch.Tensor | None = None,
    loss_scale_factor: float | None = None,
) -> torch.Tensor:
    """Scalar loss from a ``[B, T]`` matrix; the same semantics as verl 0.9.1 ``core_algos.agg_loss``.

    token-mean: Σ l·m / batch_num_tokens · dp (batch_num_tokens defaults to Σ m);
    token-sum: Σ l·m · dp; seq-mean-token-sum: mean over sequences with ≥ 1 token of Σ_t l·m
    (÷ global_batch_size · dp when given); seq-mean-token-sum-norm: the same ÷ loss_scale_factor
    (default T); seq-mean-token-mean: mean over sequences of the per-sequence token mean.
    Pass ``loss_mask`` = response mask to count samples without a teacher signal as zeros in the
    numerator while they stay in the normaliser (no renormalisation).
    """
    if loss_mat.shape != loss_mask.shape or loss_mat.dim() != 2:
        raise ValueError(
            f"loss_mat and loss_mask must both be [B, T], got {tuple(loss_mat.shape)} and {tuple(loss_mask.shape)}"
        )
    if mode not in AGG_MODES:
        raise ValueError(f"Invalid loss_agg_mode: {mode!r}; expected one of {AGG_MODES}")
    if mode == "token-mean":
        if batch_num_tokens is None:
            if dp_size > 1:
                raise ValueError("(global) batch_num_tokens is required when dp_size > 1")
            batch_num_tokens = loss_mask.sum()
        return _masked_sum(loss_mat, loss_mask) / batch_num_tokens * dp_size
    if mode == "token-sum":
        return _masked_sum(loss_mat, loss_mask) * dp_size
    token_count = loss_mask.sum(dim=-1)
    seq_has_tokens = (token_count > 0).to(loss_mat.dtype)
    seq_losses = (loss_mat * loss_mask).sum(dim=-1)
    if mode == "seq-mean-token-mean":
        seq_losses = seq_losses / (token_count + 1e-8)
    if global_batch_size is None:
        if dp_size > 1:
            raise ValueError("global_batch_size is required when dp_size > 1")
        global_batch_size = seq_has_tokens.sum()
    loss = _masked_sum(seq_losses, seq_has_tokens) / global_batch_size * dp_size
    if mode == "seq-mean-token-sum-norm":
        loss = loss / (loss_mask.shape[-1] if loss_scale_factor is None else loss_scale_factor)
    return loss


def pass_rate_weights(pass_rate: torch.Tensor) -> torch.Tensor:
    """SC-SDPO (arXiv 2605.27765) weight of each question, [Q] -> [Q]:
    w_q = sqrt(p̂_q (1 − p̂_q)) / mean_{l ∈ S} sqrt(p̂_l (1 − p̂_l)), S the questions with 0 < p̂ < 1, p̂_q the pass
    rate of q's group. The mean over S is the batch-adaptive normalisation (S's weights average 1); questions all
    solved or all failed get 0, and so does every question of a batch whose S is empty."""
    if pass_rate.dim() != 1:
        raise ValueError(f"pass_rate must be [Q], got shape {tuple(pass_rate.shape)}")
    p = _as_float(pass_rate)
    if bool(((p < 0) | (p > 1)).any()):
        raise ValueError("pass rates must lie in [0, 1]")
    raw = torch.sqrt(p * (1.0 - p))
    in_sweet_spot = (p > 0) & (p < 1)
    return raw / raw[in_sweet_spot].mean() if bool(in_sweet_spot.any()) else torch.zeros_like(raw)


TOKEN_WEIGHTINGS = ("none", "confident", "entropy")


def token_weights(
    teacher_entropy: torch.Tensor,
    student_entropy: torch.Tensor,
    mode: str,
    mask: torch.Tensor,
    beta: float = 1.0,
) -> torch.Tensor:
    """Per-token weight of the distillation loss from the teacher's entropy H_T and the student's H_S, [B, T] each
    (detached, 0 outside ``mask``):

    none: w = 1 (the paper);
    confident: w = 1[H_T ≤ H_S], distil only where the teacher is at least as sure as the student. Departure (ours):
      on a small model a longer teacher context flattens the teacher, and distilling toward a flatter target raises
      the student's entropy; this keeps the positions where the context made the teacher surer;
    entropy: w = w̃ / mean_mask(w̃), w̃ = exp(−β·H_T): SRPO's entropy-aware weight (arXiv 2604.02288, β = 1), normalised
      to mean 1 over the distilled tokens; high-entropy, unreliable teacher targets are suppressed, confident ones
      kept. Departure: the mean runs over the tokens of the micro-batch at hand (the paper: over the batch), since
      verl hands the loss one micro-batch at a time.
    """
    if mode not in TOKEN_WEIGHTINGS:
        raise ValueError(f"token weighting must be one of {TOKEN_WEIGHTINGS}, got {mode!r}")
    if not teacher_entropy.shape == student_entropy.shape == mask.shape:
        raise ValueError(f"entropies and mask must share a shape, got {tuple(teacher_entropy.shape)}, "
                         f"{tuple(student_entropy.shape)}, {tuple(mask.shape)}")
    h_t, h_s = _as_float(teacher_entropy.detach()), _as_float(student_entropy.detach())
    if mode == "none":
        w = torch.ones_like(h_t)
    elif mode == "confident":
        w = (h_t <= h_s).to(h_t.dtype)
    else:
        if not float(beta) >= 0.0:
            raise ValueError(f"beta must be >= 0, got {beta}")
        w = torch.exp(-float(beta) * h_t)
    w = torch.where(mask.bool(), w, torch.zeros_like(w))
    if mode == "entropy" and bool(mask.bool().any()):
        w = w / w[mask.bool()].mean()
    return w
