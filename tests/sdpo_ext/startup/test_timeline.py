"""sdpo_ext.startup.timeline and bench/ttrl/startup_table.py: a run's start-up phases from its stdout."""
from __future__ import annotations

import json

import pytest

from sdpo_ext.startup import timeline
from tests.bench.bench_scripts import on_path

on_path("ttrl")
import startup_table  # noqa: E402


def test_a_phase_is_marked_once_per_process_and_unknown_phases_are_refused(monkeypatch, capsys):
    monkeypatch.setattr(timeline, "_seen", set())
    timeline.mark("trainer_init")
    timeline.mark("trainer_init")
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 and lines[0].startswith("sdpo_lean/startup trainer_init ")
    with pytest.raises(ValueError, match="unknown start-up phase"):
        timeline.mark("warmup")


def run(folder, launched_at: float, config: str, marks: dict[str, float], extra: str = ""):
    folder.mkdir(parents=True)
    (folder / "launch.json").write_text(json.dumps({"launched_at": launched_at, "config": config}))
    lines = [f"(TaskRunner pid=7) {timeline.MARK} {phase} {t:.3f} pid=7" for phase, t in marks.items()]
    (folder / "stdout.log").write_text("noise\n" + "\n".join(lines) + "\n" + extra)


def test_the_table_gives_seconds_since_launch_per_phase_and_config(tmp_path):
    runs = tmp_path / "runs"
    run(runs / "demo/grpo/seed1", 1000.0, "before", {"trainer_init": 1040.0, "init_done": 1200.5,
                                                    "first_step_done": 1300.0},
        "(vLLMHttpServer pid=9) INFO 12-06 init engine (profile, create kv cache, warmup model) took 12.50 seconds\n")
    run(runs / "demo/grpo/seed3", 1000.0, "before", {"trainer_init": 1060.0, "init_done": 1180.0})
    run(runs / "demo/grpo/seed2", 2000.0, "cut", {"trainer_init": 2020.0, "trainer_init_again": 1.0})
    assert startup_table.main(["--run-dir", str(runs), "--out", str(tmp_path / "startup")]) == 0
    data = json.loads((tmp_path / "startup.json").read_text())
    assert data["runs"]["demo/grpo/seed1"]["phases"] == {"trainer_init": 40.0, "init_done": 200.5,
                                                         "first_step_done": 300.0}
    assert data["runs"]["demo/grpo/seed1"]["vllm"] == {"vllm_engine_init_s": 12.5}
    before = data["configs"]["before"]["phases"]
    assert before["trainer_init"] == {"median": 50.0, "min": 40.0, "max": 60.0, "reached": 2}
    assert before["first_step_done"]["reached"] == 1
    assert data["configs"]["cut"]["phases"]["trainer_init"]["median"] == 20
    table = (tmp_path / "startup.md").read_text().splitlines()
    assert table[0] == "| phase (s since launch) | before (2 runs) | cut (1 runs) |"
    assert "| trainer_init | 50.0 [40.0-60.0] (2) | 20.0 [20.0-20.0] (1) |" in table


def test_no_launched_run_is_a_clear_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        startup_table.main(["--run-dir", str(tmp_path), "--out", str(tmp_path / "s")])
    assert exit_.value.code == 2 and "no launch.json" in capsys.readouterr().err


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
