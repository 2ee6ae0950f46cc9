"""discovery@k: the fraction of problems whose first valid attempt has index <= k (averaged over runs when a problem
has several; an unsolved run cut before k is censored at k), with a percentile bootstrap over problems, and the
paired difference of two methods per problem (pure Python + numpy).
"""
from __future__ import annotations

import math
import warnings
from typing import Sequence

import numpy as np

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
