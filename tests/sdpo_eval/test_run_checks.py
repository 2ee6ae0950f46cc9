"""The discovery launchers stop before their first run when the start-up checks refuse it (the real checks, through
`python -m sdpo_ext.startup.check`), and a failed run is reported with its first error line (issue 50, item 3)."""
from __future__ import annotations

import subprocess

import pytest

import sdpo_eval.discovery as discovery
import sdpo_eval.discovery_set as discovery_set
import sdpo_eval.launch as launch
import sdpo_eval.run_checks as run_checks
from sdpo_eval.discovery_set import run_set


def test_run_set_stops_before_its_first_run_with_the_start_up_checks_message(tmp_path, monkeypatch, capsys):
    """The toy data is missing (on this CPU box the GPUs too): one message with every problem, and nothing started."""
    monkeypatch.setenv("SDPO_TOY_DATA_DIR", str(tmp_path / "toy"))
    monkeypatch.setenv("SDPO_OUTPUT_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(discovery_set, "launch", lambda *a, **k: pytest.fail("a run was started"))
    out = tmp_path / "sweep"
    assert discovery.main(["run-set", "--model", "toy_lean", "--problems", "toy_add_7_5", "--budget", "4",
                           "--out-dir", str(out), "--methods", "grpo,sdpo", "--seeds", "1,2"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: sdpo-lean found ") and "- MissingData: data.train_files: " in err
    assert "python -m sdpo_data.toy_lean --out-dir" in err and "(no run started;" in err and "Traceback" not in err
    assert not (out / "grpo").exists()


def test_a_failed_run_is_reported_with_its_first_error_line(tmp_path, monkeypatch, capsys):
    def crash(command, stdout, stderr, env=None):
        stdout.write("step 1\nTraceback (most recent call last):\n  File \"x.py\", line 1\n"
                     "ValueError: sdpo.alpha must be in [0, 1], got 2.0\nmore noise\n")
        return subprocess.CompletedProcess(command, 1)

    monkeypatch.setattr(run_checks, "preflight", lambda command: None)
    monkeypatch.setattr(launch.subprocess, "run", crash)
    (result,) = run_set("m", ["a"], 8, tmp_path, ["sdpo"], [1])
    assert result["returncode"] == 1
    assert capsys.readouterr().err == ("warning: sdpo seed 1 exited 1: ValueError: sdpo.alpha must be in [0, 1], got "
                                       f"2.0; see {tmp_path / 'sdpo' / 'seed1' / 'stdout.log'}\n")


def test_the_first_error_line_of_a_refused_start_names_its_first_problem(tmp_path):
    log = tmp_path / "stdout.log"
    log.write_text("[hydra] composing\nsdpo-lean found 2 problem(s) before starting:\n"
                   "- NotEnoughGPUs: trainer.n_gpus_per_node=1 but this machine shows 0 GPU(s) (run on a GPU machine)\n"
                   "- MissingData: ...\n")
    assert run_checks.first_error_line(log) == ("sdpo-lean found 2 problem(s) before starting: - NotEnoughGPUs: "
                                                "trainer.n_gpus_per_node=1 but this machine shows 0 GPU(s) (run on a "
                                                "GPU machine)")
    log.write_text("just output\nlast words\n")
    assert run_checks.first_error_line(log) == "last words"
    assert run_checks.first_error_line(tmp_path / "absent.log") is None
