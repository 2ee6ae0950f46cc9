"""SRPO, SC-SDPO, token weighting and teacher temperature through SDPOLoss as verl's engine calls it (tiny Llama on
CPU, batches from test_loss_hook), against direct computations from the papers' definitions."""
from __future__ import annotations

import pytest
import torch
from verl.trainer.ppo.core_algos import compute_policy_loss_vanilla

from sdpo_ext.loss.divergence import divergence
from sdpo_ext.loss.logprobs import entropy, gather_logp, student_topk
from tests.sdpo_ext.test_loss_hook import forward_logits, make_batch, nested, sdpo_loss


def run(model, data, prompts, responses, loss_fn, advantages=None):
    """(total loss, metrics, per-token divergence rows) of one micro-batch through both hook calls."""
    lengths = [len(p) + len(r) for p, r in zip(prompts, responses)]
    if advantages is not None:
        data["advantages"] = nested([torch.full((len(r),), a) for r, a in zip(responses, advantages)])
    student_logits = torch.cat([forward_logits(model, s) for s in data["input_ids"].unbind()]).detach()
    out = loss_fn(student_logits=student_logits.unsqueeze(0), data=data)
    packed = data["input_ids"].values()
    log_probs = torch.log_softmax(student_logits, -1).gather(-1, torch.roll(packed, -1).unsqueeze(-1)).squeeze(-1)
    model_output = {"log_probs": nested(list(log_probs.split(lengths))),
                    **{k: nested(list(v.squeeze(0).split(lengths))) for k, v in out.items()}}
    total, metrics = loss_fn(model_output=model_output, data=data)
    return total, metrics, out, student_logits


def response_rows(prompts, responses, i):
    offset = sum(len(p) + len(r) for p, r in zip(prompts[:i], responses[:i]))
    return slice(offset + len(prompts[i]) - 1, offset + len(prompts[i]) + len(responses[i]) - 1)


def teacher_rows(model, teacher_prompts, responses, i):
    tp, r = teacher_prompts[i], responses[i]
    return forward_logits(model, torch.cat([tp, r]))[len(tp) - 1 : len(tp) + len(r) - 1].detach()


def test_teacher_temperature_divides_the_teacher_logits(model):
    data, prompts, responses, teacher_prompts = make_batch([1, 1, 1])
    _, _, out, student_logits = run(model, data, prompts, responses, sdpo_loss(model, teacher_temperature=0.5))
    for i in range(3):
        s = student_logits[response_rows(prompts, responses, i)]
        t = teacher_rows(model, teacher_prompts, responses, i) / 0.5
        s_logp, ids = student_topk(s, 8)
        want = divergence(s_logp, gather_logp(t, ids), 0.5, add_tail=True)
        torch.testing.assert_close(out["sdpo_divergence"].squeeze(0)[response_rows(prompts, responses, i)], want,
                                   atol=1e-5, rtol=1e-4)
        torch.testing.assert_close(out["sdpo_teacher_entropy"].squeeze(0)[response_rows(prompts, responses, i)],
                                   entropy(t), atol=1e-5, rtol=1e-4)


def test_sc_sdpo_distillation_weights_scale_each_sample(model):
    """The loss with per-sample weights w equals Σ_i w_i · (sample i's share of the unweighted token-mean loss)."""
    w = [2.0, 0.0, 0.5]
    shares = []
    for i in range(3):  # each sample's contribution alone: the other samples' weights set to 0
        data, prompts, responses, _ = make_batch([1, 1, 1], distill_weight=[float(j == i) for j in range(3)])
        shares.append(run(model, data, prompts, responses, sdpo_loss(model))[0].item())
    data, prompts, responses, _ = make_batch([1, 1, 1], distill_weight=w)
    total, metrics, _, _ = run(model, data, prompts, responses, sdpo_loss(model))
    assert all(share > 0 for share in shares)
    assert total.item() == pytest.approx(sum(wi * share for wi, share in zip(w, shares)), rel=1e-5)
    assert metrics["sdpo/distill_weight_mean"] == pytest.approx(sum(w) / 3)


def test_srpo_sums_ppo_clip_on_correct_samples_and_entropy_weighted_distillation_on_failed(model):
    # sample 0 correct (policy gradient only), samples 1 and 2 failed (distillation only)
    data, prompts, responses, teacher_prompts = make_batch([0, 1, 1], distill_weight=[0.0, 1.0, 1.0],
                                                           pg_weight=[1.0, 0.0, 0.0])
    advantages = [0.8, -0.4, -0.4]
    loss_fn = sdpo_loss(model, variant="srpo", token_weighting="entropy")
    total, metrics, out, student_logits = run(model, data, prompts, responses, loss_fn, advantages)

    n_tokens = sum(len(r) for r in responses)
    raw = {i: torch.exp(-entropy(teacher_rows(model, teacher_prompts, responses, i))) for i in (1, 2)}
    mean_raw = torch.cat(list(raw.values())).mean()  # SRPO: weights normalised to mean 1 over the distilled tokens
    distill = 0.0
    for i in (1, 2):
        rows = response_rows(prompts, responses, i)
        lp = torch.log_softmax(student_logits[rows], -1).gather(-1, responses[i].unsqueeze(-1)).squeeze(-1)
        is_w = torch.exp(lp - torch.full_like(lp, -2.0)).clamp(max=2.0)  # old log-probs are -2 in make_batch
        distill += float((out["sdpo_divergence"].squeeze(0)[rows] * is_w * raw[i] / mean_raw).sum())
    distill /= n_tokens

    width = max(len(r) for r in responses)
    pad = lambda rows: torch.stack([torch.nn.functional.pad(r, (0, width - len(r))) for r in rows])  # noqa: E731
    log_prob = pad([torch.log_softmax(student_logits[response_rows(prompts, responses, i)], -1)
                    .gather(-1, responses[i].unsqueeze(-1)).squeeze(-1) for i in range(3)])
    mask = pad([torch.ones(len(r)) for r in responses]).bool()
    adv = pad([torch.full((len(r),), a * (i == 0)) for i, (r, a) in enumerate(zip(responses, advantages))])
    pg, _ = compute_policy_loss_vanilla(old_log_prob=torch.full_like(log_prob, -2.0), log_prob=log_prob,
                                        advantages=adv, response_mask=mask, loss_agg_mode="token-mean",
                                        config=loss_fn.grpo_config)
    assert total.item() == pytest.approx(pg.item() + distill, rel=1e-4)
    assert metrics["sdpo/pg_loss"].aggregate() == pytest.approx(pg.item(), rel=1e-4)
    assert metrics["sdpo/token_weight_mean"] == pytest.approx(1.0)


def test_confident_weighting_keeps_only_tokens_where_the_teacher_is_surer(model):
    data, prompts, responses, _ = make_batch([1, 1, 1])
    _, metrics, out, _ = run(model, data, prompts, responses, sdpo_loss(model, token_weighting="confident"))
    h_t, h_s = out["sdpo_teacher_entropy"].squeeze(0), out["sdpo_student_entropy"].squeeze(0)
    rows = torch.cat([torch.arange(1000)[response_rows(prompts, responses, i)] for i in range(3)])
    assert metrics["sdpo/token_weight_mean"] == pytest.approx(float((h_t[rows] <= h_s[rows]).float().mean()))
    assert metrics["sdpo/teacher_flatter_fraction"] == pytest.approx(1 - metrics["sdpo/token_weight_mean"])
    assert metrics["sdpo/student_entropy"] == pytest.approx(float(h_s[rows].mean()), rel=1e-5)


@pytest.mark.parametrize("variant", ["sdpo", "sc_sdpo"])
def test_a_micro_batch_without_distilled_samples_still_backpropagates(model, variant):
    """verl calls backward() on every micro-batch's loss: with no sample to distil it must be a zero attached to the
    graph, not a constant (SC-SDPO crashed on the GPU with "element 0 of tensors does not require grad")."""
    data, prompts, responses, _ = make_batch([0, 0, 0], distill_weight=[0.0, 0.0, 0.0])
    lengths = [len(p) + len(r) for p, r in zip(prompts, responses)]
    student_logits = torch.cat([forward_logits(model, s) for s in data["input_ids"].unbind()]).detach()
    student_logits.requires_grad_(True)
    loss_fn = sdpo_loss(model, variant=variant)
    out = loss_fn(student_logits=student_logits.unsqueeze(0), data=data)
    model_output = {"log_probs": nested([torch.zeros(n) for n in lengths]),
                    **{k: nested(list(v.squeeze(0).split(lengths))) for k, v in out.items()}}
    total, _ = loss_fn(model_output=model_output, data=data)
    total.backward()
    assert total.item() == 0.0
    assert torch.count_nonzero(student_logits.grad) == 0
