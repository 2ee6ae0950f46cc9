"""Set-TTRL discovery: the run commands (main_ppo never runs), and discovery@k with bootstrap intervals, the table and
the summary schema from set-run attempt logs written by the real AttemptLog as TTRLSet draws."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import sdpo_eval.discovery as discovery
import sdpo_eval.discovery_curves as discovery_curves
import sdpo_eval.launch as launch
import sdpo_eval.run_checks as run_checks
from sdpo_attempts.log import AttemptLog
from sdpo_eval.discovery_set import SET_METHODS, run_set, set_command
from sdpo_eval.discovery_summary import attempts_to_match, first_success_table, paired_lines, summary
from sdpo_ext.ttrl.problem_set import TTRLSet


def test_set_command_trains_on_every_problem_in_one_run(tmp_path):
    run_dir = tmp_path / "sdpo_confident" / "seed2"
    command = set_command("sdpo_confident", "toy_lean", ["toy_add_7_5", "toy_lt_9_11"], 128, run_dir, 2,
                          overrides=["trainer.n_gpus_per_node=1"], python="python")
    assert command[:5] == ["python", "-m", "verl.trainer.main_ppo", "+recipe=sdpo_toy_lean",
                           "++sdpo.ttrl.theorems=[toy_add_7_5,toy_lt_9_11]"]
    assert {"sdpo.ttrl.max_attempts=128", "sdpo.ttrl.stop_on_success=true", "sdpo.algorithm_name=sdpo_confident",
            f"sdpo.attempt_log={run_dir / 'attempts.jsonl'}", "data.seed=2", "actor_rollout_ref.rollout.seed=2",
            "actor_rollout_ref.actor.sdpo.token_weighting=confident"} <= set(command)
    assert command[-1] == "trainer.n_gpus_per_node=1"  # the caller's overrides come last and win
    with pytest.raises(ValueError, match="unknown method 'ppo'"):
        set_command("ppo", "toy_lean", ["a"], 8, run_dir, 0)
    with pytest.raises(ValueError, match="comma-free"):
        set_command("grpo", "toy_lean", ["a,b"], 8, run_dir, 0)


def test_best_of_k_samples_like_the_trained_runs_and_never_updates(tmp_path, monkeypatch):
    """Composed as main_ppo composes them: best-of-k and GRPO/SDPO differ in learning only, not in sampling."""
    from omegaconf import OmegaConf

    from sdpo_ext.config import run_config

    monkeypatch.setenv("SDPO_TOY_DATA_DIR", str(tmp_path / "toy"))
    monkeypatch.setenv("SDPO_OUTPUT_DIR", str(tmp_path / "runs"))
    composed = {}
    for method in ("best_of_k", "grpo", "sdpo"):
        argv = set_command(method, "toy_lean", ["toy_add_7_5", "toy_mul_6_7"], 64, tmp_path / method, 1)
        algorithm = SET_METHODS[method][0]
        composed[method] = discovery.compose_recipe(f"{algorithm}_toy_lean", argv[4:])

    def sampling(cfg):
        rollout, data = cfg["actor_rollout_ref"]["rollout"], cfg["data"]
        return (rollout["temperature"], rollout["top_p"], rollout["n"], rollout["seed"], data["train_batch_size"],
                data["max_response_length"], cfg["actor_rollout_ref"]["model"]["path"])

    assert sampling(composed["best_of_k"]) == sampling(composed["grpo"]) == sampling(composed["sdpo"])
    warmup = {method: cfg["trainer"]["critic_warmup"] for method, cfg in composed.items()}
    assert warmup["best_of_k"] >= 10**9 and warmup["grpo"] == warmup["sdpo"] == 0
    run = run_config(OmegaConf.create(composed["best_of_k"]))
    assert run.ttrl.theorems == ["toy_add_7_5", "toy_mul_6_7"] and run.ttrl.max_attempts == 64
    assert run.algorithm_name == "best_of_k" and run.attempt_log == str(tmp_path / "best_of_k" / "attempts.jsonl")


@pytest.fixture
def passes_preflight(monkeypatch):
    """The start-up checks (a subprocess composing the recipe, tests/sdpo_eval/test_run_checks.py) pass."""
    monkeypatch.setattr(run_checks, "preflight", lambda command: None)


def test_run_set_launches_one_process_per_method_and_seed_and_skips_finished(tmp_path, monkeypatch, passes_preflight):
    launched = []

    def fake_run(command, stdout, stderr, env=None):
        launched.append(command)
        return subprocess.CompletedProcess(command, 1 if "data.seed=2" in command and "+recipe=sdpo_m" in command
                                           else 0)

    monkeypatch.setattr(launch.subprocess, "run", fake_run)
    results = run_set("m", ["a", "b"], 16, tmp_path, ["grpo", "sdpo"], [1, 2])
    assert [(r["method"], r["seed"], r["returncode"]) for r in results] == [
        ("grpo", 1, 0), ("grpo", 2, 0), ("sdpo", 1, 0), ("sdpo", 2, 1)]
    assert all("++sdpo.ttrl.theorems=[a,b]" in c for c in launched) and len(launched) == 4
    launched.clear()
    assert discovery.main(["run-set", "--model", "m", "--problems", "a,b", "--budget", "16", "--out-dir",
                           str(tmp_path), "--methods", "grpo,sdpo", "--seeds", "1,2"]) == 1  # the failed run again
    assert launched == [next(c for c in launched if "data.seed=2" in c)] and "+recipe=sdpo_m" in launched[0]


def set_run_log(path: Path, method: str, seed: int, solve_at: dict[str, int | None], budget: int, n: int = 4,
                prompts: int = 2) -> None:
    """A set-TTRL run's attempt log as the trainer writes it: TTRLSet draws, AttemptLog numbers each problem's
    attempts; problem p's attempt solve_at[p] is its first valid one (None: never)."""
    ttrl = TTRLSet(list(solve_at), budget=budget, seed=seed)
    log = AttemptLog(str(path), method=method, run_id=f"{method}-{seed}", seed=seed)
    step = 0
    while not ttrl.finished:
        step += 1
        samples = []
        for name in ttrl.draw(prompts, n, step):
            for _ in range(n):
                attempt = ttrl.problems[name].attempts + 1
                valid = attempt == solve_at[name]
                ttrl.observe(name, valid=valid, infra=False)
                samples.append({"problem": name, "response_tokens": 5, "verdict": "valid" if valid else "lean_error",
                                "score": float(valid), "infra": 0.0, "proof": "by decide" if valid else None})
        log.record(step, samples)


@pytest.fixture
def set_logs(tmp_path):
    budget = 16
    problems = ["p1", "p2", "p3", "p4"]
    plans = {  # (method, seed) -> first valid attempt per problem
        ("sdpo", 1): {"p1": 3, "p2": 9, "p3": None, "p4": 16},
        ("sdpo", 2): {"p1": 5, "p2": None, "p3": None, "p4": 2},
        ("best_of_k", 1): {"p1": 12, "p2": None, "p3": None, "p4": None},
        ("best_of_k", 2): {"p1": None, "p2": None, "p3": None, "p4": None},
    }
    for (method, seed), solve_at in plans.items():
        set_run_log(tmp_path / "runs" / method / f"seed{seed}" / "attempts.jsonl", method, seed,
                    {p: solve_at[p] for p in problems}, budget)
    return tmp_path / "runs", budget


def test_discovery_at_k_from_set_runs_hand_computed(set_logs):
    run_dir, budget = set_logs
    records = discovery_curves.read_attempts(sorted(run_dir.rglob("attempts.jsonl")))
    report = discovery_curves.discovery_report(records, budget, n_boot=500)
    sdpo, bok = report["methods"]["sdpo"], report["methods"]["best_of_k"]
    assert report["problems"] == ["p1", "p2", "p3", "p4"] and sdpo["seeds"] == [1, 2] and sdpo["runs"] == 8
    assert sdpo["first_success"] == {"p1": [3, 5], "p2": [9, None], "p3": [None, None], "p4": [16, 2]}
    assert bok["first_success"]["p1"] == [12, None]
    # discovery@k = mean over problems of the fraction of runs solved within k
    expected = {1: 0, 2: 0.5 / 4, 3: 1 / 4, 5: 1.5 / 4, 9: 2 / 4, 16: 2.5 / 4}
    for k, value in expected.items():
        assert sdpo["curve"][k - 1] == pytest.approx(value), k
    assert bok["curve"][11] == pytest.approx(0.5 / 4) and bok["curve"][10] == 0
    # bootstrap over problems: a band around the value, wide for four problems; none where every problem agrees
    at_budget = sdpo["discovery_at"][str(budget)]
    assert at_budget["low"] < at_budget["value"] < at_budget["high"] and at_budget["high"] - at_budget["low"] >= 0.3
    assert sdpo["discovery_at"]["1"] == {"value": 0.0, "low": 0.0, "high": 0.0}
    assert all(lo <= c <= hi for lo, c, hi in zip(sdpo["low"], sdpo["curve"], sdpo["high"]))

    table = first_success_table(report).splitlines()
    columns = [c.strip() for c in table[0].strip("|").split("|")]
    assert columns == ["problem", "best_of_k", "sdpo"]
    assert table[2] == "| p1 | 12 / - | 3 / 5 |" and table[5] == "| p4 | - / - | 16 / 2 |"
    assert table[6].startswith(f"| discovery@{budget} [95% CI] | 0.12 [") and table[7] == "| seeds | 1, 2 | 1, 2 |"
    short = summary(report, task="toy", call="unit test")
    assert set(short) == {"task", "call", "budget", "problems", "methods", "covered_k", "covered_k_pairs"}
    assert short["covered_k"] == budget and short["covered_k_pairs"] == {"best_of_k vs sdpo": budget}
    # best-of-k reaches 0.5/4 at k = 12 (its 16th attempt changes nothing); sdpo reaches it at k = 2
    versus = short["methods"]["sdpo"].pop("difference_vs_best_of_k")
    assert short["methods"]["sdpo"] == {"seeds": [1, 2], "discovery_at": sdpo["discovery_at"],
                                        "first_success": sdpo["first_success"], "attempts_to_match_best_of_k": 2,
                                        "match_best_of_k_within": budget}
    # paired on the 4 problems at k = 16: sdpo 2.5/4, best-of-k 0.5/4
    assert (versus["k"], versus["problems"], versus["value"]) == (budget, 4, pytest.approx(0.5))
    assert versus["low"] < 0.5 < versus["high"] and "difference_vs_best_of_k" not in short["methods"]["best_of_k"]
    assert set(versus) == {"k", "value", "low", "high", "share_at_or_below_0", "problems"}   # curves: report only
    (line,) = paired_lines(report)
    assert line.startswith(f"paired @{budget} against best_of_k: sdpo +0.50 [")
    assert short["methods"]["best_of_k"]["attempts_to_match_best_of_k"] == 12
    assert attempts_to_match([0.0, 0.1], 0.0) is None and attempts_to_match([0.0, 0.1], 0.2) is None


def test_a_cut_run_counts_as_far_as_it_got_and_the_comparison_says_which_k_it_covers(set_logs):
    """A run stopped by the call's end before its budget: its attempts count, its unsolved problems are censored past
    the attempts it made, and every comparison with its method stops at the k both methods reached."""
    run_dir, budget = set_logs
    cut = run_dir / "reprompt" / "seed1" / "attempts.jsonl"
    log = AttemptLog(str(cut), method="reprompt", run_id="reprompt-1", seed=1)
    for problem, solved_at in {"p1": 2, "p2": None, "p3": None, "p4": 7}.items():  # cut after 10 of 16 attempts
        log.record(1, [{"problem": problem, "response_tokens": 5, "verdict": "x", "score": float(a == solved_at),
                        "infra": 0.0} for a in range(1, (solved_at or 10) + 1)])
    records = discovery_curves.read_attempts(sorted(run_dir.rglob("attempts.jsonl")))
    report = discovery_curves.discovery_report(records, budget, n_boot=100)
    reprompt = report["methods"]["reprompt"]
    assert reprompt["reached"] == {"p1": budget, "p2": 10, "p3": 10, "p4": budget}
    assert report["covered_k"] == 10
    assert report["covered_k_pairs"] == {"best_of_k vs reprompt": 10, "best_of_k vs sdpo": budget,
                                         "reprompt vs sdpo": 10}
    assert reprompt["curve"][9] == pytest.approx(2 / 4)  # p1 and p4 solved by k = 10, p2 and p3 known unsolved
    assert reprompt["curve"][10] == pytest.approx(1.0)  # k = 11: only the solved problems are known
    short = summary(report, task="toy", call="unit test")
    # within k = 10 best-of-k found nothing: there is nothing to match; best-of-k's own discovery@10 is matched by it
    assert short["methods"]["reprompt"]["match_best_of_k_within"] == 10
    assert short["methods"]["reprompt"]["attempts_to_match_best_of_k"] is None
    assert short["methods"]["sdpo"]["attempts_to_match_reprompt"] == 9  # reprompt's 2/4 at k = 10; sdpo's at 9


def test_report_cli_writes_the_first_success_table(set_logs, capsys):
    run_dir, budget = set_logs
    assert discovery.main(["report", "--run-dir", str(run_dir), "--budget", str(budget), "--n-boot", "100",
                           "--no-recheck"]) == 0
    assert (run_dir / "discovery.md").read_text().splitlines()[3] == "| p2 | - / - | 9 / - |"
    assert json.loads((run_dir / "discovery.json").read_text())["methods"]["sdpo"]["seeds"] == [1, 2]
    assert (run_dir / "discovery.png").read_bytes()[:4] == b"\x89PNG"
    assert "discovery.md" in capsys.readouterr().out


def test_a_relaunched_run_without_a_checkpoint_does_not_add_its_first_try_to_the_report(tmp_path, monkeypatch,
                                                                                       passes_preflight):
    """run-set saves no checkpoints, so a relaunch (after a crash, or --force) starts over under a new run id; the
    first try's attempts must not stay in the log the report reads (it would count as one more run of that seed)."""
    run_dir = tmp_path / "sdpo" / "seed1"
    set_run_log(run_dir / "attempts.jsonl", "sdpo", 1, {"p1": 2, "p2": None}, budget=8)  # the crashed first try
    crashed = (run_dir / "attempts.jsonl").read_text()

    def fake_run(command, stdout, stderr, env=None):  # the relaunch: a new run id, attempts from 1, appended
        set_run_log(tmp_path / "retry.jsonl", "sdpo", 1, {"p1": None, "p2": 5}, budget=8)
        retry = (tmp_path / "retry.jsonl").read_text().replace('"sdpo-1"', '"sdpo-1-retry"')
        with open(run_dir / "attempts.jsonl", "a") as handle:
            handle.write(retry)
        return subprocess.CompletedProcess(command, 0)

    monkeypatch.setattr(launch.subprocess, "run", fake_run)
    run_set("m", ["p1", "p2"], 8, tmp_path, ["sdpo"], [1])
    records = discovery_curves.read_attempts(sorted(tmp_path.rglob("attempts.jsonl")))
    assert discovery_curves.runs_by_method(records, 8)["sdpo"] == {"p1": [(None, 8)], "p2": [(5, 8)]}
    assert [p.read_text() for p in run_dir.glob("attempts.jsonl.*")] == [crashed]  # kept aside, not read


def test_reprompt_is_a_run_set_method_run_by_the_sampler_into_the_same_folder(tmp_path):
    command = set_command("reprompt", "toy_lean", ["toy_add_7_5", "toy_mul_6_7"], 64, tmp_path / "reprompt" / "seed2",
                          2, overrides=("data.max_response_length=128",), python="python3")
    assert command[:3] == ["python3", "-m", "sdpo_eval.discovery_sampler"]
    assert command[command.index("--recipe") + 1] == "sdpo_toy_lean"
    assert command[command.index("--runs") + 1] == "reprompt:2"
    assert command[command.index("--out-dir") + 1] == str(tmp_path)  # the sampler adds reprompt/seed2 itself
    assert command[command.index("--") + 1:] == ["data.max_response_length=128"]
    with pytest.raises(ValueError, match="reprompt"):
        set_command("resample", "toy_lean", ["toy_add_7_5"], 8, tmp_path, 1)
