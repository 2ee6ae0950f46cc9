"""Reject config keys that verl does not know (a typo in a recipe or a `+key=` override).

verl's structured sections fail late and obscurely on unknown keys, and its free sections (data, trainer)
ignore them silently. This check walks the composed config against verl's generated default config:
a key is unknown when its parent is a non-empty mapping in verl's defaults that lacks it. Free-form
mappings (defaults `{}`/null, e.g. override_config, reward_kwargs) accept anything; the plugin's own
namespaces are listed in PLUGIN_NAMESPACES.
"""
from __future__ import annotations

import difflib
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator

from omegaconf import DictConfig, OmegaConf

PLUGIN_NAMESPACES = ("sdpo", "actor_rollout_ref.actor.sdpo", "data.sdpo_ttrl", "hydra")
# Keys verl reads but leaves out of its generated defaults (model_engine is a defaults-list choice).
VERL_UNLISTED_KEYS = ("model_engine", "reward.custom_reward_function.reward_kwargs", "reward.reward_kwargs")
# Sections verl reads but leaves out of its defaults, checked against a listed section of the same type:
# ref.optim is the reference's ActorConfig.optim, read when ref.fsdp_config.forward_only is false.
VERL_SECTION_ALIASES = {"actor_rollout_ref.ref.optim": "actor_rollout_ref.actor.optim"}


def _aliased(path: str) -> str:
    for section, alias in VERL_SECTION_ALIASES.items():
        if path == section or path.startswith(section + "."):
            return alias + path[len(section):]
    return path


class UnknownConfigKeyError(ValueError):
    """A key in the composed config that neither verl nor sdpo-lean defines."""


@lru_cache(maxsize=1)
def verl_default_config() -> dict:
    import verl

    path = Path(verl.__file__).parent / "trainer" / "config" / "_generated_ppo_trainer.yaml"
    return OmegaConf.to_container(OmegaConf.load(path), resolve=False)


def _walk(node: Any, prefix: str) -> Iterator[tuple[str, Any]]:
    if isinstance(node, dict):
        for key, value in node.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            yield path, value
            yield from _walk(value, path)


def unknown_keys(config: DictConfig | dict) -> list[tuple[str, list[str]]]:
    """[(dotted key, close matches)] for every key that verl's defaults do not define."""
    composed = OmegaConf.to_container(config, resolve=False) if isinstance(config, DictConfig) else config
    defaults = verl_default_config()
    problems = []
    for path, _ in _walk(composed, ""):
        if any(path == ns or path.startswith(ns + ".") for ns in PLUGIN_NAMESPACES + VERL_UNLISTED_KEYS):
            continue
        parent_path, _, leaf = _aliased(path).rpartition(".")
        parent = defaults
        for part in parent_path.split(".") if parent_path else []:
            parent = parent.get(part) if isinstance(parent, dict) else None
            if parent is None:
                break
        if not isinstance(parent, dict) or not parent:
            continue  # under a free-form mapping, or under a key already reported
        if leaf not in parent:
            problems.append((path, difflib.get_close_matches(leaf, [str(k) for k in parent], n=3)))
    return problems


def check_config_keys(config: DictConfig | dict) -> None:
    recipe = config.get("recipe", None)
    if isinstance(recipe, str):
        raise UnknownConfigKeyError(
            f"`+recipe={recipe}` was taken as a plain value: Hydra found no `recipe` group. "
            "Is sdpo-lean installed (pip install -e .) in this Python environment?"
        )
    problems = unknown_keys(config)
    if problems:
        lines = [f"  {key}" + (f"  (did you mean: {', '.join(m)}?)" if m else "") for key, m in problems]
        raise UnknownConfigKeyError(
            "Unknown config keys (typo in a recipe or a `+` override?):\n" + "\n".join(lines)
        )
