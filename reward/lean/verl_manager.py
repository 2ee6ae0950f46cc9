"""verl reward manager for the Lean reward: verl's naive manager plus the rollout's `finish_reason`.

verl 0.9.1 gives a custom `compute_score` only the decoded text and the dataset's `extra_info`; its vLLM server
drops vLLM's finish reason. This manager recovers it from the token counts (`reward.truncation`) and passes it as
`extra_info["finish_reason"]` ("stop" | "length"), with `response_tokens` and `response_budget`, on a copy of the
sample's `extra_info` (the dataset's dict is shared by the rollouts of one prompt). `reward.lean.compute_score`
classes a "length" reply `truncated`. At start it asks the backend which Lean it runs (`reward.lean.
require_lean_version`) and raises on a mismatch with the recipe's `lean_version`. Selected in the Lean task recipe
through verl's own setting `reward.reward_manager` (source importlib), so verl itself is not patched.
"""
from __future__ import annotations

import numpy as np
from verl import DataProto
from verl.experimental.reward_loop.reward_manager.naive import NaiveRewardManager

from reward.lean.score import require_lean_version
from reward.truncation import finish_reason, generation_budget


class LeanRewardManager(NaiveRewardManager):
    """NaiveRewardManager whose compute_score also receives the reply's finish reason in `extra_info`."""

    def __init__(self, config, tokenizer, compute_score, reward_router_address=None, reward_model_tokenizer=None):
        super().__init__(config, tokenizer, compute_score, reward_router_address, reward_model_tokenizer)
        rollout = config.actor_rollout_ref.rollout
        self.response_length = int(rollout.response_length)
        self.prompt_length = int(rollout.prompt_length)
        self.max_model_len = rollout.get("max_model_len")
        self.stop_ids = frozenset(int(i) for i in tokenizer.all_special_ids)
        # At start: stop here (the reward workers fail to start, so does the run) when the backend runs another Lean.
        require_lean_version(**config.reward.custom_reward_function.get("reward_kwargs", {}))

    def length_info(self, data: DataProto) -> dict:
        """{finish_reason, response_tokens, response_budget} of the last sequence of `data` (one sample)."""
        item = data[-1]
        responses, mask = item.batch["responses"], item.batch["attention_mask"]
        n_response = int(mask[-responses.shape[-1]:].sum())
        n_prompt = int(mask[:item.batch["prompts"].shape[-1]].sum())
        budget = generation_budget(self.response_length, self.prompt_length, n_prompt, self.max_model_len)
        ids = responses[:n_response].tolist()
        return {"finish_reason": finish_reason(ids, budget, self.stop_ids), "response_tokens": n_response,
                "response_budget": budget}

    async def run_single(self, data: DataProto) -> dict:
        """verl's scoring of one sample, with `length_info` added to a copy of its `extra_info`."""
        data = data[-1:]
        extra_info = dict(data.non_tensor_batch.get("extra_info", [None])[0] or {})
        extra_info.update(self.length_info(data))
        data.non_tensor_batch["extra_info"] = np.array([extra_info], dtype=object)
        return await super().run_single(data)
