"""Estimators and intervals used by the evaluations (pure Python + numpy).

- Wilson score interval for one proportion.
- Newcombe (1998, "Improved confidence intervals for the difference between binomial proportions
  based on paired data", method 10) interval for the difference of two paired proportions.
- Percentile bootstrap interval of a mean (resampling the units, e.g. problems, with replacement).
- discovery@k: fraction of problems whose first valid attempt has index <= k (averaged over runs
  when a problem has several), with a percentile bootstrap over problems.
"""
from __future__ import annotations

import math
import warnings
from statistics import NormalDist
from typing import Sequence

import numpy as np


def _z(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    return NormalDist().inv_cdf(0.5 + confidence / 2.0)


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval (p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n); (0, 1) when n == 0."""
    if n < 0 or not 0 <= successes <= max(n, 0):
        raise ValueError(f"need 0 <= successes <= n, got {successes}/{n}")
    if n == 0:
        return 0.0, 1.0
    z = _z(confidence)
    p = successes / n
    centre = p + z * z / (2 * n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    denom = 1 + z * z / n
    low = 0.0 if successes == 0 else max(0.0, (centre - half) / denom)
    high = 1.0 if successes == n else min(1.0, (centre + half) / denom)
    return low, high


def paired_difference_interval(
    a: Sequence[bool], b: Sequence[bool], confidence: float = 0.95
) -> tuple[float, float, float]:
    """(difference, low, high) for mean(a) - mean(b) on paired outcomes, Newcombe's method 10.

    With cells both=e, only a=f, only b=g, neither=h, D = (f - g)/n and Wilson limits (l1,u1), (l2,u2):
      low  = D - sqrt((p1-l1)² - 2φ(p1-l1)(u2-p2) + (u2-p2)²)
      high = D + sqrt((u1-p1)² - 2φ(u1-p1)(p2-l2) + (p2-l2)²)
    where φ = (eh - fg)/sqrt((e+f)(g+h)(e+g)(f+h)) (numerator max(eh - fg - n/2, 0) when eh > fg; 0 if a
    marginal is empty).
    """
    if len(a) != len(b):
        raise ValueError(f"paired outcomes need equal lengths, got {len(a)} and {len(b)}")
    n = len(a)
    if n == 0:
        return 0.0, -1.0, 1.0
    e = sum(1 for x, y in zip(a, b) if x and y)
    f = sum(1 for x, y in zip(a, b) if x and not y)
    g = sum(1 for x, y in zip(a, b) if not x and y)
    h = n - e - f - g
    p1, p2 = (e + f) / n, (e + g) / n
    l1, u1 = wilson_interval(e + f, n, confidence)
    l2, u2 = wilson_interval(e + g, n, confidence)
    marginals = (e + f) * (g + h) * (e + g) * (f + h)
    if marginals == 0:
        phi = 0.0
    else:
        numerator = e * h - f * g
        if numerator > 0:
            numerator = max(numerator - n / 2, 0.0)
        phi = numerator / math.sqrt(marginals)
    d = p1 - p2
    delta = math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    eps = math.sqrt(max(0.0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2))
    return d, max(-1.0, d - delta), min(1.0, d + eps)


def bootstrap_mean_interval(values: Sequence[float], confidence: float = 0.95, n_boot: int = 2000,
                            seed: int = 0) -> tuple[float, float]:
    """Percentile-bootstrap (low, high) of mean(values), resampling the values with replacement; (0, 1) if empty."""
    _z(confidence)
    if not values:
        return 0.0, 1.0
    data = np.asarray(values, dtype=float)
    means = data[np.random.default_rng(seed).integers(0, data.size, size=(n_boot, data.size))].mean(axis=1)
    alpha = (1 - confidence) / 2
    low, high = np.quantile(means, [alpha, 1 - alpha])
    return float(low), float(high)


Run = tuple  # (first valid attempt index, 1-based, or None; attempts judged in the run)


def discovery_matrix(runs_by_problem: Sequence[Sequence[Run]], ks: Sequence[int]) -> np.ndarray:
    """P x K array: for problem p, the fraction of its runs solved within k attempts (NaN if unknown).

    A run with first success f and n judged attempts counts at k if f <= k (solved) or n >= k (unsolved
    within k); an unsolved run that stopped early (n < k) is censored and left out at that k.
    """
    if not runs_by_problem:
        raise ValueError("discovery@k needs at least one problem")
    kk = np.asarray(ks, dtype=float)
    out = np.full((len(runs_by_problem), kk.size), np.nan)
    for p, runs in enumerate(runs_by_problem):
        if not runs:
            continue
        first = np.array([math.inf if f is None else f for f, _ in runs], dtype=float)[:, None]
        made = np.array([n for _, n in runs], dtype=float)[:, None]
        solved = first <= kk[None, :]
        known = solved | (made >= kk[None, :])
        counts = known.sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[p] = np.where(counts > 0, (solved & known).sum(axis=0) / counts, np.nan)
    return out


def _nanmean_rows(matrix: np.ndarray) -> np.ndarray:
    known = ~np.isnan(matrix)
    counts = known.sum(axis=-2)
    sums = np.where(known, matrix, 0.0).sum(axis=-2)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / counts, np.nan)


def discovery_curve(runs_by_problem: Sequence[Sequence[Run]], ks: Sequence[int]) -> list[float]:
    """discovery@k: mean over problems of the per-problem solved-within-k fraction (`discovery_matrix`)."""
    return [float(x) for x in _nanmean_rows(discovery_matrix(runs_by_problem, ks))]


def bootstrap_discovery(runs_by_problem: Sequence[Sequence[Run]], ks: Sequence[int], n_boot: int = 2000,
                        confidence: float = 0.95, seed: int = 0) -> tuple[list[float], list[float]]:
    """Percentile-bootstrap (low, high) bands of discovery@k, resampling problems with replacement."""
    matrix = discovery_matrix(runs_by_problem, ks)
    rng = np.random.default_rng(seed)
    curves = _nanmean_rows(matrix[rng.integers(0, matrix.shape[0], size=(n_boot, matrix.shape[0]))])
    alpha = (1 - confidence) / 2
    low, high = np.nanquantile(curves, [alpha, 1 - alpha], axis=0)
    return [float(x) for x in low], [float(x) for x in high]


def paired_discovery(runs_a: Sequence[Sequence[Run]], runs_b: Sequence[Sequence[Run]], ks: Sequence[int],
                     n_boot: int = 2000, confidence: float = 0.95, seed: int = 0) -> dict[str, list[float]]:
    """discovery@k of a minus b at every k of `ks`, paired per problem: {"value", "low", "high",
    "share_at_or_below_0", "problems"}, one entry per k. value: the mean over the problems both know at k of the
    per-problem difference of `discovery_matrix`; low/high: its percentile-bootstrap interval, resampling problems
    (one draw for both methods, as `bootstrap_discovery` resamples); share: of the draws at or below 0; problems: how
    many both know at k (0: value, interval and share are NaN)."""
    diff = discovery_matrix(runs_a, ks) - discovery_matrix(runs_b, ks)
    draws = _nanmean_rows(diff[np.random.default_rng(seed).integers(0, diff.shape[0], size=(n_boot, diff.shape[0]))])
    alpha = (1 - confidence) / 2
    with warnings.catch_warnings():   # a k no problem is known at gives NaN, as the value does
        warnings.simplefilter("ignore", RuntimeWarning)
        low, high = np.nanquantile(draws, [alpha, 1 - alpha], axis=0)
        # a draw that is 0 in exact arithmetic (the fractions are multiples of 1/runs) may come out as ±1e-17
        share = np.nanmean(np.where(np.isnan(draws), np.nan, draws <= 1e-9), axis=0)
    return {"value": [float(x) for x in _nanmean_rows(diff)], "low": [float(x) for x in low],
            "high": [float(x) for x in high], "share_at_or_below_0": [float(x) for x in share],
            "problems": [int(n) for n in (~np.isnan(diff)).sum(axis=0)]}
