"""bench/step_time/step_time_packed.py: the packed job's summary in issue 30's schema (config, ratios, phases, peak
memory) per sibling-solution case (issue 49), and a clear error for a job that did not run packed or showed a shorter
sibling solution than it states."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.bench.test_step_time_fair import ROOT, job_folder, write_phases


def packed_job(tmp_path: Path, attention: str | None = "flash_attention_4") -> Path:
    folder = job_folder(tmp_path, "packed")
    for algo, update in (("grpo_fused", 20.0), ("grpo", 22.0), ("sdpo", 21.0), ("srpo", 25.0)):
        write_phases(folder, algo, [update + 3.0, update, update])
        path = folder / f"phases_{algo}.json"
        run = json.loads(path.read_text())
        run.update(attention=attention, packed_tokens=26624 if attention else None,
                   overrides=[f"+recipe={algo}", "actor_rollout_ref.model.path=/tmp/qwen3_1p7b_random"])
        path.write_text(json.dumps(run))
    return folder


def summarise(folder: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "bench/step_time/step_time_packed.py", "--phases", str(folder),
                           "--call", "job", "--out", str(out), *extra], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def state_solution(folder: Path, case: str, stated: int, measured: int | None) -> Path:
    """The job's rollouts state a sibling solution of `stated` tokens; each run measured `measured`."""
    rollouts = json.loads((folder / "rollouts.json").read_text())
    rollouts["lengths"]["2048"]["sibling_solution"] = {"case": case, "tokens": stated}
    (folder / "rollouts.json").write_text(json.dumps(rollouts))
    for path in folder.glob("phases_*.json"):
        run = json.loads(path.read_text())
        run["lengths"]["2048"]["sibling_solution_tokens"] = measured
        path.write_text(json.dumps(run))
    return folder


def case(out: Path, name: str = "shortened") -> dict:
    return json.loads(out.with_suffix(".json").read_text())["cases"][name]


def test_the_summary_has_the_packed_config_each_ratio_to_grpos_fastest_and_the_memory(tmp_path):
    out = tmp_path / "step_time_packed"
    proc = summarise(packed_job(tmp_path), out)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(out.with_suffix(".json").read_text())
    assert list(summary["cases"]) == ["shortened"]  # rollouts stating no sibling solution: before issue 49
    assert summary["jobs"]["step_phases_packed"]["sibling_solution"]["case"] == "shortened"
    assert "shortened by tokenizer mismatch" in summary["jobs"]["step_phases_packed"]["sibling_solution"]["note"]
    assert summary["config"] == {"use_remove_padding": True, "use_dynamic_bsz": True,
                                 "attn_implementation": "flash_attention_4", "model": "/tmp/qwen3_1p7b_random",
                                 "ppo_max_token_len_per_gpu": 26624, "log_prob_max_token_len_per_gpu": 26624}
    row = summary["cases"]["shortened"]["lengths"]["2048"]
    grpo_step = 14.4 + 0.5 + 5.0 + 0.1 + 20.0  # generation + phases, steps 2..3 of grpo_fused (the fastest GRPO)
    assert row["grpo_config"] == "grpo_fused"
    assert row["ratio_sdpo_over_grpo"] == round((grpo_step + 1.0) / grpo_step, 3)
    assert row["ratio_srpo_over_grpo"] == round((grpo_step + 5.0) / grpo_step, 3)
    assert row["peak_gb"]["sdpo"] == {"allocated": 42.0, "reserved": 50.0}
    assert row["phases"]["sdpo"]["sdpo_teacher_forward"] == 4.0 and row["steps_averaged"]["srpo"] == 2
    assert summary["cases"]["shortened"]["goal_met"] == {"sdpo": True, "srpo": False}  # 1.025 <= 1.08; 1.125 > 1.05
    assert out.with_name("step_time_packed_shortened.png").stat().st_size > 0


def test_a_job_that_did_not_pack_is_refused_with_one_line(tmp_path):
    proc = summarise(packed_job(tmp_path, attention=None), tmp_path / "out")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("error: ") and "did not run packed" in proc.stderr


def test_calls_of_one_length_each_merge_with_every_ratio_to_its_own_calls_grpo(tmp_path):
    """A device call holds one length or some methods: call_a has GRPO and SDPO, call_b GRPO (slower machine) and
    SRPO; each ratio pairs a method with the GRPO of its own call."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a = packed_job(tmp_path / "a").rename(tmp_path / "call_a")
    b = packed_job(tmp_path / "b").rename(tmp_path / "call_b")
    (a / "phases_srpo.json").unlink()
    (a / "phases_grpo.json").unlink()
    (b / "phases_sdpo.json").unlink()
    (b / "phases_grpo.json").unlink()
    run = json.loads((b / "phases_grpo_fused.json").read_text())
    for it in run["lengths"]["2048"]["iterations"]:
        it["update_actor"] += 10.0
    (b / "phases_grpo_fused.json").write_text(json.dumps(run))
    out = tmp_path / "merged"
    proc = subprocess.run([sys.executable, "bench/step_time/step_time_packed.py", "--phases", str(a), "--call", "a",
                           "--phases", str(b), "--call", "b", "--out", str(out)], cwd=ROOT, capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(out.with_suffix(".json").read_text())
    row = summary["cases"]["shortened"]["lengths"]["2048"]
    grpo_a = 14.4 + 0.5 + 5.0 + 0.1 + 20.0
    assert row["ratio_sdpo_over_grpo"] == round((grpo_a + 1.0) / grpo_a, 3)
    assert row["ratio_srpo_over_grpo"] == round((grpo_a + 5.0) / (grpo_a + 10.0), 3)  # below 1: a slower GRPO
    assert row["job"] == {"grpo_fused": "call_b", "sdpo": "call_a", "srpo": "call_b"}
    assert {name: job["call"] for name, job in summary["jobs"].items()} == {"call_a": "a", "call_b": "b"}
    assert summary["cases"]["shortened"]["goal_met"] == {"sdpo": True, "srpo": True}


def test_a_family_not_measured_at_every_length_has_no_verdict(tmp_path):
    folder = packed_job(tmp_path)
    (folder / "phases_sdpo.json").unlink()
    out = tmp_path / "out"
    assert summarise(folder, out).returncode == 0
    assert case(out)["goal_met"] == {"sdpo": None, "srpo": False}


def test_two_calls_with_different_packed_settings_are_refused(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a = packed_job(tmp_path / "a").rename(tmp_path / "call_a")
    b = packed_job(tmp_path / "b", attention="fa4_varlen").rename(tmp_path / "call_b")
    out = tmp_path / "merged"
    proc = subprocess.run([sys.executable, "bench/step_time/step_time_packed.py", "--phases", str(a), "--call", "a",
                           "--phases", str(b), "--call", "b", "--out", str(out)], cwd=ROOT, capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 2 and proc.stderr.startswith("error: the jobs differ in their packed configuration")


def test_each_case_is_summarised_apart_with_its_stated_and_measured_solution(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    whole = state_solution(packed_job(tmp_path / "a").rename(tmp_path / "whole_r2048"), "whole", 2048, 2051)
    prover = state_solution(packed_job(tmp_path / "b").rename(tmp_path / "prover_r2048"), "prover", 492, 492)
    out = tmp_path / "merged"
    proc = subprocess.run([sys.executable, "bench/step_time/step_time_packed.py", "--phases", str(whole), "--call",
                           "w", "--phases", str(prover), "--call", "p", "--out", str(out)], cwd=ROOT,
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(out.with_suffix(".json").read_text())
    assert sorted(summary["cases"]) == ["prover", "whole"]
    assert case(out, "whole")["lengths"]["2048"]["job"]["sdpo"] == "whole_r2048"
    assert case(out, "prover")["lengths"]["2048"]["job"]["sdpo"] == "prover_r2048"
    assert summary["jobs"]["prover_r2048"]["sibling_solution"] == {
        "case": "prover", "stated_tokens": {"2048": 492},
        "measured_tokens": {"2048": {"grpo": 492, "grpo_fused": 492, "sdpo": 492, "srpo": 492}}}
    assert out.with_name("merged_whole.png").exists() and out.with_name("merged_prover.png").exists()


def test_a_job_whose_teacher_prompts_showed_less_than_it_states_is_refused(tmp_path):
    folder = state_solution(packed_job(tmp_path), "whole", 2048, 697)
    proc = summarise(folder, tmp_path / "out")
    assert proc.returncode == 2 and proc.stderr.startswith("error: ") and "under the 2048 the job states" in proc.stderr


def test_the_previous_summary_keeps_the_cases_not_measured_again(tmp_path):
    """The committed figures of 2026-12-05 (before issue 49) stay, as the shortened case, beside a new case."""
    old = tmp_path / "old"
    assert summarise(packed_job(tmp_path), old).returncode == 0
    committed = json.loads(old.with_suffix(".json").read_text())
    (tmp_path / "w").mkdir()
    folder = state_solution(packed_job(tmp_path / "w").rename(tmp_path / "whole_r2048"), "whole", 2048, 2048)
    out = tmp_path / "new"
    assert summarise(folder, out, "--previous", str(old.with_suffix(".json"))).returncode == 0
    summary = json.loads(out.with_suffix(".json").read_text())
    assert summary["cases"]["shortened"] == committed["cases"]["shortened"] and "whole" in summary["cases"]
    assert sorted(summary["jobs"]) == ["step_phases_packed", "whole_r2048"]
    assert summary["jobs"]["step_phases_packed"]["sibling_solution"]["case"] == "shortened"
    # the committed file's own form (before issue 49: no cases) reads the same way
    before = {"call": {"old_job": "the call"}, "config": committed["config"],
              "lengths": committed["cases"]["shortened"]["lengths"], "goal_met": {"sdpo": True, "srpo": False}}
    (tmp_path / "before.json").write_text(json.dumps(before))
    assert summarise(folder, out, "--previous", str(tmp_path / "before.json")).returncode == 0
    summary = json.loads(out.with_suffix(".json").read_text())
    assert summary["jobs"]["old_job"]["sibling_solution"]["case"] == "shortened"
    assert summary["cases"]["shortened"]["lengths"] == before["lengths"]


def test_the_committed_summary_marks_the_2026_12_05_figures_as_shortened():
    summary = json.loads((ROOT / "bench/step_time/results/step_time_packed.json").read_text())
    assert all(job["sibling_solution"]["case"] == "shortened" for name, job in summary["jobs"].items()
               if "2026-12-05" in name)
    assert summary["cases"]["shortened"]["lengths"]["2048"]["ratio_sdpo_over_grpo"] == 1.087
