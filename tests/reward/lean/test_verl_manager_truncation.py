"""Truncation from token counts: the Lean recipes' reward manager (reward.lean.verl_manager) gives compute_score the
rollout's finish reason, so a reply that used its whole budget is `truncated` for every prompt style."""
from __future__ import annotations

import asyncio
import json
import sys

import numpy as np
import pytest
import torch
from omegaconf import OmegaConf, open_dict
from tensordict import TensorDict
from verl import DataProto
from verl.trainer.ppo.reward import load_reward_manager

import reward.lean.score as rl
from lean_env.backends import factory
from reward.lean.verl_manager import LeanRewardManager
from reward.truncation import finish_reason, generation_budget
from tests.recipes.test_recipes import compose_recipe

STATEMENT = "theorem t1 (x : ℝ) (h : x = 2) : x + 1 = 3 := by"
GT = json.dumps({"name": "t1", "formal_statement": STATEMENT + "\n"})
BUDGET = 400
EOS = 1


class CharTokenizer:
    """One token per character (id = codepoint + 10); id 1 is the special end-of-turn token."""

    all_special_ids = (0, EOS)
    eos_token_id = EOS

    def encode(self, text: str) -> list[int]:
        return [ord(c) + 10 for c in text]

    def decode(self, ids, skip_special_tokens: bool = True) -> str:
        ids = ids.tolist() if hasattr(ids, "tolist") else list(ids)
        return "".join("<eos>" if i == EOS else chr(i - 10) for i in ids if not (skip_special_tokens and i in (0, EOS)))


def fill(head: str, tail: str, length: int = BUDGET) -> str:
    """head + filler + tail, exactly `length` characters (= tokens)."""
    filler = (" and so on" * length)[: length - len(head) - len(tail)]
    return head + filler + tail


BLOCK = f"```lean4\n{STATEMENT}\n  norm_num\n```"
# What each model had written when its budget ran out (exactly BUDGET tokens, no end-of-turn token).
CUT = {
    # Kimina: thinking, the final block, then an explanation cut mid-sentence.
    "kimina": fill("<think>Substitute x = 2", f"</think>\n{BLOCK}\n\nThe proof works because"),
    # Goedel / DeepSeek: the proof plan with a `sorry` sketch, cut before the complete proof.
    "goedel": fill("### Proof plan\nSubstitute h", f"\n```lean4\n{STATEMENT}\n  sorry\n```\n\n### Complete proof\n"),
    # Qwen3.5: the chat template opens <think> in the prompt, so the reply holds only a draft inside thinking.
    "qwen": fill("Let me try norm_num", f"\nDraft:\n{BLOCK}\nHmm, but wait, is x real? Let"),
}
TODAY = {"kimina": "valid", "goedel": "sorry", "qwen": "valid"}  # what the text alone gives


@pytest.fixture(scope="module")
def manager_config(tmp_path_factory):
    """The sdpo_kimina_1_7b recipe's reward settings, with the REPL test double as Lean and BUDGET new tokens."""
    cfg = compose_recipe("sdpo_kimina_1_7b", (
        f"data.max_response_length={BUDGET}",
        "reward.custom_reward_function.reward_kwargs.backend=repl",
        "reward.custom_reward_function.reward_kwargs.server_repls=8",
        f"+reward.custom_reward_function.reward_kwargs.repl_command='{sys.executable} -m lean_env.testing.fake_repl'",
    ))
    with open_dict(cfg):
        cfg.sdpo.data_dir = str(tmp_path_factory.mktemp("data"))
        cfg.trainer.default_local_dir = str(tmp_path_factory.mktemp("run"))
    OmegaConf.resolve(cfg)
    return cfg


def agent_loop_sample(response_ids: list[int], prompt_ids: list[int]) -> DataProto:
    """One sample as verl 0.9.1's agent loop hands it to the reward loop (`AgentLoopWorker._compute_score`)."""
    prompts, responses = torch.tensor([prompt_ids]), torch.tensor([response_ids])
    input_ids = torch.cat([prompts, responses], dim=1)
    batch = TensorDict({"prompts": prompts, "responses": responses, "input_ids": input_ids,
                        "attention_mask": torch.ones_like(input_ids),
                        "position_ids": torch.arange(input_ids.shape[1])[None]}, batch_size=1)
    extra_info = {"index": 0}
    return DataProto(batch=batch, non_tensor_batch={
        "data_source": np.array(["minif2f"]), "reward_model": np.array([{"ground_truth": GT}], dtype=object),
        "extra_info": np.array([extra_info], dtype=object), "__num_turns__": np.array([2]),
        "tool_extra_fields": np.array([{}], dtype=object), "prompt_len": np.array([len(prompt_ids)]),
        "response_len": np.array([len(response_ids)])})


def score(cfg, samples: list[DataProto]) -> list[dict]:
    async def main():
        manager = load_reward_manager(cfg, CharTokenizer())
        assert isinstance(manager, LeanRewardManager)
        try:
            return [(await manager.run_single(s))["reward_extra_info"] for s in samples]
        finally:
            await factory.aclose_backends()
    return asyncio.run(main())


PROMPT = CharTokenizer().encode("Prove t1.")


@pytest.mark.parametrize("style", sorted(CUT))
def test_a_reply_that_used_the_whole_budget_is_truncated_for_every_prompt_style(manager_config, style):
    ids = CharTokenizer().encode(CUT[style])
    assert len(ids) == BUDGET
    cut, ended_at_budget, shorter = score(manager_config, [agent_loop_sample(ids, PROMPT),
                                                           agent_loop_sample(ids[:-1] + [EOS], PROMPT),
                                                           agent_loop_sample(ids[:-1], PROMPT)])
    assert (cut["verdict"], cut["score"], cut["infra"]) == ("truncated", 0.0, 0.0)
    assert "length limit" in cut["feedback"] and "Lean" not in cut["feedback"]
    # A reply that ends on its end-of-turn token at the budget, or stops short of it, is graded on its text.
    assert ended_at_budget["verdict"] == shorter["verdict"] == TODAY[style]


@pytest.mark.parametrize("style", sorted(CUT))
def test_without_the_finish_reason_the_text_alone_is_graded(manager_config, style):
    """What verl's naive manager does (no finish reason): the cut reply is graded as a proof or as sorry."""
    async def main():
        try:
            return await rl.compute_score("minif2f", CUT[style], GT, {}, **dict(
                manager_config.reward.custom_reward_function.reward_kwargs))
        finally:
            await factory.aclose_backends()
    assert asyncio.run(main())["verdict"] == TODAY[style]


def test_the_sample_extra_info_is_copied_not_shared(manager_config):
    sample = agent_loop_sample(CharTokenizer().encode(CUT["kimina"]), PROMPT)
    shared = sample.non_tensor_batch["extra_info"][0]
    score(manager_config, [sample])
    assert shared == {"index": 0}


def test_budget_follows_verls_vllm_server():
    assert generation_budget(8192, 2048, 300) == 8192
    assert generation_budget(8192, 2048, 300, max_model_len=8000) == 7700
    assert generation_budget(100, 10, 50) == 60   # a prompt over prompt_length eats into the response budget
    assert finish_reason([5] * 10, 10, {1}) == "length"
    assert finish_reason([5] * 9 + [1], 10, {1}) == "stop"
    assert finish_reason([5] * 9, 10, {1}) == "stop"


def test_the_reward_workers_stop_at_start_when_the_backend_runs_another_lean(manager_config):
    from lean_env.version import LeanVersionError

    cfg = manager_config.copy()
    kwargs = cfg.reward.custom_reward_function.reward_kwargs
    assert kwargs.lean_version == "v4.9.0"
    kwargs.repl_command = f"{sys.executable} -m lean_env.testing.fake_repl --lean-version 4.26.0"
    rl._lean_versions.clear()
    try:
        with pytest.raises(LeanVersionError, match="runs Lean 4.26.0"):
            load_reward_manager(cfg, CharTokenizer())
    finally:
        rl._lean_versions.clear()
