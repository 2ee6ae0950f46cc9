"""verl settings that the SDPO loss would silently ignore or misread; rejected before any worker starts.

SDPO's loss is the distillation term alone (plus, with `sdpo.grpo_weight` > 0, verl's PPO loss), and the
reference slot holds the teacher, not the initial policy. So:
- `actor.use_kl_loss` / `algorithm.use_kl_in_reward` would measure KL to the (EMA) teacher, not to the
  initial policy, and pure SDPO would drop the KL loss term anyway;
- `actor.entropy_coeff` != 0 is dropped by pure SDPO (the hybrid's PPO term applies it);
- `model.use_fused_kernels`: verl's fused-kernel forward never calls the logits hook that computes the
  divergence, so the first update would fail on a missing key.
"""
from __future__ import annotations

from typing import Any, Mapping


def sdpo_setting_errors(config: Mapping[str, Any], grpo_weight: float) -> list[str]:
    """Problems with `config` (verl's composed config) for an SDPO run; empty when it is fine."""
    arr = config["actor_rollout_ref"]
    actor, model = arr["actor"], arr["model"]
    errors = []
    if actor.get("use_kl_loss", False):
        errors.append("actor_rollout_ref.actor.use_kl_loss=true: the reference slot holds the SDPO teacher, so this "
                      "would be a KL to the teacher, not to the initial policy (set it false)")
    if (config.get("algorithm") or {}).get("use_kl_in_reward", False):
        errors.append("algorithm.use_kl_in_reward=true: the reference slot holds the SDPO teacher, so this would "
                      "penalise distance to the teacher, not to the initial policy (set it false)")
    if float(actor.get("entropy_coeff", 0.0) or 0.0) != 0.0 and grpo_weight == 0.0:
        errors.append("actor_rollout_ref.actor.entropy_coeff != 0 has no effect on pure SDPO (only the hybrid, "
                      "sdpo.grpo_weight > 0, adds verl's PPO loss with its entropy term)")
    if model.get("use_fused_kernels", False):
        errors.append("actor_rollout_ref.model.use_fused_kernels=true: verl's fused forward never hands the logits "
                      "to the SDPO divergence hook (set it false)")
    return errors
