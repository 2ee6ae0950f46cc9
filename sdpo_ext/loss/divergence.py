"""Divergences between a student and a teacher next-token distribution over a common support: the full
vocabulary, or K gathered ids plus a tail bucket holding the mass outside them.

Conventions: every ``*_logp`` tensor holds natural-log probabilities; the last dimension of a distribution tensor is
its support. The teacher is a constant (detached here), so gradients reach the student only. Formulas and departures:
docs/sdpo_math.md ("Per-token divergence", "Top-K support").
"""

from __future__ import annotations

import math

import torch

# The authors clamp log(sum p) to <= -1e-7 before log(1 - sum p), so the tail bucket always
# keeps at least ~1e-7 of mass and never becomes log(0) = -inf or NaN.
TAIL_LOG_MASS_CLAMP = -1e-7


def as_float(t: torch.Tensor) -> torch.Tensor:
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
    s = as_float(student_logp)
    t = as_float(teacher_logp.detach()).to(s.dtype)
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
