"""Whether a rollout was cut by its token budget, from token counts alone (no verl import).

verl 0.9.1's vLLM server folds vLLM's `finish_reason` ("stop" | "length") into one `stop_reason="completed"`, so
the reward never sees it. It is recovered here from what the reward manager does see, the response token ids:

  budget = min(R, P + R - p, M - p)   (the `max_tokens` verl's vLLM server asks for; M = inf when unset)
  finish_reason = "length"  iff  len(response) >= budget  and the last token is not a stop (special) token

with R = rollout.response_length (= data.max_response_length), P = rollout.prompt_length, p the prompt's token count,
M = rollout.max_model_len. A reply that ends with its stop token exactly at the budget finished ("stop"): vLLM keeps
the EOS id in the token ids. When M is unset verl uses the model's position limit, which every recipe keeps above
P + R, so it is not needed here.
"""
from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Literal


def generation_budget(response_length: int, prompt_length: int, prompt_tokens: int,
                      max_model_len: int | None = None) -> int:
    """Most new tokens verl's vLLM server allows this prompt: min(R, P + R - p, M - p), at least 1."""
    budget = min(response_length, prompt_length + response_length - prompt_tokens)
    if max_model_len:
        budget = min(budget, max_model_len - prompt_tokens)
    return max(1, budget)


def finish_reason(response_ids: Sequence[int], budget: int, stop_ids: Collection[int]) -> Literal["stop", "length"]:
    """"length" when the reply used its whole budget without ending on a stop token, else "stop"."""
    if len(response_ids) >= budget and (not response_ids or int(response_ids[-1]) not in stop_ids):
        return "length"
    return "stop"
