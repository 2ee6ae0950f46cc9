"""The per-method learning signal of discovery runs (`sdpo_eval.discovery_signal`) from verl's metrics files."""
from __future__ import annotations

import json

import pytest

from sdpo_eval.discovery_signal import method_signals


def write_run(path, rows, cut_last_line=False):
    path.mkdir(parents=True)
    text = "".join(json.dumps({"step": i + 1, "data": row}) + "\n" for i, row in enumerate(rows))
    (path / "metrics.jsonl").write_text(text + ('{"step": 9, "da' if cut_last_line else ""))


def test_grpo_learns_only_in_steps_with_a_success_and_sdpo_from_feedback(tmp_path):
    no_success = {"critic/advantages/max": 0.0, "critic/advantages/min": 0.0, "timing_s/step": 4.0}
    success = {"critic/advantages/max": 1.2, "critic/advantages/min": -0.3, "timing_s/step": 6.0}
    write_run(tmp_path / "demo/grpo/seed1", [no_success, no_success, no_success, {**success, "sdpo_lean/ttrl_reset_s":
                                                                                   0.5}], cut_last_line=True)
    teacher = {"sdpo_lean/distilled_sample_fraction": 1.0, "self_distillation/feedback_used_fraction": 0.75,
               "self_distillation/demonstration_used_fraction": 0.25, "actor/sdpo/teacher_minus_student_token_logp":
               -0.1, "actor/sdpo/divergence_mean": 0.03}
    write_run(tmp_path / "demo/sdpo/seed1", [{**no_success, **teacher, "sdpo_lean/ttrl_reset_s": 0.8}])
    write_run(tmp_path / "demo/sdpo/seed2", [{**success, **teacher, "sdpo_lean/distilled_sample_fraction": 0.5,
                                              "sdpo_lean/ttrl_reset_s": 1.6}, {**no_success, **teacher}])
    table = method_signals(tmp_path)
    assert table["grpo"] == {"runs": 1, "steps": 4, "advantage_steps": 0.25, "step_s": 4.5,
                             "reset_s": {"median": 0.5, "max": 0.5, "count": 1}}
    sdpo = table["sdpo"]
    assert sdpo["runs"] == 2 and sdpo["steps"] == 1.5 and sdpo["advantage_steps"] == pytest.approx(0.25)
    assert sdpo["distilled_sample_fraction"] == pytest.approx((1.0 + 0.75) / 2)
    assert sdpo["feedback_fraction"] == 0.75 and sdpo["reset_s"] == {"median": 1.2, "max": 1.6, "count": 2}


def test_a_broken_line_before_the_last_is_an_error(tmp_path):
    run = tmp_path / "demo/grpo/seed1"
    run.mkdir(parents=True)
    (run / "metrics.jsonl").write_text('{"step": 1, "da\n{"step": 2, "data": {}}\n')
    with pytest.raises(ValueError, match="line 1"):
        method_signals(tmp_path)
