"""A recipe composed as verl's main_ppo composes it (`sdpo_ext.startup.compose`), resolved, for the sampler."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def compose_recipe(recipe: str, overrides: Sequence[str] = ()) -> dict[str, Any]:
    """The resolved config of `+recipe=<recipe>` over verl's ppo_trainer (as main_ppo composes it); ValueError with
    Hydra's message for a recipe or override that does not compose."""
    from hydra.errors import HydraException
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    from sdpo_ext.startup.compose import compose_recipe as compose

    try:
        return OmegaConf.to_container(compose(recipe, overrides), resolve=True)
    except (HydraException, OmegaConfBaseException) as e:
        raise ValueError(f"+recipe={recipe} with {list(overrides)} does not compose: {e}") from e
