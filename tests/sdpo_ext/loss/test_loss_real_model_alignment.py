"""End to end on CPU with the real SmolLM2-135M-Instruct: teacher prompts from the reprompt code,
several [prompt | response] sequences packed into one forward, response rows picked with
response_logit_rows, log-probs gathered with topk_support; they must equal a direct
single-sequence forward."""

import importlib.util
from pathlib import Path

import pytest
import torch

from sdpo_ext.loss.divergence import divergence
from sdpo_ext.loss.logprobs import gather_logp
from sdpo_ext.loss.packed_rows import response_logit_rows
from sdpo_ext.teacher.reprompt import RepromptConfig, build_teacher_batch, render_prompt_ids

_spec = importlib.util.spec_from_file_location("support_reference", Path(__file__).with_name("support_reference.py"))
_reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_reference)
topk_support = _reference.topk_support  # test oracle (tests/sdpo_ext/loss/support_reference.py)

RESPONSE_TOKENS = 20
TOP_K = 20
SYSTEM = "You are a Lean 4 expert. Answer with a proof in a ```lean4``` block."
QUESTIONS = ["Prove that n + 0 = n for every natural number n.", "Prove that 2 + 2 = 4."]
RESPONSES = [
    "```lean4\ntheorem add_zero' (n : Nat) : n + 0 = n := by\n  simp\n```",
    "```lean4\ntheorem add_zero' (n : Nat) : n + 0 = n := by\n  induction n <;> rfl\n```",
    "```lean4\ntheorem two_two : 2 + 2 = 4 := by\n  linarith [foo]\n```",
    "```lean4\nexample : 2 + 2 = 4 := by\n  exact rfl_wrong\n```",
]
FEEDBACKS = [None, "error: unsolved goals", "error: unknown identifier 'foo'", "error: unknown identifier 'rfl_wrong'"]


def chat(question: str) -> list[dict]:
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}]


def packed_logits(model, sequences: list[list[int]]) -> torch.Tensor:
    """One forward over the sequences packed back-to-back, positions restarting per sequence."""
    input_ids = torch.tensor([[t for s in sequences for t in s]])
    position_ids = torch.tensor([[p for s in sequences for p in range(len(s))]])
    with torch.no_grad():
        return model(input_ids=input_ids, position_ids=position_ids, use_cache=False).logits[0].float()


@pytest.fixture(scope="module")
def setup(smollm2_tokenizer, sdpo_smollm2_model):
    tok = smollm2_tokenizer
    messages = [chat(QUESTIONS[0]), chat(QUESTIONS[0]), chat(QUESTIONS[1]), chat(QUESTIONS[1])]
    batch = build_teacher_batch(
        tok, messages, uids=["q0", "q0", "q1", "q1"], scores=[1.0, 0.0, 0.0, 0.0], responses=RESPONSES,
        feedbacks=FEEDBACKS, infra=[False] * 4, cfg=RepromptConfig(),
    )
    active = [i for i, m in enumerate(batch.mask) if m]
    responses = [tok(RESPONSES[i], add_special_tokens=False)["input_ids"][:RESPONSE_TOKENS] for i in active]
    student_prompts = [render_prompt_ids(tok, messages[i]) for i in active]
    teacher_prompts = [batch.prompt_ids[i] for i in active]
    return batch, active, responses, student_prompts, teacher_prompts


def test_teacher_prompts_are_longer_and_share_the_student_prefix(setup, smollm2_tokenizer):
    batch, active, _, student_prompts, teacher_prompts = setup
    closing = len(smollm2_tokenizer("<|im_end|>\n<|im_start|>assistant\n", add_special_tokens=False)["input_ids"])
    assert active == [1, 2, 3]  # sample 0 succeeded and is its group's only success
    assert batch.signals[1].demonstration_index == 0
    for s, t in zip(student_prompts, teacher_prompts):
        assert len(t) > len(s)
        assert t[: len(s) - closing] == s[: len(s) - closing]  # same tokens up to the end of the user content


def test_packed_teacher_logprobs_equal_single_sequence_forward(setup, sdpo_smollm2_model):
    model = sdpo_smollm2_model
    _, _, responses, student_prompts, teacher_prompts = setup
    response_lens = torch.tensor([len(r) for r in responses])
    tokens = torch.tensor([t for r in responses for t in r])

    def rows_for(prompts):
        seqs = [p + r for p, r in zip(prompts, responses)]
        logits = packed_logits(model, seqs)
        return logits[response_logit_rows(torch.tensor([len(s) for s in seqs]), response_lens)], logits

    student_rows, _ = rows_for(student_prompts)
    teacher_rows, teacher_packed = rows_for(teacher_prompts)
    student_logp, teacher_logp = topk_support(student_rows, teacher_rows, TOP_K)
    ids = torch.topk(student_rows, TOP_K, -1).indices

    start = 0
    for prompt, response in zip(teacher_prompts, responses):
        with torch.no_grad():
            single = model(input_ids=torch.tensor([prompt + response])).logits[0].float()
        direct = torch.log_softmax(single[len(prompt) - 1 : len(prompt) + len(response) - 1], -1)
        stop = start + len(response)
        torch.testing.assert_close(teacher_logp[start:stop], direct.gather(-1, ids[start:stop]), atol=1e-4, rtol=0)
        sampled = gather_logp(teacher_rows[start:stop], tokens[start:stop, None])[:, 0]
        torch.testing.assert_close(sampled, direct.gather(-1, tokens[start:stop, None])[:, 0], atol=1e-4, rtol=0)
        start = stop

    # rows off by one are clearly wrong: the check above can fail
    teacher_lens = torch.tensor([len(p) + len(r) for p, r in zip(teacher_prompts, responses)])
    shifted = teacher_packed[response_logit_rows(teacher_lens, response_lens) - 1]
    assert (gather_logp(shifted, tokens[:, None]) - gather_logp(teacher_rows, tokens[:, None])).abs().max() > 0.1

    per_token = divergence(student_logp, teacher_logp, alpha=0.5, add_tail=True)
    assert per_token.shape == (int(response_lens.sum()),)
    assert torch.isfinite(per_token).all() and bool((per_token >= 0).all()) and per_token.mean() > 1e-4
    reverse = divergence(student_logp, teacher_logp, alpha=1.0, add_tail=True)
    assert torch.isfinite(reverse).all() and reverse.mean() > 1e-4
