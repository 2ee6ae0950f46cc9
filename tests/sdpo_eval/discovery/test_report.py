"""Discovery driver command construction (main_ppo is never run) and the discovery@k report."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import sdpo_eval.discovery as discovery
import sdpo_eval.discovery_curves as discovery_curves
import sdpo_eval.launch as launch


def test_model_part_and_trainer_command(tmp_path):
    assert discovery.model_part("sdpo_kimina_1_7b") == "kimina_1_7b" == discovery.model_part("grpo_kimina_1_7b")
    with pytest.raises(ValueError, match="must start with"):
        discovery.model_part("kimina_1_7b")
    run_dir = tmp_path / "grpo" / "mathd_algebra_10"
    command = discovery.trainer_command("grpo", "sdpo_kimina_1_7b", "mathd_algebra_10", 256, run_dir, 7,
                                        overrides=["trainer.n_gpus_per_node=8"], python="python")
    assert command == [
        "python", "-m", "verl.trainer.main_ppo", "+recipe=grpo_kimina_1_7b",
        "sdpo.ttrl.theorem=mathd_algebra_10", "sdpo.ttrl.stop_on_success=true", "sdpo.ttrl.max_attempts=256",
        f"sdpo.attempt_log={run_dir / 'attempts.jsonl'}",
        "trainer.experiment_name=grpo_kimina_1_7b_mathd_algebra_10_s7",
        f"trainer.default_local_dir={run_dir / 'checkpoints'}", "data.seed=7", "trainer.save_freq=-1",
        "trainer.n_gpus_per_node=8",
    ]
    kept = discovery.trainer_command("sdpo", "sdpo_x", "p", 8, run_dir, 0, save_checkpoints=True)
    assert "trainer.save_freq=-1" not in kept and "+recipe=sdpo_x" in kept
    with pytest.raises(ValueError):
        discovery.trainer_command("best_of_k", "sdpo_x", "p", 8, run_dir, 0)


def test_run_launches_fresh_process_per_problem_and_skips_finished(tmp_path, monkeypatch):
    launched = []

    def fake_run(command, stdout, stderr, env=None):
        launched.append(command)
        return subprocess.CompletedProcess(command, 1 if "sdpo.ttrl.theorem=bad" in command else 0)

    monkeypatch.setattr(launch.subprocess, "run", fake_run)
    out = tmp_path / "disc"
    results = discovery.run("sdpo_m", ["a", "bad"], 16, out, ["sdpo", "grpo"], 0, [])
    assert [(r["method"], r["problem"], r["returncode"]) for r in results] == [
        ("sdpo", "a", 0), ("sdpo", "bad", 1), ("grpo", "a", 0), ("grpo", "bad", 1)]
    assert [c[3] for c in launched] == ["+recipe=sdpo_m", "+recipe=sdpo_m", "+recipe=grpo_m", "+recipe=grpo_m"]
    status = json.loads((out / "sdpo" / "a" / "status.json").read_text())
    assert status["returncode"] == 0 and status["command"] == launched[0]
    launched.clear()
    discovery.run("sdpo_m", ["a", "bad"], 16, out, ["sdpo", "grpo"], 0, [])
    assert [c[4] for c in launched] == ["sdpo.ttrl.theorem=bad", "sdpo.ttrl.theorem=bad"]   # finished runs skipped
    launched.clear()
    discovery.run("sdpo_m", ["a"], 16, out, ["sdpo"], 0, [], force=True)
    assert len(launched) == 1
    with pytest.raises(ValueError, match="unknown method"):
        discovery.run("sdpo_m", ["a"], 16, out, ["ppo"], 0, [])


def test_gpu_groups_split_evenly_and_refuse_shared_gpus():
    assert discovery.gpu_groups(["0", "1", "2", "3"], 2) == [["0", "1"], ["2", "3"]]
    assert discovery.gpu_groups(["0", "1", "2", "3"], 1) == [["0", "1", "2", "3"]]
    assert discovery.gpu_groups([], 1) is None
    with pytest.raises(ValueError, match="needs --gpus"):
        discovery.gpu_groups([], 2)
    with pytest.raises(ValueError, match="equal groups"):
        discovery.gpu_groups(["0", "1", "2"], 2)
    with pytest.raises(ValueError, match="repeat"):
        discovery.gpu_groups(["0", "0"], 2)
    with pytest.raises(ValueError, match=">= 1"):
        discovery.gpu_groups(["0"], 0)


def test_parallel_runs_each_get_their_own_gpus(tmp_path, monkeypatch):
    """Real subprocesses: 4 runs, 2 at a time on 4 GPU ids; overlapping runs never share a GPU."""
    import sys

    script = ("import json, os, sys, time; start = time.time(); time.sleep(0.8); "
              "json.dump({'gpus': os.environ['CUDA_VISIBLE_DEVICES'], 'ray': os.environ.get('RAY_ADDRESS'), "
              "'argv': sys.argv[1:], 'start': start, 'end': time.time()}, open(sys.argv[1], 'w'))")
    monkeypatch.setenv("RAY_ADDRESS", "10.0.0.1:6379")  # a shared cluster would ignore the pinning

    def fake_trainer_command(method, recipe, problem, budget, run_dir, seed, overrides, save_checkpoints):
        return [sys.executable, "-c", script, str(run_dir / "probe.json")]

    monkeypatch.setattr(discovery, "trainer_command", fake_trainer_command)
    out = tmp_path / "disc"
    results = discovery.run("sdpo_m", ["a", "b", "c", "d"], 16, out, ["sdpo"], 0, [], parallel=2,
                            gpus=["0", "1", "2", "3"])
    assert [(r["problem"], r["returncode"]) for r in results] == [("a", 0), ("b", 0), ("c", 0), ("d", 0)]
    probes = [json.loads((out / "sdpo" / p / "probe.json").read_text()) for p in "abcd"]
    assert all(p["gpus"] in ("0,1", "2,3") and p["argv"][-1] == "trainer.n_gpus_per_node=2" for p in probes)
    assert all(p["ray"] is None for p in probes)
    overlapping = [(x, y) for i, x in enumerate(probes) for y in probes[i + 1:]
                   if x["start"] < y["end"] and y["start"] < x["end"]]
    assert overlapping, "two runs should have overlapped in time"
    assert all(x["gpus"] != y["gpus"] for x, y in overlapping)
    for t in sorted(p["start"] + 0.1 for p in probes):  # never more than 2 at once
        assert sum(p["start"] <= t < p["end"] for p in probes) <= 2
    status = json.loads((out / "sdpo" / "a" / "status.json").read_text())
    assert status["gpus"] in (["0", "1"], ["2", "3"]) and status["command"][-1] == "trainer.n_gpus_per_node=2"


def test_pinned_runs_refuse_a_gpu_count_override_and_dry_run_shows_pinned_commands(tmp_path, capsys):
    with pytest.raises(ValueError, match="n_gpus_per_node"):
        discovery.run("sdpo_m", ["a"], 16, tmp_path, ["sdpo"], 0, ["trainer.n_gpus_per_node=8"], gpus=["0", "1"])
    results = discovery.run("sdpo_m", ["a", "b"], 16, tmp_path, ["sdpo"], 0, [], dry_run=True, parallel=2,
                            gpus=["0", "1"])
    assert [r["command"][-1] for r in results] == ["trainer.n_gpus_per_node=1"] * 2
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("CUDA_VISIBLE_DEVICES=0 ") and printed[1].startswith("CUDA_VISIBLE_DEVICES=1 ")


def test_ctrl_c_stops_the_sweep(tmp_path, monkeypatch):
    """SIGINT reaches the main thread (and, in real use, the running child); no queued run starts after it."""
    import os
    import signal
    import time

    launched = []

    def interrupted(command, run_dir, gpus=None):
        launched.append(run_dir.name)
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.5)  # the child would be exiting on its own SIGINT meanwhile
        return -signal.SIGINT

    monkeypatch.setattr(discovery, "launch", interrupted)
    with pytest.raises(KeyboardInterrupt):
        discovery.run("sdpo_m", ["a", "b", "c"], 16, tmp_path, ["sdpo"], 0, [])
    assert launched == ["a"]


def test_best_of_k_command_uses_the_recipe_settings(tmp_path, monkeypatch):
    monkeypatch.setenv("SDPO_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("SDPO_OUTPUT_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("LEAN_BACKEND", "repl")   # the recipe's backend key reads it (null without it: the default)
    cfg = discovery.compose_recipe("sdpo_kimina_1_7b", ["sdpo.ttrl.theorem=mathd_algebra_10"])
    log = tmp_path / "best_of_k" / "attempts.jsonl"
    command = discovery.best_of_k_command(cfg, ["mathd_algebra_10", "imo_1983_p6"], 64, log, 3, python="python")
    assert command[:4] == ["python", "-m", "sdpo_eval.prover_eval", "best-of-k"]
    opts = {command[i]: command[i + 1] for i in range(4, len(command) - 1) if command[i].startswith("--")}
    rollout = cfg["actor_rollout_ref"]["rollout"]
    assert opts["--model"] == cfg["actor_rollout_ref"]["model"]["path"]
    assert opts["--batch"] == str(rollout["n"]) and opts["--temperature"] == str(rollout["temperature"])
    assert opts["--top-p"] == str(rollout["top_p"])
    assert opts["--max-new-tokens"] == str(cfg["data"]["max_response_length"])
    assert opts["--problems"] == "mathd_algebra_10,imo_1983_p6" and opts["--budget"] == "64" and opts["--seed"] == "3"
    data = [command[i + 1] for i, c in enumerate(command) if c == "--data"]
    assert data == [str(tmp_path / "data" / f"minif2f_kimina_{s}.parquet") for s in ("valid", "test")]
    assert "backend=repl" in command and "lean_version=v4.9.0" in command
    assert not any(c.startswith("server_repls=") for c in command)   # null: left to the option's default
    # the sampler's own parser accepts every option (it stops at the missing data files, exit status 2)
    from sdpo_eval.prover_eval import main as sampler_main

    assert sampler_main(command[3:]) == 2


def record(method, problem, run_id, attempt, score, infra=0):
    return {"problem": problem, "method": method, "run_id": run_id, "step": 1, "attempt": attempt, "seed": 0,
            "response_tokens": 10, "verdict": "valid" if score else ("infra" if infra else "lean_error"),
            "score": float(score), "infra": infra}


def synthetic_log() -> list[dict]:
    recs = []
    # sdpo: p1 solved at 2, p2 solved at 5 (an infra record before it does not count), p3 unsolved (8 attempts)
    recs += [record("sdpo", "p1", "s1", a, a == 2) for a in (1, 2)]
    recs += [record("sdpo", "p2", "s2", 4, 0, infra=1)] + [record("sdpo", "p2", "s2", a, a == 5) for a in range(1, 6)]
    recs += [record("sdpo", "p3", "s3", a, 0) for a in range(1, 9)]
    recs += [record("sdpo", "p4", "s4", 1, 1)]                                  # only sdpo tried p4 -> left out
    # grpo: p1 solved at 7, p2 solved only at 12 (beyond budget 8), p3 two runs: solved at 1 / unsolved
    recs += [record("grpo", "p1", "g1", a, a == 7) for a in range(1, 8)]
    recs += [record("grpo", "p2", "g2", a, a == 12) for a in range(1, 13)]
    recs += [record("grpo", "p3", "g3", 1, 1)] + [record("grpo", "p3", "g4", a, 0) for a in range(1, 9)]
    # best_of_k: nothing solved; p3 stopped after 3 attempts (censored after k=3)
    recs += [record("best_of_k", p, f"b{p}", a, 0)
             for p, n in (("p1", 8), ("p2", 8), ("p3", 3)) for a in range(1, n + 1)]
    return recs


def test_report_values_hand_computed():
    report = discovery_curves.discovery_report(synthetic_log(), budget=8, n_boot=200)
    assert report["problems"] == ["p1", "p2", "p3"] and report["left_out"]["sdpo"] == ["p4"]
    sdpo, grpo, bok = (report["methods"][m]["curve"] for m in ("sdpo", "grpo", "best_of_k"))
    assert sdpo == pytest.approx([0, 1 / 3, 1 / 3, 1 / 3, 2 / 3, 2 / 3, 2 / 3, 2 / 3])
    assert grpo == pytest.approx([0.5 / 3] * 6 + [1.5 / 3] * 2)
    assert bok == [0.0] * 8
    assert report["methods"]["grpo"]["runs"] == 4 and report["methods"]["grpo"]["solved_runs"] == 2
    assert report["methods"]["best_of_k"]["censored_runs"] == 1
    assert report["methods"]["sdpo"]["discovery_at"]["8"]["value"] == pytest.approx(2 / 3)
    assert report["methods"]["sdpo"]["first_success"] == {"p1": [2], "p2": [5], "p3": [None]}
    for row in report["methods"].values():
        assert all(lo <= c + 1e-12 and c <= hi + 1e-12 for lo, c, hi in zip(row["low"], row["curve"], row["high"]))
    with pytest.raises(ValueError, match="every method"):
        discovery_curves.discovery_report([record("a", "x", "r", 1, 0), record("b", "y", "r", 1, 0)], budget=4)


def test_report_cli_writes_png_and_json(tmp_path, capsys):
    recs = synthetic_log()
    for method in ("sdpo", "grpo", "best_of_k"):
        path = tmp_path / "runs" / method / "attempts.jsonl"
        path.parent.mkdir(parents=True)
        path.write_text("".join(json.dumps(r) + "\n" for r in recs if r["method"] == method))
    assert discovery.main(["report", "--run-dir", str(tmp_path / "runs"), "--budget", "8", "--n-boot", "100",
                           "--no-recheck"]) == 0
    png, js = tmp_path / "runs" / "discovery.png", tmp_path / "runs" / "discovery.json"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000
    assert json.loads(js.read_text())["methods"]["sdpo"]["discovery_at"]["8"]["value"] == pytest.approx(2 / 3)
    assert "sdpo: @1=0.00" in capsys.readouterr().out
    (tmp_path / "bad.jsonl").write_text("{not json\n")
    assert discovery.main(["report", "--log", str(tmp_path / "bad.jsonl"), "--budget", "8"]) == 2


def test_dry_run_cli_prints_commands(capsys):
    assert discovery.main(["run", "--recipe", "sdpo_m", "--problems", "a,b", "--budget", "4",
                           "--out-dir", "/tmp/unused", "--methods", "sdpo", "--dry-run",
                           "trainer.n_gpus_per_node=2"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 2 and lines[1].endswith("trainer.save_freq=-1 trainer.n_gpus_per_node=2")
    assert not Path("/tmp/unused").exists()


def test_report_on_a_folder_without_attempt_logs_names_the_folder(tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        discovery.main(["report", "--run-dir", str(tmp_path), "--budget", "8"])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and f"--run-dir {tmp_path}: no attempts.jsonl under it" in err
