"""discovery@k with bootstrap intervals, the first-success table and the summary schema, from set-run attempt logs
written by the real AttemptLog as TTRLSet draws; runs cut before their budget count as far as they got."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import sdpo_eval.discovery.cli as cli
import sdpo_eval.discovery.curves as curves
from sdpo_attempts.log import AttemptLog
from sdpo_eval.discovery.summary import attempts_to_match, first_success_table, paired_lines, summary
from sdpo_ext.ttrl.problem_set import TTRLSet


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
    records = curves.read_attempts(sorted(run_dir.rglob("attempts.jsonl")))
    report = curves.discovery_report(records, budget, n_boot=500)
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
        log.record(1, [{"problem": problem, "response_tokens": 5, "verdict": "valid" if a == solved_at else "x",
                            "score": float(a == solved_at),
                        "infra": 0.0} for a in range(1, (solved_at or 10) + 1)])
    records = curves.read_attempts(sorted(run_dir.rglob("attempts.jsonl")))
    report = curves.discovery_report(records, budget, n_boot=100)
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
    assert cli.main(["report", "--run-dir", str(run_dir), "--budget", str(budget), "--n-boot", "100",
                           "--no-recheck"]) == 0
    assert (run_dir / "discovery.md").read_text().splitlines()[3] == "| p2 | - / - | 9 / - |"
    assert json.loads((run_dir / "discovery.json").read_text())["methods"]["sdpo"]["seeds"] == [1, 2]
    assert (run_dir / "discovery.png").read_bytes()[:4] == b"\x89PNG"
    assert "discovery.md" in capsys.readouterr().out
