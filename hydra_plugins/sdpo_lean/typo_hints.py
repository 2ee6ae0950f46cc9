"""Closest names in Hydra's own composition errors, for a misspelt recipe or key (any Hydra app: verl's `main_ppo`,
`sdpo_ext.startup.check`, a test's `compose`).

Hydra 1.3 composes before any callback runs and has no hook for its messages, so `install()` wraps two of its
functions, once, when Hydra discovers this plugin package (before it composes):
- `defaults_list.config_not_found_error`: `+recipe=sdpo_kimina_1_7` got the list of all 32 recipes; now
  `Could not find recipe 'sdpo_kimina_1_7' (did you mean: sdpo_kimina_1_7b, ...?)`. Hydra's message stays when no
  name is close.
- `ConfigLoaderImpl._apply_overrides_to_config`: `sdpo.ttrl.theorm=x` was told to add a `+`, which is wrong for a
  typo of an existing key; now, when a key on the path is missing and an existing one at that level is close, the
  error names it and advises no `+`. A key close to none keeps Hydra's advice (a `+` adds a new key).
Departure from Hydra's messages only (the composition itself is unchanged); the rest of each message is Hydra's.
"""
from __future__ import annotations

import difflib
import re
from typing import Any, Callable

CLOSE = 0.6   # difflib's cutoff: `sdpo_kimina_1_7` -> `sdpo_kimina_1_7b`, not every recipe
_OVERRIDE = re.compile(r"Could not override '(?P<key>[^']+)'\.")


def closest_key(config: Any, key: str) -> str | None:
    """The dotted key `key` with its first missing part replaced by the closest existing name at that level, or None
    when every part exists or none is close (`config`: an OmegaConf DictConfig)."""
    from omegaconf import DictConfig

    parts, node = key.split("."), config
    for i, part in enumerate(parts):
        if not isinstance(node, DictConfig):
            return None
        if part in node:
            node = node._get_node(part)   # the node itself: reading the value would resolve interpolations
            continue
        close = difflib.get_close_matches(part, [str(k) for k in node.keys()], n=1, cutoff=CLOSE)
        return ".".join([*parts[:i], close[0], *parts[i + 1:]]) if close else None
    return None


def _override_hint(original: Callable[..., None]) -> Callable[..., None]:
    def apply_overrides(overrides: list, cfg: Any) -> None:
        from hydra.errors import ConfigCompositionException

        try:
            original(overrides, cfg)
        except ConfigCompositionException as e:
            match = _OVERRIDE.match(str(e))
            meant = closest_key(cfg, match["key"]) if match else None
            if meant is None:
                raise
            raise ConfigCompositionException(
                f"Could not override '{match['key']}': the config has no such key (did you mean {meant}?)") from e
    return staticmethod(apply_overrides)


def _group_hint(original: Callable[..., None]) -> Callable[..., None]:
    def config_not_found_error(repo: Any, tree: Any) -> None:
        from hydra.core.default_element import GroupDefault
        from hydra.core.object_type import ObjectType
        from hydra.errors import MissingConfigException

        element = tree.node
        if isinstance(element, GroupDefault) and not element.primary and element.get_name():
            group, name = element.get_group_path(), element.get_name()
            options = repo.get_group_options(group, ObjectType.CONFIG)
            close = difflib.get_close_matches(name, options, n=3, cutoff=CLOSE)
            if close:
                raise MissingConfigException(
                    f"Could not find {group} '{name}' (did you mean: {', '.join(close)}?)",
                    missing_cfg_file=element.get_config_path(), options=options)
        original(repo, tree)
    return config_not_found_error


def install() -> None:
    """Wrap Hydra's two messages (module docstring); a second call changes nothing."""
    from hydra._internal import defaults_list
    from hydra._internal.config_loader_impl import ConfigLoaderImpl

    if getattr(defaults_list.config_not_found_error, "__sdpo_hint__", False):
        return
    hinted = _group_hint(defaults_list.config_not_found_error)
    hinted.__sdpo_hint__ = True
    defaults_list.config_not_found_error = hinted
    ConfigLoaderImpl._apply_overrides_to_config = _override_hint(ConfigLoaderImpl._apply_overrides_to_config)
