"""SDPO loss math against independent plain-Python formulas and verl's own agg_loss."""

import importlib.util
import math
from pathlib import Path

import pytest
import torch

from sdpo_ext.loss.divergence import add_tail_bucket, divergence, renormalize
from sdpo_ext.loss.logprobs import full_log_softmax, gather_logp, softmax_stats, student_topk, token_log_probs
from sdpo_ext.loss.objective import (
    AGG_MODES,
    aggregate_loss,
    distillation_loss_matrix,
    importance_weights,
    sampled_token_loss_matrix,
    token_advantage,
)

_spec = importlib.util.spec_from_file_location("support_reference", Path(__file__).with_name("support_reference.py"))
_reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_reference)
topk_support = _reference.topk_support  # test oracle (tests/sdpo_ext/loss/support_reference.py)

S = [0.5, 0.3, 0.2]
T = [0.2, 0.5, 0.3]


def py_kl(p, q):
    return sum(pi * math.log(pi / qi) for pi, qi in zip(p, q) if pi > 0)


def py_jsd(s, t, a):
    m = [(1 - a) * si + a * ti for si, ti in zip(s, t)]
    return (1 - a) * py_kl(s, m) + a * py_kl(t, m)


def logt(p, dtype=torch.float64):
    return torch.log(torch.tensor(p, dtype=dtype))


def test_kl_by_hand_two_way():
    # KL([1/2,1/2] || [1/4,3/4]) = 1/2 ln 2 + 1/2 ln(2/3) = 1/2 ln(4/3)
    assert divergence(logt([0.25, 0.75]), logt([0.5, 0.5]), alpha=0.0).item() == pytest.approx(0.5 * math.log(4 / 3),
                                                                                               abs=1e-12)
    # reverse: KL([1/4,3/4] || [1/2,1/2]) = 1/4 ln(1/2) + 3/4 ln(3/2)
    assert divergence(logt([0.25, 0.75]), logt([0.5, 0.5]), alpha=1.0).item() == pytest.approx(
        0.25 * math.log(0.5) + 0.75 * math.log(1.5), abs=1e-12
    )


@pytest.mark.parametrize("alpha", [0.0, 0.1, 0.5, 0.9, 1.0])
def test_divergence_matches_formula(alpha):
    expected = py_kl(T, S) if alpha == 0 else py_kl(S, T) if alpha == 1 else py_jsd(S, T, alpha)
    got = divergence(logt(S, torch.float32), logt(T, torch.float32), alpha)
    assert got.dtype == torch.float32
    assert got.item() == pytest.approx(expected, rel=1e-5)


def test_jsd_half_is_symmetric_and_bounded_by_ln2():
    a = divergence(logt(S), logt(T), 0.5).item()
    b = divergence(logt(T), logt(S), 0.5).item()
    assert a == pytest.approx(b, rel=1e-12)
    assert 0 < a < math.log(2)
    # disjoint supports reach the bound ln 2
    disjoint = divergence(torch.log(torch.tensor([1.0, 0.0], dtype=torch.float64)),
                          torch.log(torch.tensor([0.0, 1.0], dtype=torch.float64)), 0.5)
    assert disjoint.item() == pytest.approx(math.log(2), rel=1e-12)


def test_jsd_limits_recover_the_kls():
    # JSD_a = a*KL(T||S) + O(a^2) as a -> 0, and (1-a)*KL(S||T) + O((1-a)^2) as a -> 1.
    eps = 1e-5
    assert (divergence(logt(S), logt(T), eps) / eps).item() == pytest.approx(py_kl(T, S), rel=1e-3)
    assert (divergence(logt(S), logt(T), 1 - eps) / eps).item() == pytest.approx(py_kl(S, T), rel=1e-3)


@pytest.mark.parametrize("alpha", [0.0, 0.3, 1.0])
def test_divergence_nonnegative_and_zero_iff_equal(alpha):
    g = torch.Generator().manual_seed(0)
    a = torch.log_softmax(torch.randn(64, 7, generator=g, dtype=torch.float64), -1)
    b = torch.log_softmax(torch.randn(64, 7, generator=g, dtype=torch.float64), -1)
    d = divergence(a, b, alpha)
    assert d.shape == (64,)
    assert bool((d > 0).all())
    assert divergence(a, a, alpha).abs().max().item() < 1e-12


def test_renormalize():
    torch.testing.assert_close(renormalize(logt([0.2, 0.6])), logt([0.25, 0.75]))


def test_tail_bucket_values_and_clamp():
    topk = logt([0.5, 0.3])
    out = add_tail_bucket(topk)
    assert out.shape == (3,)
    assert out[-1].exp().item() == pytest.approx(0.2, rel=1e-12)
    # a support carrying all the mass (or more, by rounding) gets the clamped tail, never NaN
    full = add_tail_bucket(logt([0.6, 0.4]))
    over = add_tail_bucket(logt([0.7, 0.4]))
    for x in (full, over):
        assert torch.isfinite(x).all()
        assert x[-1].item() == pytest.approx(math.log(-math.expm1(-1e-7)), rel=1e-6)


def test_divergence_with_tail_equals_three_way_formula():
    # top-2 of S and T, tail = the rest: S -> [0.5,0.3 | 0.2], T -> [0.2,0.5 | 0.3]
    s2, t2 = logt(S[:2]), logt(T[:2])
    for alpha in (0.0, 0.5, 1.0):
        expected = py_kl(T, S) if alpha == 0 else py_kl(S, T) if alpha == 1 else py_jsd(S, T, alpha)
        assert divergence(s2, t2, alpha, add_tail=True).item() == pytest.approx(expected, rel=1e-10)


def test_topk_without_tail_is_renormalised():
    # top-2 without tail: S -> [0.5, 0.3]/0.8 = [5/8, 3/8], T -> [0.2, 0.5]/0.7 = [2/7, 5/7]
    s2, t2 = [5 / 8, 3 / 8], [2 / 7, 5 / 7]
    for alpha in (0.0, 0.4, 1.0):
        expected = py_kl(t2, s2) if alpha == 0 else py_kl(s2, t2) if alpha == 1 else py_jsd(s2, t2, alpha)
        assert divergence(logt(S[:2]), logt(T[:2]), alpha).item() == pytest.approx(expected, rel=1e-10)


def test_full_vocab_vs_topk_support():
    g = torch.Generator().manual_seed(1)
    student = torch.randn(6, 40, generator=g)
    teacher = student + 0.5 * torch.randn(6, 40, generator=g)
    s_full, t_full = topk_support(student, teacher, None, temperature=0.8)
    assert s_full.shape == (6, 40) and s_full.dtype == torch.float32
    torch.testing.assert_close(s_full, torch.log_softmax(student / 0.8, -1))
    torch.testing.assert_close(t_full, torch.log_softmax(teacher / 0.8, -1))
    s_k, t_k = topk_support(student, teacher, 5, temperature=0.8)
    ids = torch.topk(student, 5, -1).indices
    torch.testing.assert_close(s_k, s_full.gather(-1, ids))
    torch.testing.assert_close(t_k, t_full.gather(-1, ids))
    # K = V with the tail is the full divergence (tail mass is the clamp's ~1e-7)
    s_v, t_v = topk_support(student, teacher, 40)
    torch.testing.assert_close(divergence(s_v, t_v, 0.5, add_tail=True),
                               divergence(*topk_support(student, teacher, None), 0.5), atol=1e-5, rtol=1e-5)
    # a top-K divergence with tail lower-bounds the full one (data processing inequality)
    for alpha in (0.0, 0.5, 1.0):
        s5, t5 = topk_support(student, teacher, 5)
        full = divergence(*topk_support(student, teacher, None), alpha)
        assert bool((divergence(s5, t5, alpha, add_tail=True) <= full + 1e-6).all())


def test_chunked_rows_match_unchunked_values_and_grads():
    g = torch.Generator().manual_seed(2)
    base = torch.randn(11, 30, generator=g, dtype=torch.float64)
    teacher = torch.randn(11, 30, generator=g, dtype=torch.float64)
    grads = []
    for chunk in (None, 3):
        student = base.clone().requires_grad_(True)
        s, t = topk_support(student, teacher, 4, temperature=0.7, chunk_rows=chunk)
        divergence(s, t, 0.5, add_tail=True).sum().backward()
        grads.append((s.detach(), student.grad))
    torch.testing.assert_close(grads[0][0], grads[1][0])
    torch.testing.assert_close(grads[0][1], grads[1][1])
    torch.testing.assert_close(full_log_softmax(base, 0.7, chunk_rows=4), torch.log_softmax(base / 0.7, -1))


@pytest.mark.parametrize("k", [None, 3])
def test_zero_rows(k):
    s, t = topk_support(torch.zeros(0, 7, requires_grad=True), torch.zeros(0, 7), k, chunk_rows=4)
    assert s.shape == t.shape == (0, 7 if k is None else 3)
    assert divergence(s, t, 0.5).shape == (0,)


def test_gather_logp_gradient_is_exact():
    x = torch.randn(5, 13, dtype=torch.float64, requires_grad=True)
    ids = torch.randint(0, 13, (5, 3))
    assert torch.autograd.gradcheck(lambda z: gather_logp(z, ids, 0.6, chunk_rows=2), (x,))


def test_bf16_logits_computed_in_fp32():
    g = torch.Generator().manual_seed(3)
    logits = (5 * torch.randn(4, 1000, generator=g)).to(torch.bfloat16)
    logp, ids = student_topk(logits, 8)
    assert logp.dtype == torch.float32
    torch.testing.assert_close(logp, torch.log_softmax(logits.float(), -1).gather(-1, ids))


@pytest.mark.parametrize("alpha", [0.0, 0.5, 1.0])
@pytest.mark.parametrize("k", [None, 4])
def test_gradient_reaches_student_only(alpha, k):
    g = torch.Generator().manual_seed(4)
    student = torch.randn(3, 10, generator=g, requires_grad=True)
    teacher = torch.randn(3, 10, generator=g, requires_grad=True)
    s, t = topk_support(student, teacher, k)
    assert not t.requires_grad
    divergence(s, t, alpha, add_tail=k is not None).sum().backward()
    assert student.grad is not None and student.grad.abs().sum() > 0
    assert teacher.grad is None
    # divergence itself detaches a teacher that carries a graph
    s2 = torch.log_softmax(torch.randn(3, 5, generator=g), -1).requires_grad_(True)
    t2 = torch.log_softmax(torch.randn(3, 5, generator=g), -1).requires_grad_(True)
    divergence(s2, t2, alpha).sum().backward()
    assert t2.grad is None and s2.grad is not None


def test_reverse_kl_gradient_matches_closed_form():
    # d/dz KL(softmax(z) || q) = p * (log p - log q - KL)
    z = torch.tensor([0.3, -1.0, 2.0], dtype=torch.float64, requires_grad=True)
    q = torch.tensor([0.2, 0.5, 0.3], dtype=torch.float64)
    logp = torch.log_softmax(z, -1)
    d = divergence(logp, q.log(), 1.0)
    d.backward()
    p = logp.detach().exp()
    expected = p * (p.log() - q.log() - d.detach())
    torch.testing.assert_close(z.grad, expected)


def test_divergence_validation():
    a = logt(S)
    with pytest.raises(ValueError, match="alpha"):
        divergence(a, a, 1.5)
    with pytest.raises(ValueError, match="alpha"):
        divergence(a, a, float("nan"))
    with pytest.raises(ValueError, match="shape"):
        divergence(a, logt([0.5, 0.5]), 0.5)
    with pytest.raises(ValueError, match="k must be"):
        student_topk(torch.zeros(2, 5), 6)


def test_importance_weights_clip_and_rollout_weights():
    logp = torch.tensor([[0.0, math.log(3.0), -1.0, 30.0]], requires_grad=True)
    old = torch.zeros(1, 4)
    w = importance_weights(logp, old, is_clip=2.0)
    torch.testing.assert_close(w, torch.tensor([[1.0, 2.0, math.exp(-1.0), 2.0]]))
    assert not w.requires_grad
    unclipped = importance_weights(logp, old, is_clip=None)
    torch.testing.assert_close(unclipped, torch.tensor([[1.0, 3.0, math.exp(-1.0), math.exp(20.0)]]))
    rollout = torch.tensor([[0.5, 1.0, 2.0, 0.0]])
    torch.testing.assert_close(importance_weights(logp, old, 2.0, rollout), w * rollout)
    with pytest.raises(ValueError, match="is_clip"):
        importance_weights(logp, old, 0.0)


def test_sampled_token_loss_gradient_is_policy_gradient():
    g = torch.Generator().manual_seed(5)
    logits = torch.randn(2, 4, 9, generator=g, dtype=torch.float64, requires_grad=True)
    tokens = torch.randint(0, 9, (2, 4), generator=g)
    student = torch.log_softmax(logits, -1).gather(-1, tokens[..., None])[..., 0]
    teacher = torch.log(torch.rand(2, 4, generator=g, dtype=torch.float64))
    w = torch.rand(2, 4, generator=g, dtype=torch.float64) + 0.5
    loss = sampled_token_loss_matrix(student, teacher, w)
    advantage = (teacher - student).detach()
    torch.testing.assert_close(advantage, token_advantage(student, teacher))
    torch.testing.assert_close(loss, (student - teacher).detach() * student * w)  # authors' form
    (grad,) = torch.autograd.grad(loss.sum(), logits, retain_graph=True)
    (expected,) = torch.autograd.grad((-advantage * w * student).sum(), logits)
    torch.testing.assert_close(grad, expected)
    # per-token check: d l_t / d logp_t = -A_t w_t
    leaf = student.detach().requires_grad_(True)
    sampled_token_loss_matrix(leaf, teacher, w).sum().backward()
    torch.testing.assert_close(leaf.grad, -advantage * w)


def test_distillation_loss_matrix_masks_samples_even_with_nan():
    div = torch.tensor([[1.0, 2.0], [float("nan"), 3.0]])
    w = torch.tensor([[0.5, 1.0], [1.0, 1.0]])
    out = distillation_loss_matrix(div, w, sample_mask=torch.tensor([True, False]))
    torch.testing.assert_close(out, torch.tensor([[0.5, 2.0], [0.0, 0.0]]))
    torch.testing.assert_close(distillation_loss_matrix(div[:1], None), div[:1])


@pytest.mark.parametrize("mode", AGG_MODES)
def test_aggregate_loss_equals_verl(mode):
    core_algos = pytest.importorskip("verl.trainer.ppo.core_algos")
    g = torch.Generator().manual_seed(6)
    for trial in range(5):
        loss_mat = torch.randn(6, 9, generator=g)
        mask = (torch.rand(6, 9, generator=g) > 0.3).float()
        mask[trial % 6] = 0.0  # a fully masked sequence
        ours = aggregate_loss(loss_mat, mask, mode)
        theirs = core_algos.agg_loss(loss_mat, mask, mode)
        torch.testing.assert_close(ours, theirs)
        kwargs = dict(dp_size=2, batch_num_tokens=40, global_batch_size=10, loss_scale_factor=7)
        torch.testing.assert_close(aggregate_loss(loss_mat, mask, mode, **kwargs),
                                   core_algos.agg_loss(loss_mat, mask, mode, **kwargs))


def test_aggregate_loss_counts_masked_samples_as_zeros():
    loss = torch.tensor([[2.0, 2.0], [5.0, 5.0]])
    response_mask = torch.ones(2, 2)
    zeroed = distillation_loss_matrix(loss, None, sample_mask=torch.tensor([True, False]))
    assert aggregate_loss(zeroed, response_mask, "token-mean").item() == pytest.approx(1.0)  # (2+2+0+0)/4
    with pytest.raises(ValueError, match="loss_agg_mode"):
        aggregate_loss(loss, response_mask, "mean")
    with pytest.raises(ValueError, match="batch_num_tokens"):
        aggregate_loss(loss, response_mask, "token-mean", dp_size=2)


@pytest.mark.parametrize("fp32", [True, False])
@pytest.mark.parametrize("chunk_rows", [1, 3, 7, 100])
def test_token_log_probs_are_the_log_softmax_at_the_labels_with_its_gradient(fp32, chunk_rows):
    g = torch.Generator().manual_seed(3)
    logits = (torch.randn(7, 50, generator=g) * 4).requires_grad_(True)
    labels = torch.randint(0, 50, (7,), generator=g)
    got = token_log_probs(logits, labels, fp32=fp32, chunk_rows=chunk_rows)
    reference = logits.detach().clone().requires_grad_(True)
    want = torch.log_softmax(reference, -1).gather(-1, labels.unsqueeze(-1)).squeeze(-1)
    torch.testing.assert_close(got, want)
    weights = torch.linspace(-2.0, 1.0, 7)
    (got_grad,) = torch.autograd.grad((got * weights).sum(), logits)
    (want_grad,) = torch.autograd.grad((want * weights).sum(), reference)
    torch.testing.assert_close(got_grad, want_grad)


def test_token_log_probs_need_one_label_per_row():
    with pytest.raises(ValueError, match="labels must be"):
        token_log_probs(torch.zeros(4, 5), torch.zeros(3, dtype=torch.int64), fp32=True)


def test_token_log_probs_of_bf16_logits_are_verls_fallback_value():
    from verl.utils.torch_functional import logprobs_from_logits_v2

    g = torch.Generator().manual_seed(4)
    logits = (torch.randn(9, 300, generator=g) * 5).to(torch.bfloat16)
    labels = torch.randint(0, 300, (9,), generator=g)
    got = token_log_probs(logits, labels, fp32=False, chunk_rows=4)
    assert got.dtype == torch.float32
    torch.testing.assert_close(got, logprobs_from_logits_v2(logits, labels).float(), rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64])
def test_softmax_stats_are_the_log_normaliser_and_the_entropy(dtype):
    g = torch.Generator().manual_seed(5)
    logits = (6 * torch.randn(7, 50, generator=g)).to(dtype)
    logits[0, 0] = 40.0  # a nearly one-hot row: its small entropy must not cancel to 0
    before = logits.clone()
    lse, ent = softmax_stats(logits, chunk_rows=3)
    assert torch.equal(logits, before)  # the caller's logits are never written
    assert lse.dtype == ent.dtype == (torch.float64 if dtype == torch.float64 else torch.float32)
    exact = logits.double()
    logp = torch.log_softmax(exact, -1)
    torch.testing.assert_close(lse.double(), torch.logsumexp(exact, -1), rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(ent.double(), -(logp.exp() * logp).sum(-1), rtol=1e-4, atol=1e-6)
    assert 0 < ent[0] < 1e-3


def test_softmax_stats_of_masked_tokens_are_finite():
    """A −inf logit (a masked token) has probability 0 and adds nothing to the entropy (it used to give NaN)."""
    logits = torch.tensor([[0.0, 0.0, -math.inf, -math.inf], [1.0, 2.0, 3.0, -math.inf]])
    lse, ent = softmax_stats(logits)
    torch.testing.assert_close(ent[0], torch.tensor(math.log(2)))
    p = torch.softmax(logits[1, :3], -1)
    torch.testing.assert_close(ent[1], -(p * p.log()).sum())
    torch.testing.assert_close(lse, torch.logsumexp(logits, -1))


def test_gather_logp_from_a_given_log_normaliser_is_the_same_value_and_gradient():
    x = torch.randn(5, 13, dtype=torch.float64, requires_grad=True)
    ids = torch.randint(0, 13, (5, 3))
    lse, _ = softmax_stats(x)
    torch.testing.assert_close(gather_logp(x, ids, log_normalizer=lse), gather_logp(x, ids))
    assert torch.autograd.gradcheck(lambda z: gather_logp(z, ids, chunk_rows=2, log_normalizer=softmax_stats(z)[0]),
                                    (x,))
    with pytest.raises(ValueError, match="log_normalizer"):
        gather_logp(x, ids, log_normalizer=lse[:4])
    with pytest.raises(ValueError, match="temperature 1"):  # softmax_stats normalises unscaled logits
        student_topk(x, 4, 0.6, log_normalizer=lse)
