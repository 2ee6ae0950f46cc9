"""A recipe composed as verl's main_ppo composes it, for the sampler and the tests that read a run's settings."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any


def compose_recipe(recipe: str, overrides: Sequence[str] = ()) -> dict[str, Any]:
    """The resolved config of `+recipe=<recipe>` over verl's ppo_trainer (as main_ppo composes it); ValueError with
    Hydra's message for a recipe or override that does not compose."""
    import verl  # noqa: F401  (loads the sdpo-lean plugin: Hydra search path and resolvers)
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.errors import HydraException
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    config_dir = str(Path(verl.__file__).parent / "trainer" / "config")
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=config_dir, version_base=None):
            cfg = compose(config_name="ppo_trainer", overrides=[f"+recipe={recipe}", *overrides])
        return OmegaConf.to_container(cfg, resolve=True)
    except (HydraException, OmegaConfBaseException) as e:
        raise ValueError(f"+recipe={recipe} with {list(overrides)} does not compose: {e}") from e
    finally:
        GlobalHydra.instance().clear()
