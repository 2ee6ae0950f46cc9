"""OmegaConf resolvers used by the recipes: the TTRL settings of the task parts, and
`${sdpo.tq_storage_units:...}` (TransferQueue sized to the host: `sdpo_ext.startup.small_host`).

Both TTRL resolvers take the whole `sdpo.ttrl` block and apply `TTRLConfig`'s rules (`sdpo_ext.ttrl.modes`), so one
theorem, a list and a split switch the same settings:
`${sdpo.ttrl_pick:${sdpo.ttrl},A,B}` is A in TTRL (a theorem, theorems or a split named), else B.
`${sdpo.ttrl_prompts:${sdpo.ttrl},FULL}` is a step's prompt count (`ttrl_prompts_per_step`; FULL in full training).
The run's length is not set here: in TTRL the trainer takes it from the budgets (`TTRLSet.step_limit`).
`${sdpo.sequence_tokens:PROMPT,RESPONSE}` is PROMPT + RESPONSE, the longest sequence; a model part sizes its dynamic
batches (ppo_max_token_len_per_gpu, which verl requires to be at least this) from it, so that one override of
data.max_response_length resizes them too.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from omegaconf import OmegaConf

from sdpo_ext.startup.small_host import tq_storage_units
from sdpo_ext.ttrl.modes import ttrl_mode, ttrl_prompts_per_step


def _named(ttrl: Mapping[str, Any] | None) -> tuple[Any, Any, Any]:
    ttrl = ttrl or {}
    return ttrl.get("theorem"), ttrl.get("theorems"), ttrl.get("split")


def ttrl_pick(ttrl: Mapping[str, Any] | None, when_ttrl: Any, otherwise: Any) -> Any:
    """`${sdpo.ttrl_pick:${sdpo.ttrl},A,B}`: `when_ttrl` when the block names problems, else `otherwise`."""
    return when_ttrl if ttrl_mode(*_named(ttrl)) is not None else otherwise


def ttrl_prompts(ttrl: Mapping[str, Any] | None, full_batch_size: int) -> int:
    """`${sdpo.ttrl_prompts:${sdpo.ttrl},FULL}`: the step's prompt count (`ttrl_prompts_per_step`)."""
    return ttrl_prompts_per_step(*_named(ttrl), full_batch_size, protocol=(ttrl or {}).get("protocol", "shared"))


def sequence_tokens(prompt_length: int, response_length: int) -> int:
    """`${sdpo.sequence_tokens:PROMPT,RESPONSE}`: the longest sequence, PROMPT + RESPONSE tokens."""
    return int(prompt_length) + int(response_length)


def register_resolvers() -> None:
    """Idempotent: safe to call in every process. Called by the verl plugin, which `import verl` runs, possibly
    while `sdpo_ext.config` (which imports verl) is half-imported: so this module imports only verl-free modules."""
    for name, fn in (("sdpo.ttrl_pick", ttrl_pick), ("sdpo.ttrl_prompts", ttrl_prompts),
                     ("sdpo.sequence_tokens", sequence_tokens), ("sdpo.tq_storage_units", tq_storage_units)):
        if not OmegaConf.has_resolver(name):
            OmegaConf.register_new_resolver(name, fn)
