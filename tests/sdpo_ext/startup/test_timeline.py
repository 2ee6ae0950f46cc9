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
