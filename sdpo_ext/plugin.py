"""verl plugin entry point (`verl.plugins` group): imported by `import verl` in every process.

Registers, idempotently:
- the OmegaConf resolvers used by the recipes (`sdpo_ext.resolvers`: sdpo.ttrl_pick, sdpo.ttrl_prompts, ...);
- the advantage estimator `grpo_valid` (GRPO that ignores infra-masked samples);
- the attention `sdpa_varlen` (sdpo_ext.attention.varlen) in transformers' AttentionInterface, with transformers'
  flash-attention mask function, so `actor_rollout_ref.model.override_config.attn_implementation=sdpa_varlen` runs
  verl's packed (remove-padding) path without flash-attn; and `fa4_varlen` (sdpo_ext.attention.fa4), flash-attn-4's
  varlen kernel with integer length bounds, which transformers' own `flash_attention_4` path breaks on Hopper;
- a guard policy loss `sdpo`, which only fails loudly: the SDPO loss runs through our worker's loss hook;
- `SDPOTrainer` as verl's v1 "sync" trainer (done by `sdpo_ext.trainer` itself, which this imports). It is
  PPOTrainerSync plus attempt logging, infra masking and TTRL stop-on-success for every run, and the SDPO teacher
  step when policy_loss.loss_mode == "sdpo".
In a Ray process (the driver imports verl before Ray starts) it marks `runner_up` on the start-up timeline: the first
such process is the TaskRunner (sdpo_ext.startup.timeline; later ones print later marks, which the table ignores).
It also silences verl's warnings about optional engines that are not installed (OPTIONAL_ENGINE_WARNING).
verl swallows plugin import errors at DEBUG level, so failures here are logged at ERROR and re-raised.
"""
from __future__ import annotations

import logging
import sys
import warnings

logger = logging.getLogger("sdpo_lean.plugin")
# verl's engine registry warns once per optional engine it cannot import (torchtitan, veomni, automodel, mindspeed,
# megatron: five warnings on every import, in every process); the recipes use the FSDP engine, so they are noise here.
OPTIONAL_ENGINE_WARNING = r"(torchtitan|veomni|automodel|mindspeed|megatron) engine is not available"
warnings.filterwarnings("ignore", message=OPTIONAL_ENGINE_WARNING, category=UserWarning)


def _sdpo_policy_loss_guard(*args, **kwargs):
    raise RuntimeError(
        "policy_loss.loss_mode=sdpo reached verl's standard ppo_loss: the sdpo-lean worker did not install "
        "its loss hook. Run through verl.trainer.main_ppo with trainer.use_v1=true and trainer.v1.trainer_mode=sync "
        "so SDPOTrainer and its worker are used."
    )


def register() -> None:
    """Do the registrations of the module docstring; idempotent."""
    from verl.trainer.ppo import core_algos

    from sdpo_ext.attention.registry import register_attention
    from sdpo_ext.loss.advantage import grpo_valid_advantage
    from sdpo_ext.resolvers import register_resolvers

    register_resolvers()
    register_attention()
    if "grpo_valid" not in core_algos.ADV_ESTIMATOR_REGISTRY:
        core_algos.register_adv_est("grpo_valid")(grpo_valid_advantage)
    if "sdpo" not in core_algos.POLICY_LOSS_REGISTRY:
        core_algos.register_policy_loss("sdpo")(_sdpo_policy_loss_guard)
    # The trainer registers itself as verl's "sync" trainer when its module finishes importing: a plain module import
    # here, so that a process whose first import is sdpo_ext.trainer (which imports verl, which loads this plugin
    # while the trainer module is half-initialised) still gets every registration.
    import sdpo_ext.trainer  # noqa: F401


def _mark_ray_process() -> None:
    """`runner_up` when this process is a Ray worker (Ray imported and connected); no import of Ray otherwise."""
    from sdpo_ext.startup.timeline import mark

    ray = sys.modules.get("ray")
    if ray is not None and ray.is_initialized():
        mark("runner_up")


try:
    register()
    _mark_ray_process()
except Exception:  # verl hides plugin errors at DEBUG; make this one impossible to miss
    logger.exception("sdpo-lean: plugin registration failed; SDPO recipes will not work in this process")
    raise
