"""bench/ttrl/ttrl_discovery.py, the helpers of the GPU job bench/ttrl/run_ttrl_discovery.sh: candidates, base-rate
selection, the run command (composed as main_ppo composes it), and the report in issue 32's schema from set-run logs."""
from __future__ import annotations

import json
import shlex

import pytest

from tests.bench.bench_scripts import on_path
from tests.sdpo_eval.test_discovery_set import set_run_log

on_path("ttrl")
import ttrl_discovery  # noqa: E402


def test_candidates_are_the_largest_sums_or_every_toy_theorem(tmp_path):
    import pandas as pd

    from sdpo_data.addition_rows import write_data

    write_data(tmp_path, n_train=64, n_test=4)
    names = ttrl_discovery.candidates("demo", tmp_path, 5)
    rows = {e["name"]: sum(e["operands"]) for e in pd.read_parquet(tmp_path / "addition_train.parquet")["extra_info"]}
    assert len(names) == 5 and min(rows[n] for n in names) >= max(s for n, s in rows.items() if n not in names)
    assert ttrl_discovery.candidates("toy_lean", tmp_path, 5)[:2] == ["toy_add_7_5", "toy_mul_6_7"]


def test_base_rates_use_the_first_judged_samples_and_select_the_rarest():
    def rec(problem, attempt, score, infra=0):
        return {"problem": problem, "attempt": attempt, "score": score, "infra": infra}

    records = [rec("a", i, float(i in (2, 70))) for i in range(1, 71)]   # 1 of the first 64 (the 70th is past)
    records += [rec("b", i, 0.0) for i in range(1, 65)] + [rec("b", 64, 0.0, infra=1)]
    records += [rec("c", i, float(i % 4 == 0)) for i in range(1, 65)]   # 16/64 = 0.25: not rare
    records += [rec("d", i, 0.0) for i in range(1, 33)]                 # only 32 measured
    rates = ttrl_discovery.base_rates(records, samples=64)
    assert rates["a"] == {"valid": 1, "judged": 64, "rate": 1 / 64} and rates["b"]["judged"] == 64
    assert ttrl_discovery.select(rates, samples=64, max_rate=0.1, count=16) == ["b", "a"]
    assert ttrl_discovery.select(rates, samples=64, max_rate=0.1, count=1) == ["b"]


def test_the_job_command_composes_for_both_tasks(tmp_path, monkeypatch, capsys):
    from omegaconf import OmegaConf

    from sdpo_eval.discovery import compose_recipe
    from sdpo_ext.config import run_config

    for var in ("SDPO_DEMO_DATA_DIR", "SDPO_TOY_DATA_DIR", "SDPO_OUTPUT_DIR"):
        monkeypatch.setenv(var, str(tmp_path / var))
    for task, recipe, problems in (("demo", "sc_sdpo_demo", "add_train_1,add_train_2"),
                                   ("toy_lean", "sc_sdpo_toy_lean", "toy_add_7_5")):
        ttrl_discovery.main(["command", "--task", task, "--method", "sc_sdpo", "--seed", "2", "--problems", problems,
                             "--budget", "128", "--run-dir", str(tmp_path / task), "--", "data.train_batch_size=8"])
        argv = shlex.split(capsys.readouterr().out)
        assert argv[:4] == ["python3", "-m", "verl.trainer.main_ppo", f"+recipe={recipe}"]
        cfg = compose_recipe(recipe, argv[4:])
        run = run_config(OmegaConf.create(cfg))
        assert run.ttrl.theorems == problems.split(",") and run.ttrl.max_attempts == 128
        assert cfg["data"]["train_batch_size"] == 8 and cfg["trainer"]["test_freq"] == -1
        assert run.attempt_log == str(tmp_path / task / "attempts.jsonl")


def test_report_writes_the_issue_schema_with_base_rates_and_run_status(tmp_path):
    runs = tmp_path / "runs"
    for task, problems in (("demo", ["add_train_1", "add_train_2"]), ("toy_lean", ["toy_add_7_5"])):
        for method, seed, first in (("grpo", 1, 5), ("grpo", 2, None), ("best_of_k", 1, None), ("best_of_k", 2, 30)):
            run_dir = runs / task / method / f"seed{seed}"
            set_run_log(run_dir / "attempts.jsonl", method, seed, {p: first for p in problems}, budget=32)
            (run_dir / "status.json").write_text(json.dumps({"returncode": 0}))
    base = tmp_path / "base_rate.json"
    base.write_text(json.dumps({"add_train_1": {"valid": 0, "judged": 64, "rate": 0.0},
                                "add_train_9": {"valid": 9, "judged": 64, "rate": 0.14}}))
    result = ttrl_discovery.report(runs, 32, [base], "unit test", tmp_path / "out" / "ttrl_discovery", n_boot=100)
    written = json.loads((tmp_path / "out" / "ttrl_discovery.json").read_text())
    assert written == json.loads(json.dumps(result))
    assert written["budget"] == 32 and written["problems"] == ["add_train_1", "add_train_2", "toy_add_7_5"]
    assert set(written["methods"]) == {"grpo", "best_of_k"} and written["methods"]["grpo"]["seeds"] == [1, 2]
    assert written["methods"]["grpo"]["first_success"]["toy_add_7_5"] == [5, None]
    assert written["methods"]["grpo"]["discovery_at"]["8"]["value"] == pytest.approx(0.5)
    assert written["methods"]["best_of_k"]["discovery_at"]["32"]["value"] == pytest.approx(0.5)
    assert written["base_rate"] == {"add_train_1": {"valid": 0, "judged": 64, "rate": 0.0}}
    assert written["runs"]["toy_lean/grpo/seed2"] == 0 and len(written["runs"]) == 8
    assert (tmp_path / "out" / "ttrl_discovery.png").stat().st_size > 5000
    assert "| toy_add_7_5 | - / 30 | 5 / - |" in (tmp_path / "out" / "ttrl_discovery.md").read_text()


def test_a_relaunch_resumes_a_run_with_a_checkpoint_and_sets_a_first_try_aside_without_one(tmp_path, capsys):
    """The job's relaunch on the same machine: verl resumes a checkpointed run (its attempt log stays, under the
    checkpoint's run id); a run cut before its first checkpoint starts over, its first try's log moved aside."""
    with_ckpt, without = tmp_path / "a", tmp_path / "b"
    for run in (with_ckpt, without):
        run.mkdir()
        (run / "attempts.jsonl").write_text('{"problem": "p"}\n')
    (with_ckpt / "checkpoints").mkdir()
    (with_ckpt / "checkpoints" / "latest_checkpointed_iteration.txt").write_text("4")
    assert ttrl_discovery.main(["relaunch", "--run-dir", str(with_ckpt)]) == 0
    assert ttrl_discovery.main(["relaunch", "--run-dir", str(without)]) == 0
    assert capsys.readouterr().out.split() == ["resume", "fresh"]
    assert (with_ckpt / "attempts.jsonl").exists()
    assert not (without / "attempts.jsonl").exists() and (without / "attempts.jsonl.1").exists()
