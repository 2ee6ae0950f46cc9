"""sdpo_ext.startup.timeline: a run's start-up marks (the table that reads them: tests/sdpo_eval/discovery/
test_startup.py)."""
from __future__ import annotations

import pytest

from sdpo_ext.startup import timeline


def test_a_phase_is_marked_once_per_process_and_unknown_phases_are_refused(monkeypatch, capsys):
    monkeypatch.setattr(timeline, "_seen", set())
    timeline.mark("trainer_init")
    timeline.mark("trainer_init")
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 and lines[0].startswith("sdpo_lean/startup trainer_init ")
    with pytest.raises(ValueError, match="unknown start-up phase"):
        timeline.mark("warmup")


def test_an_attribute_marks_its_phase_when_first_assigned_and_reads_as_a_plain_one(monkeypatch, capsys):
    monkeypatch.setattr(timeline, "_seen", set())

    class Trainer:
        reward_loop_manager = timeline.MarkedAttribute("reward_loop_ready")

    trainer = Trainer()
    assert getattr(trainer, "reward_loop_manager", "unset") == "unset"
    assert capsys.readouterr().out == ""
    trainer.reward_loop_manager = "manager"
    assert trainer.reward_loop_manager == "manager" and Trainer().__dict__ == {}
    assert capsys.readouterr().out.startswith(f"{timeline.MARK} reward_loop_ready ")
    with pytest.raises(ValueError, match="unknown start-up phase"):
        timeline.MarkedAttribute("warmup")


def test_verls_setup_reaches_the_marked_steps_in_the_timelines_order():
    """SDPOTrainer marks reward_loop_ready, rollout_servers_ready and checkpoint_engine_ready where verl's `_setup`
    assigns `reward_loop_manager`, `llm_server_manager` and calls `_load_checkpoint`: that order is verl's, read from
    its source (a new verl that moves them fails here)."""
    import inspect

    from verl.trainer.ppo.v1.trainer_base import PPOTrainer

    from sdpo_ext.trainer import SDPOTrainer

    source = inspect.getsource(PPOTrainer._setup)
    steps = ["self.actor_rollout_wg.init_model()", "self.reward_loop_manager = ", "self.llm_server_manager",
             "self.checkpoint_manager.sleep_replicas()", "self._load_checkpoint()"]
    assert [source.index(s) for s in steps] == sorted(source.index(s) for s in steps)
    for name, phase in (("reward_loop_manager", "reward_loop_ready"), ("llm_server_manager", "rollout_servers_ready")):
        assert vars(SDPOTrainer)[name].phase == phase
    order = [timeline.PHASES.index(p) for p in ("actor_model_ready", "reward_loop_ready", "rollout_servers_ready",
                                                 "checkpoint_engine_ready", "init_done")]
    assert order == sorted(order)


def test_the_plugin_marks_runner_up_in_a_ray_process_only(monkeypatch, capsys):
    import sys
    import types

    from sdpo_ext import plugin

    monkeypatch.setattr(timeline, "_seen", set())
    monkeypatch.setitem(sys.modules, "ray", types.SimpleNamespace(is_initialized=lambda: False))
    plugin._mark_ray_process()
    assert capsys.readouterr().out == ""
    monkeypatch.setitem(sys.modules, "ray", types.SimpleNamespace(is_initialized=lambda: True))
    plugin._mark_ray_process()
    assert capsys.readouterr().out.startswith(f"{timeline.MARK} runner_up ")
