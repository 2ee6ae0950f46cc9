"""Intervals against hand-computed and published values (discovery@k: tests/sdpo_eval/discovery/test_estimates.py)."""
from __future__ import annotations

import pytest

from sdpo_eval.stats import paired_difference_interval, wilson_interval


def test_wilson_matches_newcombe_example():
    low, high = wilson_interval(81, 263)          # Newcombe (1998a), example: 0.2553 to 0.3662
    assert low == pytest.approx(0.2553, abs=1e-4) and high == pytest.approx(0.3662, abs=1e-4)
    assert wilson_interval(0, 10)[0] == 0.0 and wilson_interval(10, 10)[1] == 1.0
    assert wilson_interval(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError):
        wilson_interval(3, 2)


def test_paired_difference_matches_newcombe_method_10():
    # Newcombe (1998b) example: 36 both, 12 only A, 2 only B, 0 neither -> 0.0569 to 0.3404
    a = [True] * 36 + [True] * 12 + [False] * 2
    b = [True] * 36 + [False] * 12 + [True] * 2
    diff, low, high = paired_difference_interval(a, b)
    assert diff == pytest.approx(0.2)
    assert low == pytest.approx(0.0569, abs=1e-4) and high == pytest.approx(0.3404, abs=1e-4)
    d2, l2, h2 = paired_difference_interval(b, a)
    assert (d2, l2, h2) == pytest.approx((-diff, -high, -low))
    same = [True, False, True, True]
    d3, l3, h3 = paired_difference_interval(same, same)
    assert d3 == 0 and l3 < 0 < h3
    with pytest.raises(ValueError):
        paired_difference_interval([True], [True, False])
