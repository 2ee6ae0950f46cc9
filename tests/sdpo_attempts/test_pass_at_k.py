"""Unbiased pass@k (sdpo_attempts.pass_at_k) against hand values, the combinatorial form and exhaustive draws."""
from __future__ import annotations

import itertools
import math

import pytest

from sdpo_attempts.pass_at_k import pass_at_k


@pytest.mark.parametrize("n,c,k", [(4, 0, 1), (4, 1, 2), (4, 2, 4), (8, 3, 2), (8, 7, 4), (5, 5, 3)])
def test_pass_at_k_is_the_probability_that_k_draws_without_replacement_hold_a_valid_one(n, c, k):
    draws = list(itertools.combinations([True] * c + [False] * (n - c), k))
    assert pass_at_k(n, c, k) == pytest.approx(sum(any(d) for d in draws) / len(draws))
    assert pass_at_k(n, c, k) == pytest.approx(1 - math.comb(n - c, k) / math.comb(n, k))


def test_pass_at_k_hand_values_and_combinatorial_form():
    assert pass_at_k(5, 2, 2) == pytest.approx(1 - 3 / 10)          # 1 - C(3,2)/C(5,2)
    assert pass_at_k(10, 3, 1) == pytest.approx(0.3)
    assert pass_at_k(10, 0, 5) == 0.0 and pass_at_k(4, 4, 1) == 1.0
    assert pass_at_k(10, 8, 3) == 1.0                                 # n - c < k
    for n in range(1, 13):
        for c in range(n + 1):
            for k in range(1, n + 1):
                assert pass_at_k(n, c, k) == pytest.approx(1 - math.comb(n - c, k) / math.comb(n, k), abs=1e-12)
    assert 0.0 < pass_at_k(2000, 1, 1000) < 1.0                      # stable where C(n, k) overflows floats
    with pytest.raises(ValueError):
        pass_at_k(3, 1, 4)
