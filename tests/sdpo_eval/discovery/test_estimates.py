"""discovery@k, its bootstrap band and the paired difference, against hand-computed and exact values."""
from __future__ import annotations

import math

import pytest

from sdpo_eval.discovery.estimates import bootstrap_discovery, discovery_curve, discovery_matrix, paired_discovery


def test_discovery_hand_computed():
    # p0 solved at attempt 3; p1 unsolved after 10; p2 unsolved, stopped after 4 (censored beyond 4);
    # p3 two runs: one solved at 1, one unsolved after 16.
    runs = [[(3, 3)], [(None, 10)], [(None, 4)], [(1, 16), (None, 16)]]
    ks = [1, 3, 5, 10]
    m = discovery_matrix(runs, ks)
    assert m[0].tolist() == [0, 1, 1, 1] and m[1].tolist() == [0, 0, 0, 0]
    assert m[2, :2].tolist() == [0, 0] and all(math.isnan(x) for x in m[2, 2:])
    assert m[3].tolist() == [0.5] * 4
    assert discovery_curve(runs, ks) == pytest.approx([0.5 / 4, 1.5 / 4, 1.5 / 3, 1.5 / 3])


def test_bootstrap_band_brackets_curve_and_is_degenerate_when_all_equal():
    runs = [[(1, 1)], [(None, 8)], [(5, 5)], [(2, 2)], [(None, 8)]]
    ks = list(range(1, 9))
    curve = discovery_curve(runs, ks)
    low, high = bootstrap_discovery(runs, ks, n_boot=500, seed=1)
    assert all(lo <= c <= hi for lo, c, hi in zip(low, curve, high))
    assert low[-1] < curve[-1] < high[-1]
    same = [[(2, 2)]] * 4
    assert bootstrap_discovery(same, [1, 2], n_boot=50) == ([0.0, 1.0], [0.0, 1.0])


def paired_discovery_difference(runs_a, runs_b, k, **kwargs):
    """`paired_discovery` at one k, as the report keeps it at the budget (None: no problem known to both)."""
    paired = paired_discovery(runs_a, runs_b, [k], **kwargs)
    return {"k": k, **{key: values[0] for key, values in paired.items()}} if paired["problems"][0] else None


def paired_discovery_curves(runs_a, runs_b, ks, **kwargs):
    paired = paired_discovery(runs_a, runs_b, ks, **kwargs)
    return paired["value"], paired["low"], paired["high"]


def test_paired_discovery_difference_pairs_problems_and_leaves_out_what_a_cut_run_does_not_know():
    # a solves p0 (at 2) and p1 (at 9); b solves p0 at 1 only; p2: a's run cut after 3 attempts (unknown at k=8)
    a = [[(2, 2)], [(9, 9)], [(None, 3)], [(None, 10)]]
    b = [[(1, 1)], [(None, 10)], [(4, 4)], [(None, 10)]]
    at8 = paired_discovery_difference(a, b, 8, n_boot=400, seed=0)
    assert at8["problems"] == 3 and at8["value"] == 0.0   # p1 not solved by a within 8; p2 left out
    at10 = paired_discovery_difference(a, b, 10, n_boot=400, seed=0)
    assert at10["problems"] == 3 and at10["value"] == pytest.approx(1 / 3)   # p1 is a's alone
    assert at10["low"] <= at10["value"] <= at10["high"] and 0 < at10["share_at_or_below_0"] < 1
    same = paired_discovery_difference(a, a, 10, n_boot=50)
    assert (same["value"], same["low"], same["high"], same["share_at_or_below_0"]) == (0.0, 0.0, 0.0, 1.0)
    assert paired_discovery_difference([[(None, 2)]], [[(1, 1)]], 5) is None


def test_paired_discovery_curves_agree_with_the_difference_at_each_k_and_are_nan_where_nothing_is_known():
    a = [[(2, 2)], [(9, 9)], [(None, 3)], [(None, 10)]]
    b = [[(1, 1)], [(None, 10)], [(4, 4)], [(None, 10)]]
    value, low, high = paired_discovery_curves(a, b, [1, 8, 10], n_boot=400, seed=0)
    assert value[0] == pytest.approx(-1 / 4)   # k = 1: b solved p0, a did not; every run is known at 1
    for k, v in zip([8, 10], value[1:]):
        assert v == pytest.approx(paired_discovery_difference(a, b, k, n_boot=400, seed=0)["value"])
    assert all(lo <= v <= hi for lo, v, hi in zip(low, value, high))
    never = paired_discovery_curves([[(None, 2)]], [[(1, 1)]], [1, 5], n_boot=20)
    assert never[0][0] == -1.0 and all(math.isnan(x) for x in (never[0][1], never[1][1], never[2][1]))


def test_the_share_at_or_below_0_counts_draws_that_are_0_in_exact_arithmetic():
    """Per-problem differences are multiples of 1/runs, so many bootstrap means are exactly 0; floating-point sums
    make some of them ±1e-17. The share must count each exact 0, as an exact (Fraction) oracle over the same draws."""
    from fractions import Fraction

    import numpy as np

    def runs(solved: int) -> list:   # 5 runs, `solved` of them at attempt 1
        return [(1, 1)] * solved + [(None, 4)] * (5 - solved)

    a_solved, b_solved = [3, 1, 4, 0, 2, 5, 1, 3], [1, 3, 0, 4, 2, 1, 5, 3]
    a, b = [runs(s) for s in a_solved], [runs(s) for s in b_solved]
    diffs = [Fraction(x - y, 5) for x, y in zip(a_solved, b_solved)]
    picks = np.random.default_rng(0).integers(0, len(diffs), size=(500, len(diffs)))
    exact = sum(sum(diffs[i] for i in row) <= 0 for row in picks) / 500
    assert paired_discovery(a, b, [4], n_boot=500, seed=0)["share_at_or_below_0"] == [pytest.approx(exact)]
