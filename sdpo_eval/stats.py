"""Estimators and intervals used by the evaluations (pure Python + numpy).

- Wilson score interval for one proportion.
- Newcombe (1998, "Improved confidence intervals for the difference between binomial proportions
  based on paired data", method 10) interval for the difference of two paired proportions.
- Percentile bootstrap interval of a mean (resampling the units, e.g. problems, with replacement).
discovery@k and its intervals: `sdpo_eval.discovery.estimates`.
"""
from __future__ import annotations

import math
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
