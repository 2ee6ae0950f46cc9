"""verl plugin entry point (`verl.plugins` group): imported by `import verl` in every process.

Registers, idempotently:
- the OmegaConf resolvers used by the recipes (`sdpo_ext.resolvers`: sdpo.ttrl_pick, sdpo.ttrl_prompts, ...);
- the advantage estimator `grpo_valid` (GRPO that ignores infra-masked samples);
- the attention `sdpa_varlen` (sdpo_ext.attention.varlen) in transformers' AttentionInterface, with transformers'
  flash-attention mask function, so `actor_rollout_ref.model.override_config.attn_implementation=sdpa_varlen` runs
  verl's packed (remove-padding) path without flash-attn; and `fa4_varlen` (sdpo_ext.attention.fa4), flash-attn-4's
  varlen kernel with integer length bounds, which transformers' own `flash_attention_4` path breaks on Hopper;
- a guard policy loss `sdpo`, which only fails loudly: the SDPO loss runs through our worker's loss hook;
- `SDPOTrainer` as verl's v1 "sync" trainer (done by `sdpo_ext.trainer` itself, which this imports once verl's v1
  trainers are imported: `_after_import`; a worker, reward or server process never imports them, and they cost
  about 500 modules and 1.3 s of CPU a process). It is PPOTrainerSync plus attempt logging, infra masking and TTRL
  stop-on-success for every run, and the SDPO teacher step when policy_loss.loss_mode == "sdpo".
In a Ray process (the driver imports verl before Ray starts) it marks `runner_up` on the start-up timeline: the first
such process is the TaskRunner (sdpo_ext.startup.timeline; later ones print later marks, which the table ignores).
It also silences verl's warnings about optional engines that are not installed (OPTIONAL_ENGINE_WARNING).
verl swallows plugin import errors at DEBUG level, so failures here are logged at ERROR and re-raised.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import logging
import sys
import warnings
from collections.abc import Callable

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


# the package whose import makes verl's trainer registry usable (`get_trainer_cls`); the trainer is registered then
TRAINERS_PACKAGE = "verl.trainer.ppo.v1"


class _AfterImport(importlib.abc.MetaPathFinder):
    """Calls `then()` once module `name` has finished executing, the next time it is imported (a meta-path finder
    that wraps the module's own loader); removes itself at that first import."""

    def __init__(self, name: str, then: Callable[[], object]):
        self.name, self.then = name, then

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        execute = spec.loader.exec_module

        def exec_then(module) -> None:
            execute(module)
            self.then()

        spec.loader.exec_module = exec_then
        return spec


def _register_trainer() -> None:
    """Import `sdpo_ext.trainer` (which registers itself) now if verl's trainers are imported, else right after."""
    if TRAINERS_PACKAGE in sys.modules:
        importlib.import_module("sdpo_ext.trainer")
    elif not any(isinstance(f, _AfterImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterImport(TRAINERS_PACKAGE, lambda: importlib.import_module("sdpo_ext.trainer")))


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
    # The trainer registers itself as verl's "sync" trainer when its module finishes importing: a plain module import,
    # so that a process whose first import is sdpo_ext.trainer (which imports verl, which loads this plugin while the
    # trainer module is half-initialised) still gets every registration.
    _register_trainer()


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
