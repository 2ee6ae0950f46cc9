"""SDPO loss: the per-token loss matrix (divergence or sampled-token variant, times importance and distillation
weights, masked samples as exact zeros) and its aggregation to a scalar with verl's ``agg_loss`` semantics.

The math it builds on lives beside it in ``sdpo_ext.loss``: ``divergence`` (KL / JSD over a top-K support plus tail
bucket), ``logprobs`` (chunked log-softmax, top-K ids, entropies), ``distill_weights`` (SC-SDPO pass-rate and per-token
weights); import those names from there. Conventions: every ``*_logp`` tensor holds natural-log probabilities; the
teacher is always a constant. Formulas, defaults and departures from the paper / the authors' code (lasgroup/SDPO) are
in docs/sdpo_math.md.
"""

from __future__ import annotations

import torch

from sdpo_ext.loss.divergence import as_float

__all__ = [
    "AGG_MODES", "aggregate_loss", "distillation_loss_matrix", "importance_weights", "sampled_token_loss_matrix",
    "token_advantage",
]

AGG_MODES = ("token-mean", "token-sum", "seq-mean-token-sum", "seq-mean-token-sum-norm", "seq-mean-token-mean")


def token_advantage(student_token_logp: torch.Tensor, teacher_token_logp: torch.Tensor) -> torch.Tensor:
    """Per-token advantage of the sampled-token variant: A_t = log pT(y_t) − log pS(y_t), detached."""
    if student_token_logp.shape != teacher_token_logp.shape:
        raise ValueError(f"shape mismatch: {tuple(student_token_logp.shape)} vs {tuple(teacher_token_logp.shape)}")
    return (as_float(teacher_token_logp) - as_float(student_token_logp)).detach()


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
    ratio = torch.exp((as_float(log_prob) - as_float(old_log_prob)).detach().clamp(-20.0, 20.0))
    if is_clip is not None:
        ratio = ratio.clamp(max=float(is_clip))
    if rollout_is_weights is not None:
        if rollout_is_weights.shape != log_prob.shape:
            raise ValueError(
                f"rollout_is_weights {tuple(rollout_is_weights.shape)} must match log_prob {tuple(log_prob.shape)}"
            )
        ratio = ratio * as_float(rollout_is_weights.detach())
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
    return _apply_sample_mask(_times_weights(as_float(per_token_divergence), is_weights), sample_mask)


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
    loss = -advantage * as_float(student_token_logp)
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
