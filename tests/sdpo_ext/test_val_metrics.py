"""Validation pass@k / mean@n (sdpo_ext.val_metrics) and SDPOTrainer's hook into verl's validation metrics."""
from __future__ import annotations

import pytest

from sdpo_attempts.pass_at_k import pass_at_k
from sdpo_ext.val_metrics import validation_pass_at_k


def test_infra_samples_are_dropped_not_counted_as_failures():
    # theorem a: 4 samples, 1 valid; theorem b: 4 samples, 1 infra, 1 valid of 3 judged; theorem c: only infra
    sources = ["minif2f"] * 12
    uids = ["a"] * 4 + ["b"] * 4 + ["c"] * 4
    valid = [True, False, False, False, False, True, False, False, False, False, False, None]
    infra = [False] * 4 + [True, False, False, False] + [True, True, True, False]
    m = validation_pass_at_k(sources, uids, valid, infra)
    assert m["val-core/minif2f/pass@1"] == pytest.approx((1 / 4 + 1 / 3) / 2)
    assert m["val-core/minif2f/pass@2"] == pytest.approx((pass_at_k(4, 1, 2) + pass_at_k(3, 1, 2)) / 2)
    assert m["val-core/minif2f/pass@4"] == pytest.approx(1.0)   # only theorem a has 4 judged samples
    assert m["val-core/minif2f/mean@4"] == pytest.approx((1 / 4 + 1 / 3) / 2)
    assert m["val-aux/minif2f/infra_fraction"] == pytest.approx(5 / 12)
    assert m["val-aux/minif2f/theorems_judged"] == 2


def test_trainer_adds_pass_at_k_to_verls_validation_metrics():
    from sdpo_ext.config import RunConfig
    from sdpo_ext.trainer import SDPOTrainer

    trainer = SDPOTrainer.__new__(SDPOTrainer)   # only the metrics hook is exercised: no workers
    trainer.run_config = RunConfig()
    uids = ["a"] * 4 + ["b"] * 4
    infos = {"reward": [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
             "verdict": ["valid", "lean_error", "truncated", "sorry", "infra", "lean_error", "lean_error", "sorry"],
             "infra": [0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]}
    m = trainer._val_metrics_update(["minif2f"] * 8, uids, infos, [2] * 8)
    assert m["val-core/minif2f/reward/mean@4"] == pytest.approx(1 / 8)   # verl's own: infra counts as 0
    assert m["val-core/minif2f/pass@1"] == pytest.approx((1 / 4 + 0) / 2)
    assert m["val-core/minif2f/pass@4"] == pytest.approx(1.0)
    assert m["val-core/minif2f/pass@2"] == pytest.approx((0.5 + 0) / 2)
    assert m["val-aux/minif2f/infra_fraction"] == pytest.approx(1 / 8)   # the one name of the infra share
    assert not [key for key in m if "/infra/" in key]                    # verl's summary of the infra flag is dropped
