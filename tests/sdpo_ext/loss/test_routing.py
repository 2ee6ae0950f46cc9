"""Sample routing and weights of the SDPO variants (sdpo_ext.loss.routing, distill_weights.pass_rate_weights), against
values computed by hand from the papers' definitions."""
from __future__ import annotations

import math

import pytest
import torch

from sdpo_ext.loss.distill_weights import pass_rate_weights
from sdpo_ext.loss.routing import group_pass_rates, sample_weights

# two groups of 4: g0 has 1 success of 4 valid, g1 has 2 of 3 valid (one infra sample)
UIDS = ["g0"] * 4 + ["g1"] * 4
SUCCESS = [True, False, False, False, True, True, False, False]
INFRA = [False, False, False, False, False, False, False, True]


def test_group_pass_rates_ignore_infra():
    assert group_pass_rates(UIDS, SUCCESS, INFRA) == [0.25] * 4 + [2 / 3] * 4
    assert group_pass_rates(["a", "a"], [True, False], [True, True]) == [None, None]


def test_sdpo_distills_every_valid_sample():
    w = sample_weights("sdpo", UIDS, SUCCESS, INFRA)
    assert w.distill == [1.0] * 7 + [0.0] and w.policy_gradient == [0.0] * 8


def test_srpo_routes_failed_samples_with_a_correct_sibling_to_distillation_and_the_rest_to_policy_gradient():
    w = sample_weights("srpo", UIDS, SUCCESS, INFRA)
    assert w.distill == [0.0, 1, 1, 1, 0.0, 0.0, 1, 0.0]  # z_SDPO = (1 - c) m; infra: neither
    assert w.policy_gradient == [1.0, 0, 0, 0, 1.0, 1.0, 0, 0]
    # a group where every sample failed has no teacher: all of it goes to the PPO-clip term (advantage 0 there)
    w = sample_weights("srpo", ["a", "a", "b", "b"], [False, False, True, False], [False] * 4)
    assert w.distill == [0.0, 0.0, 0.0, 1.0] and w.policy_gradient == [1.0, 1.0, 1.0, 0.0]


def test_sc_sdpo_weights_by_hand():
    w = sample_weights("sc_sdpo", UIDS, SUCCESS, INFRA)
    a, b = math.sqrt(0.25 * 0.75), math.sqrt(2 / 3 * 1 / 3)
    mean = (a + b) / 2  # batch-adaptive normalisation over the questions with 0 < p < 1
    assert w.distill == pytest.approx([a / mean] * 4 + [b / mean] * 3 + [0.0])
    assert w.policy_gradient == [0.0] * 8


def test_sc_sdpo_zero_for_solved_and_unsolved_groups():
    w = sample_weights("sc_sdpo", ["a", "a", "b", "b"], [True, True, False, False], [False] * 4)
    assert w.distill == [0.0] * 4
    w = sample_weights("sc_sdpo", ["a", "a", "b", "b", "c", "c"], [True, False, False, False, True, True], [False] * 6)
    assert w.distill == pytest.approx([1.0, 1.0, 0.0, 0.0, 0.0, 0.0])  # only "a" is in the sweet spot


def test_pass_rate_weights_rejects_bad_input():
    with pytest.raises(ValueError, match="\\[0, 1\\]"):
        pass_rate_weights(torch.tensor([1.5]))
    with pytest.raises(ValueError, match="\\[Q\\]"):
        pass_rate_weights(torch.zeros(2, 2))
    with pytest.raises(ValueError, match="variant"):
        sample_weights("grpo", ["a"], [True], [False])


def test_token_weights_by_hand():
    from sdpo_ext.loss.distill_weights import token_weights

    h_t = torch.tensor([[0.5, 2.0, 1.0]])
    h_s = torch.tensor([[1.0, 1.0, 1.0]])
    mask = torch.tensor([[1.0, 1.0, 0.0]])
    assert token_weights(h_t, h_s, "none", mask).tolist() == [[1.0, 1.0, 0.0]]
    assert token_weights(h_t, h_s, "confident", mask).tolist() == [[1.0, 0.0, 0.0]]
    raw = torch.tensor([[math.exp(-1.0), math.exp(-4.0), 0.0]])
    torch.testing.assert_close(token_weights(h_t, h_s, "entropy", mask, beta=2.0), raw / raw[0, :2].mean())
    with pytest.raises(ValueError, match="token weighting"):
        token_weights(h_t, h_s, "margin", mask)


def test_entropy_matches_definition():
    from sdpo_ext.loss.logprobs import entropy

    logits = torch.tensor([[0.0, 0.0, 0.0, 0.0], [10.0, 0.0, 0.0, 0.0]])
    h = entropy(logits, chunk_rows=1)
    assert h[0].item() == pytest.approx(math.log(4))
    p = torch.softmax(logits[1], -1)
    assert h[1].item() == pytest.approx(float(-(p * p.log()).sum()), rel=1e-4)
