"""The discovery job (`python -m sdpo_eval.discovery run`) on CPU: real processes of a stand-in python that writes
what verl and the sampler write (attempt logs, switch lines, start-up marks, the sampler's status), so the job's
problem choice, its runs side by side, resume, failure and pack are exercised without a GPU."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import sdpo_eval.discovery.run_checks as run_checks
from sdpo_eval.discovery import cli, launcher, runs
from sdpo_eval.discovery.launcher import Job

# argv: -m <module> args...; a verl run writes its attempt log per problem in queue order (the first valid attempt
# at SOLVE[problem] if within the budget), prints a switch per problem under the single protocol; the sampler writes
# each --runs pair's log and status; FAIL=<method> makes that verl run exit 1 once
STAND_IN = r'''
import json, os, sys, time
argv = sys.argv[1:]
calls = os.environ["CALLS"]
open(calls, "a").write(" ".join(argv[:2]) + "\n")
SOLVE = {"p1": 3, "p2": 40, "p3": 1, "p4": 70, "p5": 2}
def write(path, method, seed, problems, budget, keep_going):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "a") as log:
        for p in problems:
            first = SOLVE.get(p, 1000) + seed
            for a in range(1, budget + 1):
                valid = a == first
                log.write(json.dumps({"problem": p, "method": method, "run_id": f"{method}-{seed}", "seed": seed,
                                      "step": a, "attempt": a, "score": float(valid), "verdict": "valid" if valid
                                      else "wrong", "infra": 0, "response_tokens": 3}) + "\n")
                if valid and not keep_going:
                    break
if argv[1] == "verl.trainer.main_ppo":
    opts = dict(a.lstrip("+").split("=", 1) for a in argv[2:] if "=" in a)
    method, seed = opts["sdpo.algorithm_name"], int(opts["data.seed"])
    print(f"sdpo_lean/startup trainer_init {time.time():.3f}")
    if os.environ.get("FAIL") == method and not os.path.exists(calls + ".failed"):
        open(calls + ".failed", "w").close()
        sys.exit(1)
    problems = opts["sdpo.ttrl.theorems"].strip("[]").split(",")
    write(opts["sdpo.attempt_log"], method, seed, problems, int(opts["sdpo.ttrl.max_attempts"]), False)
    if opts["sdpo.ttrl.protocol"] == "single":
        for i, p in enumerate(problems):
            nxt = problems[i + 1] if i + 1 < len(problems) else None
            print("sdpo_lean/ttrl_switch " + json.dumps({"from": p, "to": nxt, "step": i, "reset_s": 1.0 + i}))
else:
    args = argv[3:argv.index("--")]
    get = lambda flag: args[args.index(flag) + 1]
    for pair in get("--runs").split(","):
        method, seed = pair.split(":")
        folder = os.path.join(get("--out-dir"), method, "seed" + seed)
        write(os.path.join(folder, "attempts.jsonl"), method, int(seed), get("--problems").split(","),
              int(get("--budget")), "--keep-going" in args)
        open(os.path.join(folder, "status.json"), "w").write(json.dumps({"returncode": 0}))
'''


@pytest.fixture
def stand_in(tmp_path, monkeypatch):
    """A python that plays verl and the sampler; the start-up checks pass; no private /tmp; 0.05 s polls."""
    script = tmp_path / "python"
    script.write_text(f"#!{sys.executable}\n" + STAND_IN)
    script.chmod(0o755)
    monkeypatch.setenv("CALLS", str(tmp_path / "calls.txt"))
    monkeypatch.setattr(run_checks, "preflight", lambda command: None)
    monkeypatch.setattr(runs, "can_isolate", lambda: False)
    monkeypatch.setattr(launcher, "POLL_S", 0.05)
    return script


def calls(tmp_path: Path) -> list[str]:
    path = tmp_path / "calls.txt"
    return path.read_text().splitlines() if path.exists() else []


def job(tmp_path: Path, stand_in: Path, **fields) -> Job:
    return Job(**{"task": "toy_lean", "methods": ("best_of_k", "reprompt", "grpo", "srpo_shared"), "seeds": (1, 2),
                  "budget": 32, "out_dir": tmp_path / "job", "problems": ("p1", "p2", "p3"), "python": str(stand_in),
                  "sampler_engine": "transformers", **fields})


def test_the_job_runs_every_method_and_seed_side_by_side_and_packs_the_report(tmp_path, stand_in):
    assert launcher.execute(job(tmp_path, stand_in), gpu_gb=lambda: 40.0, host_gb=lambda: 128.0) == 0
    out = tmp_path / "job"
    started = calls(tmp_path)
    assert started.count("-m verl.trainer.main_ppo") == 4 and started.count("-m sdpo_eval.discovery") == 1
    assert "2 verl runs at a time" in (out / "job.txt").read_text()   # (40 GB - 16 for the sampler) // 11
    report = json.loads((out / "report" / "discovery.json").read_text())
    rows = report["methods"]
    assert {m: rows[m]["protocol"] for m in rows} == {"best_of_k": "sampler", "reprompt": "sampler", "grpo": "single",
                                                      "srpo_shared": "shared"}
    # 3 problems a run, one switch each, reset_s 1, 2, 3 in both seeds
    assert rows["grpo"]["reset_s_per_problem"] == {"median": 2.0, "max": 3.0, "switches": 6}
    assert rows["srpo_shared"]["reset_s_per_problem"] is None
    assert rows["grpo"]["first_success"] == {"p1": [4, 5], "p2": [None, None], "p3": [2, 3]}
    assert report["problems"] == ["p1", "p2", "p3"] and report["recheck"]["status"] == "off"
    assert report["startup"]["single"]["runs"] == ["grpo/seed1", "grpo/seed2"]
    assert (out / "report" / "startup.md").exists() and (out / "report" / "discovery.png").exists()
    assert "sdpo_lean/ttrl_switch" in (out / "runs/grpo/seed1/switch_lines.log").read_text()
    # started again: every run finished, nothing starts
    assert launcher.execute(job(tmp_path, stand_in), gpu_gb=lambda: 40.0, host_gb=lambda: 128.0) == 0
    assert len(calls(tmp_path)) == 5


def test_a_failed_run_is_reported_and_only_it_starts_again(tmp_path, stand_in, monkeypatch, capsys):
    monkeypatch.setenv("FAIL", "grpo")
    one = job(tmp_path, stand_in, methods=("grpo",), seeds=(1,))
    assert launcher.execute(one, gpu_gb=lambda: None) == 1
    assert "warning: grpo_seed1 exited 1" in capsys.readouterr().err
    assert launcher.execute(one, gpu_gb=lambda: None) == 0
    assert calls(tmp_path) == ["-m verl.trainer.main_ppo"] * 2
    assert "grpo_seed1 started (fresh)" in (tmp_path / "job" / "job.txt").read_text()


def test_problems_are_chosen_by_base_rate_beside_the_given_ones_and_kept_for_a_later_start(tmp_path, stand_in):
    """toy_lean's candidates are its theorems; the stand-in solves none of them in the base samples but p1-p5 would
    be; --choose 2 adds the two rarest (all at 0: by name) that were not given."""
    from sdpo_data.toy_lean import THEOREMS

    chosen = job(tmp_path, stand_in, methods=("best_of_k",), seeds=(1,), problems=(THEOREMS[0][0],), choose=2,
                 base_samples=8)
    assert launcher.execute(chosen, gpu_gb=lambda: None) == 0
    names = (tmp_path / "job" / "problems.txt").read_text().strip().split(",")
    pool = sorted(name for name, _, _ in THEOREMS[1:])
    assert names == [THEOREMS[0][0], *pool[:2]]
    rates = json.loads((tmp_path / "job" / "base" / "base_rate.json").read_text())
    assert rates[pool[0]] == {"valid": 0, "judged": 8, "rate": 0.0}
    assert launcher.choose_problems(chosen) == names   # read back, not measured again
    assert calls(tmp_path).count("-m sdpo_eval.discovery") == 2   # the base rates, then the run


def test_a_relaunch_resumes_a_run_with_a_checkpoint_and_sets_a_first_try_aside_without_one(tmp_path):
    """verl resumes a checkpointed run (its attempt log stays, under the checkpoint's run id); a run cut before its
    first checkpoint starts over, its first try's log moved aside, where the report does not read it."""
    with_ckpt, without = tmp_path / "a", tmp_path / "b"
    for run in (with_ckpt, without):
        run.mkdir()
        (run / "attempts.jsonl").write_text('{"problem": "p"}\n')
    (with_ckpt / "checkpoints").mkdir()
    (with_ckpt / "checkpoints" / "latest_checkpointed_iteration.txt").write_text("4")
    assert runs.set_aside_unresumable_log(with_ckpt) and not runs.set_aside_unresumable_log(without)
    assert (with_ckpt / "attempts.jsonl").exists() and not (without / "attempts.jsonl").exists()
    assert (without / "attempts.jsonl.1").read_text() == '{"problem": "p"}\n'


def test_the_dry_run_prints_the_sampler_and_verl_commands_seeds_first_and_writes_nothing(tmp_path, capsys):
    out = tmp_path / "job"
    assert cli.main(["run", "--task", "demo", "--methods", "best_of_k,grpo,srpo_shared", "--seeds", "1,2",
                     "--budget", "64", "--problems", "a,b", "--out-dir", str(out), "--dry-run", "--",
                     "actor_rollout_ref.rollout.n=16"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 5 and " sample " in lines[0] and "best_of_k:1,best_of_k:2" in lines[0]
    assert ["grpo_demo_s1" in lines[1], "srpo_shared_demo_s1" in lines[2], "grpo_demo_s2" in lines[3]] == [True] * 3
    assert all(line.endswith("actor_rollout_ref.rollout.n=16") for line in lines)
    assert "sdpo.ttrl.protocol=shared" in lines[2] and "sdpo.ttrl.protocol=single" in lines[1]
    assert not out.exists()


def test_the_start_up_checks_stop_the_job_before_its_first_run(tmp_path, monkeypatch, capsys):
    """The toy data is missing (on this CPU box the GPUs too): one message with every problem, and nothing started."""
    monkeypatch.setenv("SDPO_TOY_DATA_DIR", str(tmp_path / "toy"))
    monkeypatch.setenv("SDPO_OUTPUT_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(runs, "start", lambda *a, **k: pytest.fail("a run was started"))
    out = tmp_path / "sweep"
    assert cli.main(["run", "--task", "toy_lean", "--problems", "toy_add_7_5", "--budget", "4", "--out-dir", str(out),
                     "--methods", "grpo,sdpo", "--seeds", "1,2"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("sdpo-lean found ") and "- MissingData: data.train_files: " in err
    assert "python -m sdpo_data.toy_lean --out-dir" in err and "Traceback" not in err
    assert [line for line in err.splitlines() if "error:" in line] == [err.strip().splitlines()[-1]]
    assert err.strip().splitlines()[-1].startswith("error: no run started (")
    assert not (out / "runs").exists()


def test_pack_reports_a_job_folder_while_it_runs_and_says_when_nothing_is_there_yet(tmp_path, stand_in, capsys):
    out = tmp_path / "job"
    assert cli.main(["pack", "--out-dir", str(out), "--task", "toy_lean", "--budget", "32"]) == 0
    assert "no attempt log yet" in capsys.readouterr().out
    small = job(tmp_path, stand_in, methods=("best_of_k", "grpo"), seeds=(1,))
    assert launcher.execute(small, gpu_gb=lambda: None) == 0
    (out / "report" / "discovery.json").unlink()
    assert cli.main(["pack", "--out-dir", str(out), "--task", "toy_lean", "--budget", "32", "--call", "x"]) == 0
    assert json.loads((out / "report" / "discovery.json").read_text())["call"] == "x"


def test_verl_runs_at_once_are_capped_by_gpu_and_host_memory(tmp_path):
    from sdpo_eval.discovery.launcher import Job, verl_slots

    job = Job(task="demo", methods=("best_of_k", "sdpo"), seeds=(1,), budget=8, out_dir=tmp_path, problems=("a",),
              per_run_gb=5.0, sampler_gb=8.0, host_gb_per_run=11.0)
    assert verl_slots(job, 139.0) == 26  # the GPU alone: (139 - 8) // 5
    # the H200 host of 2026-12-07 (125.9 GB): 12 runs and a sampler there had 3 runs killed for host memory
    assert verl_slots(job, 139.0, host_gb=125.9) == 9
    assert verl_slots(job, 139.0, host_gb=8.0) == 1 and verl_slots(job, None, None) == 1
