"""OmegaConf resolvers used by the recipes: switching between full-dataset training and TTRL, and
`${sdpo.tq_storage_units:...}` (TransferQueue sized to the host: `sdpo_ext.startup.small_host`).

`${sdpo.ttrl_pick:THEOREM,A,B}` is A when a TTRL theorem is set, else B.
`${sdpo.ttrl_steps:THEOREM,MAX_ATTEMPTS,N}` is ceil(MAX_ATTEMPTS / N) training steps in TTRL, else None
(verl then derives the step count from the dataset and total_epochs).
`${sdpo.sequence_tokens:PROMPT,RESPONSE}` is PROMPT + RESPONSE, the longest sequence; a model part sizes its dynamic
batches (ppo_max_token_len_per_gpu, which verl requires to be at least this) from it, so that one override of
data.max_response_length resizes them too.
"""
from __future__ import annotations

import math
from typing import Any

from omegaconf import OmegaConf


def _ttrl_active(theorem: Any) -> bool:
    return theorem not in (None, "", "null", "None")


def ttrl_pick(theorem: Any, when_ttrl: Any, otherwise: Any) -> Any:
    return when_ttrl if _ttrl_active(theorem) else otherwise


def ttrl_steps(theorem: Any, max_attempts: int, rollout_n: int) -> int | None:
    if not _ttrl_active(theorem):
        return None
    if int(max_attempts) < 1 or int(rollout_n) < 1:
        raise ValueError(f"sdpo.ttrl.max_attempts and rollout.n must be >= 1, got {max_attempts}, {rollout_n}")
    return math.ceil(int(max_attempts) / int(rollout_n))


def sequence_tokens(prompt_length: int, response_length: int) -> int:
    return int(prompt_length) + int(response_length)


def register_resolvers() -> None:
    """Idempotent: safe to call in every process."""
    from sdpo_ext.startup.small_host import tq_storage_units

    for name, fn in (("sdpo.ttrl_pick", ttrl_pick), ("sdpo.ttrl_steps", ttrl_steps),
                     ("sdpo.sequence_tokens", sequence_tokens), ("sdpo.tq_storage_units", tq_storage_units)):
        if not OmegaConf.has_resolver(name):
            OmegaConf.register_new_resolver(name, fn)
