"""`grpo_valid`: GRPO outcome advantages over the samples that were actually judged.

Samples whose response_mask is all zero (infrastructure failures, masked by the trainer) are left out of
their group's mean and std and get advantage 0, so a Lean server outage never shifts the baseline of the
proofs that were checked. Otherwise identical to verl's `grpo` (same epsilon, same std normalisation).
"""
from __future__ import annotations

from collections import defaultdict
from typing import Optional

import numpy as np
import torch


def grpo_valid_advantage(
    token_level_rewards: torch.Tensor,
    response_mask: torch.Tensor,
    index: np.ndarray,
    epsilon: float = 1e-6,
    norm_adv_by_std_in_grpo: bool = True,
    config: Optional[object] = None,
    **_: object,
) -> tuple[torch.Tensor, torch.Tensor]:
    """A_i = (r_i − mean_g) / (std_g + ε) over valid members of group g (no std division if disabled).
    verl passes registered estimators only `config` (its AlgoConfig); the std switch is read from it
    (`algorithm.norm_adv_by_std_in_grpo`, as verl's own registered estimators do)."""
    if config is not None:
        norm_adv_by_std_in_grpo = config.get("norm_adv_by_std_in_grpo", True)
    scores = token_level_rewards.sum(dim=-1)
    valid = response_mask.sum(dim=-1) > 0
    groups: dict = defaultdict(list)
    for i in range(scores.shape[0]):
        if valid[i]:
            groups[index[i]].append(i)
    advantages = torch.zeros_like(scores)
    with torch.no_grad():
        for members in groups.values():
            group_scores = scores[members]
            if len(members) == 1:
                mean, std = torch.tensor(0.0), torch.tensor(1.0)
            else:
                mean, std = group_scores.mean(), group_scores.std()
            centred = group_scores - mean
            advantages[members] = centred / (std + epsilon) if norm_adv_by_std_in_grpo else centred
    advantages = advantages.unsqueeze(-1) * response_mask
    return advantages, advantages
