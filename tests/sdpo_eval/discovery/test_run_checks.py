"""The discovery launcher's start-up checks (the real checks, through `python -m sdpo_ext.startup.check`; the job
that stops on them: test_launcher.py) and the first error line of a failed run (issue 50, item 3)."""
from __future__ import annotations

import sdpo_eval.discovery.run_checks as run_checks


def test_a_failed_run_is_named_with_its_first_error_line(tmp_path):
    (tmp_path / "stdout.log").write_text("step 1\nTraceback (most recent call last):\n  File \"x.py\", line 1\n"
                                         "ValueError: sdpo.alpha must be in [0, 1], got 2.0\nmore noise\n")
    assert run_checks.failure_line("sdpo_seed1", 1, tmp_path) == (
        "warning: sdpo_seed1 exited 1: ValueError: sdpo.alpha must be in [0, 1], got 2.0; "
        f"see {tmp_path / 'stdout.log'}")


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
