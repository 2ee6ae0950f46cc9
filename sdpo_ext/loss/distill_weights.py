"""Weights of the distillation term: SC-SDPO's per-question weight from the group pass rate, and per-token weights
from the teacher's and the student's entropies (``token_weighting``). Both are constants (detached): they scale the
loss, they are not a path for gradients. Formulas and sources: docs/sdpo_math.md ("SDPO-family variants and token
weights").
"""

from __future__ import annotations

import torch

from sdpo_ext.loss.divergence import as_float


def pass_rate_weights(pass_rate: torch.Tensor) -> torch.Tensor:
    """SC-SDPO (arXiv 2605.27765) weight of each question, [Q] -> [Q]:
    w_q = sqrt(p̂_q (1 − p̂_q)) / mean_{l ∈ S} sqrt(p̂_l (1 − p̂_l)), S the questions with 0 < p̂ < 1, p̂_q the pass
    rate of q's group. The mean over S is the batch-adaptive normalisation (S's weights average 1); questions all
    solved or all failed get 0, and so does every question of a batch whose S is empty."""
    if pass_rate.dim() != 1:
        raise ValueError(f"pass_rate must be [Q], got shape {tuple(pass_rate.shape)}")
    p = as_float(pass_rate)
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
    h_t, h_s = as_float(teacher_entropy.detach()), as_float(student_entropy.detach())
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
