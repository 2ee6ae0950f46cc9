"""SDPOLoss as verl's FSDP engine calls it (logits hook, then loss), on a tiny random Llama on CPU.

The micro-batch is built the way verl's agent loop + TransferQueue deliver it (nested input_ids / prompts /
responses, nested response-length old_log_probs) and the teacher callable runs the same model on
[teacher prompt | response]. Checked: the hook's per-token divergence equals a direct per-sample computation,
masked samples contribute nothing, and gradients reach the student logits.
"""
from __future__ import annotations

import pytest
import torch
from transformers import LlamaConfig, LlamaForCausalLM
from verl.utils import tensordict_utils as tu
from verl.workers.config import PolicyLossConfig

from sdpo_ext.config import SDPOActorConfig, SDPOConfig
from sdpo_ext.loss import divergence, gather_logp, student_topk
from sdpo_ext.loss_hook import SDPOLoss

VOCAB = 64


def nested(rows):
    return torch.nested.as_nested_tensor(rows, layout=torch.jagged)


def tiny_llama() -> LlamaForCausalLM:
    """A tiny random Llama on CPU: the `model` fixture of tests/glue/conftest.py."""
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128)
    return LlamaForCausalLM(cfg).eval()


def forward_logits(model, seq: torch.Tensor) -> torch.Tensor:
    return model(input_ids=seq.unsqueeze(0), use_cache=False).logits.squeeze(0)


def make_batch(mask, distill_weight=None, pg_weight=None):
    g = torch.Generator().manual_seed(1)
    prompts = [torch.randint(0, VOCAB, (n,), generator=g) for n in (5, 3, 6)]
    responses = [torch.randint(0, VOCAB, (n,), generator=g) for n in (4, 6, 2)]
    teacher_prompts = [torch.cat([p, torch.randint(0, VOCAB, (k,), generator=g)]) for p, k in zip(prompts, (3, 5, 2))]
    data = tu.get_tensordict({
        "input_ids": nested([torch.cat([p, r]) for p, r in zip(prompts, responses)]),
        "prompts": nested(prompts),
        "responses": nested(responses),
        "response_mask": nested([torch.ones(len(r), dtype=torch.int64) for r in responses]),
        "old_log_probs": nested([torch.full((len(r),), -2.0) for r in responses]),
        "teacher_prompt_ids": nested(teacher_prompts),
        "sdpo_mask": torch.tensor(mask, dtype=torch.float32),
        "sdpo_distill_weight": torch.tensor(distill_weight or [1.0] * len(mask)),
        "sdpo_pg_weight": torch.tensor(pg_weight or [0.0] * len(mask)),
    })
    tu.assign_non_tensor(data, dp_size=1, batch_num_tokens=None, global_batch_size=None)
    return data, prompts, responses, teacher_prompts


def sdpo_loss(model, mode="topk", topk=8, alpha=0.5, grpo_weight=0.0, **options):
    config = SDPOActorConfig(
        ppo_mini_batch_size=4, ppo_micro_batch_size_per_gpu=1, rollout_n=1,
        policy_loss=PolicyLossConfig(loss_mode="sdpo"),  # as omega_conf_to_dataclass builds it from the recipe
        sdpo=SDPOConfig(distillation_mode=mode, topk=topk, alpha=alpha, grpo_weight=grpo_weight, **options),
    )

    def teacher(data, active):
        rows = []
        for i in active.nonzero().squeeze(-1).tolist():
            seq = torch.cat([data["teacher_prompt_ids"].unbind()[i], data["responses"].unbind()[i]])
            r = len(data["responses"].unbind()[i])
            with torch.no_grad():
                rows.append(forward_logits(model, seq)[len(seq) - r - 1 : len(seq) - 1])
        return torch.cat(rows)

    return SDPOLoss(config, teacher)


@pytest.mark.parametrize("mask", [[1, 0, 1], [1, 1, 1]])
def test_hook_divergence_matches_direct_computation(model, mask):
    data, prompts, responses, teacher_prompts = make_batch(mask)
    packed = data["input_ids"].values()
    student_logits = (torch.cat([forward_logits(model, s) for s in data["input_ids"].unbind()])
                      .detach().requires_grad_(True))
    loss_fn = sdpo_loss(model)
    out = loss_fn(student_logits=student_logits.unsqueeze(0), data=data)
    div_rows = out["sdpo_divergence"].squeeze(0)
    assert div_rows.shape == (packed.shape[0],)

    offset = 0
    for i, (p, r, tp) in enumerate(zip(prompts, responses, teacher_prompts)):
        seq_len = len(p) + len(r)
        got = div_rows[offset + len(p) - 1 : offset + seq_len - 1]
        if mask[i]:
            s = student_logits[offset + len(p) - 1 : offset + seq_len - 1]
            t = forward_logits(model, torch.cat([tp, r]))[len(tp) - 1 : len(tp) + len(r) - 1]
            s_logp, ids = student_topk(s, 8)
            want = divergence(s_logp, gather_logp(t, ids), 0.5, add_tail=True)
            torch.testing.assert_close(got, want.float(), atol=1e-5, rtol=1e-4)
            assert (got > 0).all()
        else:
            assert torch.count_nonzero(got) == 0
        offset += seq_len

    model_output = {
        "log_probs": nested(list(torch.log_softmax(student_logits, -1).gather(-1, torch.roll(packed, -1).unsqueeze(-1))
                                 .squeeze(-1).split([len(p) + len(r) for p, r in zip(prompts, responses)]))),
        **{k: nested(list(v.squeeze(0).split([len(p) + len(r) for p, r in zip(prompts, responses)])))
           for k, v in out.items()},
    }
    total, metrics = loss_fn(model_output=model_output, data=data)
    assert torch.isfinite(total) and total.item() > 0
    total.backward()
    assert student_logits.grad is not None and student_logits.grad.abs().sum() > 0
    assert metrics["sdpo/active_sample_fraction"] == pytest.approx(sum(mask) / 3)


def test_token_mode_uses_teacher_token_logprob(model):
    data, prompts, responses, teacher_prompts = make_batch([1, 1, 1])
    student_logits = torch.cat([forward_logits(model, s) for s in data["input_ids"].unbind()])
    out = sdpo_loss(model, mode="token", alpha=1.0)(student_logits=student_logits.unsqueeze(0), data=data)
    p, r, tp = prompts[0], responses[0], teacher_prompts[0]
    t = forward_logits(model, torch.cat([tp, r]))[len(tp) - 1 : len(tp) + len(r) - 1]
    want = torch.log_softmax(t, -1).gather(-1, r.unsqueeze(-1)).squeeze(-1)
    got = out["sdpo_teacher_token_logp"].squeeze(0)[len(p) - 1 : len(p) + len(r) - 1]
    torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-4)


def gradient_paths(model, mode: str, alpha: float, grpo_weight: float) -> set[str]:
    """Which of the two inputs the loss differentiates: the student logits (divergence) and verl's
    per-token log-probs (computed from the same logits by verl, here a separate leaf)."""
    data, prompts, responses, _ = make_batch([1, 1, 1])
    lengths = [len(p) + len(r) for p, r in zip(prompts, responses)]
    data["advantages"] = nested([torch.full((len(r),), 0.5) for r in responses])
    student_logits = (torch.cat([forward_logits(model, s) for s in data["input_ids"].unbind()])
                      .detach().requires_grad_(True))
    loss_fn = sdpo_loss(model, mode=mode, alpha=alpha, grpo_weight=grpo_weight)
    out = loss_fn(student_logits=student_logits.unsqueeze(0), data=data)
    packed = data["input_ids"].values()
    log_probs = (torch.log_softmax(student_logits, -1).gather(-1, torch.roll(packed, -1).unsqueeze(-1)).squeeze(-1)
                 .detach().requires_grad_(True))
    model_output = {"log_probs": nested(list(log_probs.split(lengths))),
                    **{k: nested(list(v.squeeze(0).split(lengths))) for k, v in out.items()}}
    total, metrics = loss_fn(model_output=model_output, data=data)
    assert torch.isfinite(total)
    assert ("actor/pg_clipfrac" in metrics) is (grpo_weight > 0)  # the hybrid's GRPO term is verl's vanilla PPO loss
    grads = torch.autograd.grad(total, [student_logits, log_probs], allow_unused=True)
    return {name for name, g in zip(("logits", "log_probs"), grads) if g is not None}


@pytest.mark.parametrize("mode, alpha", [("topk", 0.5), ("full", 0.5), ("token", 1.0)])
@pytest.mark.parametrize("grpo_weight", [0.0, 0.3])
def test_flash_ce_is_switched_off_exactly_when_logits_and_log_probs_both_carry_gradient(model, mode, alpha,
                                                                                        grpo_weight):
    """flash-attn's in-place cross-entropy backward may only run when nothing else differentiates the logits."""
    paths = gradient_paths(model, mode, alpha, grpo_weight)
    assert paths, "the loss must differentiate something"
    config = SDPOConfig(distillation_mode=mode, alpha=alpha, grpo_weight=grpo_weight)
    assert config.log_prob_backward_must_not_overwrite_logits is (paths == {"logits", "log_probs"})
