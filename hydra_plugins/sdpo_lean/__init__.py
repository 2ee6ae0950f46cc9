"""Hydra search-path plugin: makes `+recipe=NAME` resolve to `recipes/recipe/NAME.yaml`.

Hydra discovers plugins in the `hydra_plugins` namespace package (which must have no __init__.py). Importing this
package also gives Hydra's composition errors the closest names of a misspelt recipe or key (`typo_hints`).
"""
from hydra.core.config_search_path import ConfigSearchPath
from hydra.plugins.search_path_plugin import SearchPathPlugin

from hydra_plugins.sdpo_lean.typo_hints import install as install_typo_hints


class SdpoLeanSearchPathPlugin(SearchPathPlugin):
    """Appends `pkg://recipes` so every Hydra app (verl's main_ppo included) sees our recipe groups."""

    def manipulate_search_path(self, search_path: ConfigSearchPath) -> None:
        """Append `pkg://recipes` to Hydra's search path."""
        search_path.append(provider="sdpo-lean", path="pkg://recipes")


install_typo_hints()   # Hydra imports this package when it discovers plugins, before it composes
