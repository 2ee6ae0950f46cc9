"""verl's `ppo_trainer` config composed with overrides exactly as `python -m verl.trainer.main_ppo <overrides>`
composes it: the one helper for the pre-flight (`sdpo_ext.startup.check`), the tools (`sdpo_eval.discovery.recipe`,
the benchmarks) and the tests.

Contract: Hydra's global state is cleared before and after, so calls do not depend on each other; Hydra's and
OmegaConf's own exceptions pass through (each caller words them for its user). verl and Hydra are imported only when
called.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from omegaconf import DictConfig


def compose_ppo(overrides: Sequence[str] = (), *, return_hydra_config: bool = False) -> DictConfig:
    """verl's ppo_trainer with `overrides` (unresolved); with `return_hydra_config`, its `hydra` node too."""
    import verl  # loads the sdpo-lean plugin: the recipe group's search path, resolvers, registries
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=str(Path(verl.__file__).parent / "trainer" / "config"),
                                   version_base=None):
            return compose(config_name="ppo_trainer", overrides=list(overrides),
                           return_hydra_config=return_hydra_config)
    finally:
        GlobalHydra.instance().clear()


def compose_recipe(recipe: str, overrides: Sequence[str] = (), *, return_hydra_config: bool = False) -> DictConfig:
    """`compose_ppo` of `+recipe=<recipe>` and then `overrides`."""
    return compose_ppo([f"+recipe={recipe}", *overrides], return_hydra_config=return_hydra_config)
