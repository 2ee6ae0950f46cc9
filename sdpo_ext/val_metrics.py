"""Validation pass@k and mean@n over the judged samples of each theorem (stdlib only).

verl 0.9.1's validation logs, per reward key, `mean@n` (failed or infra samples count as 0) and `best@k/mean`, a
bootstrap (draws with replacement) of the best of k, which is below pass@k for k > 1 (best@n of n distinct samples
redraws some). Here, per data source, with n_i judged samples (infra-masked ones dropped: they say nothing about the
model) and c_i valid ones for theorem i:
  pass@k = mean_i [1 - C(n_i - c_i, k) / C(n_i, k)]   over theorems with n_i >= k   (Chen et al. 2021, unbiased)
  mean@n = mean_i c_i / n_i                            over theorems with n_i >= 1
for k = 1, 2, 4, ... up to the largest n_i.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from sdpo_attempts.pass_at_k import pass_at_k


def _ks(n_max: int) -> list[int]:
    ks = [1]
    while ks[-1] * 2 < n_max:
        ks.append(ks[-1] * 2)
    return ks + [n_max] if n_max > 1 else ks


def validation_pass_at_k(sources: Sequence[str], uids: Sequence[str], valid: Sequence[bool | None],
                         infra: Sequence[bool | None]) -> dict[str, float]:
    """{"val-core/<source>/pass@k", "val-core/<source>/mean@n", "val-aux/<source>/infra_fraction", ...}.

    One entry per sample (the final output of each rollout session); `valid` None marks a sample without a score
    (a failed session), which is dropped like an infra one."""
    counts: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    total, masked = defaultdict(int), defaultdict(int)
    for source, uid, ok, bad in zip(sources, uids, valid, infra, strict=True):
        total[source] += 1
        if ok is None or bad:
            masked[source] += 1
            continue
        counts[source][uid][0] += 1
        counts[source][uid][1] += bool(ok)
    metrics: dict[str, float] = {}
    for source in total:
        groups = list(counts[source].values())
        metrics[f"val-aux/{source}/infra_fraction"] = masked[source] / total[source]
        metrics[f"val-aux/{source}/theorems_judged"] = float(len(groups))
        if not groups:
            continue
        n_max = max(n for n, _ in groups)
        metrics[f"val-core/{source}/mean@{n_max}"] = sum(c / n for n, c in groups) / len(groups)
        for k in _ks(n_max):
            usable = [pass_at_k(n, c, k) for n, c in groups if n >= k]
            metrics[f"val-core/{source}/pass@{k}"] = sum(usable) / len(usable)
    return metrics
