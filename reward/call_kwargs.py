"""What a reward function receives besides its own options: the names verl's reward loop passes to every
`compute_score` (and the finish reason our reward managers add, `reward.truncation`). Each reward leaves them out
before reading its options, so an unknown option still fails loudly."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

VERL_KWARGS = frozenset({"reward_router_address", "reward_model_tokenizer", "finish_reason"})


def own_options(kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """`kwargs` without the names of VERL_KWARGS."""
    return {k: v for k, v in kwargs.items() if k not in VERL_KWARGS}
