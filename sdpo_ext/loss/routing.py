"""Which loss each sample of a batch gets, and with what weight (pure python; the weights' formulas are in
distill_weights.py).

variant "sdpo": every sample with a teacher signal is distilled with weight 1 (the paper, the authors' code).
variant "sc_sdpo" (arXiv 2605.27765): the distillation loss of every sample of question q is weighted by
  sqrt(p̂_q (1 − p̂_q)), p̂_q the pass rate of q's group, normalised over the batch's questions with 0 < p̂ < 1
  (``distill_weights.pass_rate_weights``).
variant "srpo" (arXiv 2604.02288): a failed sample whose group has a correct sample (a sibling to learn from) is
  distilled, z_SDPO = (1 − c_i)·m_i; every other sample takes verl's PPO-clip loss on its GRPO advantage,
  z_GRPO = 1 − z_SDPO (0 in a group where every sample failed). The worker further weights the distilled tokens by the
  teacher's entropy.

Contract: infrastructure failures get weight 0 in both terms and never count in a pass rate; a group whose
samples are all infra has no pass rate (its samples get 0).
"""
from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import torch

from sdpo_ext.loss.distill_weights import pass_rate_weights

VARIANTS = ("sdpo", "sc_sdpo", "srpo")


@dataclass(frozen=True)
class SampleWeights:
    """Per-sample weights [B]: ``distill`` multiplies the distillation loss, ``policy_gradient`` the
    advantage of the PPO-clip term (0 everywhere except in SRPO)."""

    distill: list[float]
    policy_gradient: list[float]


def group_pass_rates(uids: Sequence[Hashable], success: Sequence[bool], infra: Sequence[bool]) -> list[float | None]:
    """Per sample: the fraction of its group's non-infra samples that succeeded (None if the group has none)."""
    if not len(uids) == len(success) == len(infra):
        raise ValueError(f"uids, success and infra differ in length: {len(uids)}, {len(success)}, {len(infra)}")
    counts: dict[Hashable, list[int]] = {}
    for uid, ok, bad in zip(uids, success, infra):
        if not bad:
            seen = counts.setdefault(uid, [0, 0])
            seen[0] += bool(ok)
            seen[1] += 1
    return [counts[uid][0] / counts[uid][1] if uid in counts else None for uid in uids]


def sample_weights(
    variant: str, uids: Sequence[Hashable], success: Sequence[bool], infra: Sequence[bool]
) -> SampleWeights:
    """Distillation and policy-gradient weights of each sample under ``variant`` (see the module docstring)."""
    if variant not in VARIANTS:
        raise ValueError(f"sdpo.variant must be one of {VARIANTS}, got {variant!r}")
    valid = [not bad for bad in infra]
    if variant == "sdpo":
        return SampleWeights([float(v) for v in valid], [0.0] * len(uids))
    rates = group_pass_rates(uids, success, infra)
    if variant == "srpo":
        routed = [v and not ok and (rate or 0.0) > 0 for v, ok, rate in zip(valid, success, rates)]
        return SampleWeights([float(r) for r in routed], [float(v and not r) for v, r in zip(valid, routed)])
    groups = list(dict.fromkeys(uid for uid, rate in zip(uids, rates) if rate is not None))
    rate_of = dict(zip(uids, rates))
    rates = torch.tensor([rate_of[g] for g in groups], dtype=torch.float64)
    weight_of = dict(zip(groups, pass_rate_weights(rates).tolist()))
    return SampleWeights([weight_of[uid] if v else 0.0 for uid, v in zip(uids, valid)], [0.0] * len(uids))
