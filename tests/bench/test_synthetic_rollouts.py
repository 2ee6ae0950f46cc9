"""bench/step_time/synthetic_rollouts.py: the step-time job's rollout file built without vLLM, shaped by the recorded
profile (reply tokens and vLLM seconds per length), in step_generate's format."""
from __future__ import annotations

import json

import pytest
import torch

from tests.bench.bench_scripts import on_path

on_path("step_time")
from synthetic_rollouts import (  # noqa: E402
    PROFILE,
    SOLUTION_PROFILE,
    prover_layout,
    reply_lengths,
    synthetic_rollouts,
    word_ids,
)

PROFILE_2 = {"samples": 8, "lengths": {"16": {"gen_s": 1.5, "response_tokens": 8 * 16 - 20}}}
WORDS = [i for i in range(50) if i not in {0, 2, 49}]


def rollouts(profile: dict = PROFILE_2, lengths=(16,), seed: int = 0) -> dict:
    prompts = [[1, 2, 3], [4, 5]]
    messages = [[{"role": "user", "content": "a"}], [{"role": "user", "content": "b"}]]
    return synthetic_rollouts(prompts, messages, ["gt0", "gt1"], profile, list(lengths), WORDS, eos_id=2, seed=seed)


def test_reply_lengths_meet_the_recorded_total_with_full_replies_first():
    assert reply_lengths(4, 10, 40) == [10, 10, 10, 10]
    assert reply_lengths(4, 10, 35) == [10, 10, 10, 5]
    assert reply_lengths(4, 10, 25) == [10, 10, 4, 1]
    with pytest.raises(ValueError, match="cannot be"):
        reply_lengths(4, 10, 41)


def test_the_replies_follow_the_profile_and_avoid_special_tokens_but_eos_ends_the_short_ones():
    result = rollouts()
    row = result["lengths"][16]
    lengths = [len(r) for r in row["response_ids"]]
    assert sum(lengths) == 108 and max(lengths) == 16 and len(lengths) == 8
    assert row["gen_s"] == 1.5 and row["response_tokens"] == 108
    for ids, finish in zip(row["response_ids"], row["finish_reasons"]):
        assert finish == ("length" if len(ids) == 16 else "stop")
        body = ids if finish == "length" else ids[:-1]
        assert not {0, 2, 49} & set(body)
        if finish == "stop":
            assert ids[-1] == 2
    assert result["prompt_ids"] == [[1, 2, 3], [4, 5]] and result["engine_start_s"] is None


def test_the_same_seed_gives_the_same_replies_and_another_seed_others():
    assert rollouts(seed=1)["lengths"][16]["response_ids"] == rollouts(seed=1)["lengths"][16]["response_ids"]
    assert rollouts(seed=1)["lengths"][16]["response_ids"] != rollouts(seed=2)["lengths"][16]["response_ids"]


def test_a_length_the_profile_never_recorded_is_refused():
    with pytest.raises(ValueError, match="no recorded rollout at 4096"):
        rollouts(lengths=(4096,))


def test_the_committed_profile_has_every_length_the_job_runs():
    profile = json.loads(PROFILE.read_text())
    assert set(profile["lengths"]) == {"2048", "8192"} and profile["samples"] == 64
    for length, row in profile["lengths"].items():
        assert 0 < row["response_tokens"] <= 64 * int(length) and row["gen_s"] > 0


def test_the_committed_solution_profile_states_kiminas_mean_proof_length():
    solution = json.loads(SOLUTION_PROFILE.read_text())
    kimina = solution["sources"][solution["primary"]]["tokens"]
    assert solution["primary"] == "kimina-preview-minif2f-test" and kimina["proofs"] > 100
    assert solution["tokens"] == round(kimina["mean"]) and kimina["p10"] < solution["tokens"] < kimina["max"]


# ---------------------------------------------------------------- teacher prompts of the stated length (issue 49)
SYSTEM = "You are an expert in mathematics and proving theorems in Lean 4."
REPLY = 400


def lean_prompts(tokenizer, groups: int = 2) -> tuple[list[list[int]], list[list[dict]]]:
    messages = [[{"role": "system", "content": SYSTEM},
                 {"role": "user", "content": f"Prove in Lean 4.\ntheorem t{g} (x : ℕ) (h : x + 1 = 3) : x = 2 := by"}]
                for g in range(groups)]
    ids = [list(tokenizer.apply_chat_template(m, add_generation_prompt=True, tokenize=True, return_dict=False))
           for m in messages]
    return ids, messages


def solution_tokens_in_teacher_prompts(tokenizer, result: dict, length: int) -> list[int]:
    """Group 0 solved by its first sample; per sample taught by that sibling, the tokens its teacher prompt (as the
    driver builds it: sdpo_ext.teacher_fields) has beyond the same prompt with an empty solution."""
    from sdpo_ext.config import SDPOConfig
    from sdpo_ext.judged import JudgedSample
    from sdpo_ext.teacher.reprompt import TeacherSignal, build_teacher_messages, render_prompt_ids
    from sdpo_ext.teacher_fields import teacher_fields

    replies = result["lengths"][length]["response_ids"]
    n = len(replies) // len(result["prompt_ids"])
    texts = tokenizer.batch_decode(replies, skip_special_tokens=True)
    messages = [result["messages"][i // n] for i in range(len(replies))]
    cfg = SDPOConfig()
    samples = [JudgedSample(key=str(i), uid=i // n, problem=str(i // n), score=1.0 if i == 0 else 0.0, text=text,
                            response_tokens=len(reply), feedback="error")
               for i, (text, reply) in enumerate(zip(texts, replies))]
    fields, _ = teacher_fields(
        tokenizer, cfg, samples, messages=messages,
        prompts=[torch.tensor(result["prompt_ids"][i // n]) for i in range(len(replies))], chat_template_kwargs={})
    empty = render_prompt_ids(tokenizer, build_teacher_messages(messages[0], TeacherSignal(demonstration=""),
                                                                cfg.reprompt))
    prompts = fields["teacher_prompt_ids"].unbind()
    return [len(prompts[i]) - len(empty) for i in range(1, n)]


@pytest.fixture(scope="module")
def words(smollm2_tokenizer) -> list[int]:
    return word_ids(smollm2_tokenizer)


@pytest.mark.parametrize("case", ["whole", "prover"])
def test_each_sibling_solution_in_a_teacher_prompt_is_as_long_as_the_job_states(smollm2_tokenizer, words, case):
    prompt_ids, messages = lean_prompts(smollm2_tokenizer)
    profile = {"samples": 8, "lengths": {str(REPLY): {"gen_s": 1.0, "response_tokens": 8 * REPLY - 30}}}
    layout = prover_layout(smollm2_tokenizer, 120) if case == "prover" else None
    result = synthetic_rollouts(prompt_ids, messages, ["gt0", "gt1"], profile, [REPLY], words,
                                smollm2_tokenizer.eos_token_id, layout)
    stated = result["lengths"][REPLY]["sibling_solution"]
    assert stated == {"case": case, "tokens": REPLY if case == "whole" else 120}
    shown = solution_tokens_in_teacher_prompts(smollm2_tokenizer, result, REPLY)
    assert len(shown) == 3 and min(shown) >= stated["tokens"], shown
    for ids in result["lengths"][REPLY]["response_ids"]:  # every reply's text encodes back to its ids
        body = [i for i in ids if i != smollm2_tokenizer.eos_token_id]
        assert smollm2_tokenizer.encode(smollm2_tokenizer.decode(body), add_special_tokens=False) == body


def test_ids_the_tokenizer_lacks_shortened_the_solution_which_the_check_catches(smollm2_tokenizer):
    """The draw before issue 49 (over the model's 151,936 ids; the tokenizer has 49,152): the teacher prompts showed
    about a third of the stated whole reply."""
    prompt_ids, messages = lean_prompts(smollm2_tokenizer)
    profile = {"samples": 8, "lengths": {str(REPLY): {"gen_s": 1.0, "response_tokens": 8 * REPLY}}}
    special = set(smollm2_tokenizer.all_special_ids)
    result = synthetic_rollouts(prompt_ids, messages, ["gt0", "gt1"], profile, [REPLY],
                                [i for i in range(151936) if i not in special], smollm2_tokenizer.eos_token_id)
    shown = solution_tokens_in_teacher_prompts(smollm2_tokenizer, result, REPLY)
    assert max(shown) < 0.5 * result["lengths"][REPLY]["sibling_solution"]["tokens"]
