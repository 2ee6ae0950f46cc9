"""The one discovery report: discovery@k hand-computed, the CLI's files, each method's protocol and the reset cost
per problem of single-protocol runs read from their stdout."""
from __future__ import annotations

import json

import pytest

import sdpo_eval.discovery.cli as cli
import sdpo_eval.discovery.curves as curves
from sdpo_eval.discovery import switches
from sdpo_eval.discovery.report import build


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
    report = curves.discovery_report(synthetic_log(), budget=8, n_boot=200)
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
        curves.discovery_report([record("a", "x", "r", 1, 0), record("b", "y", "r", 1, 0)], budget=4)


def test_report_cli_writes_png_and_json(tmp_path, capsys):
    recs = synthetic_log()
    for method in ("sdpo", "grpo", "best_of_k"):
        path = tmp_path / "runs" / method / "attempts.jsonl"
        path.parent.mkdir(parents=True)
        path.write_text("".join(json.dumps(r) + "\n" for r in recs if r["method"] == method))
    assert cli.main(["report", "--run-dir", str(tmp_path / "runs"), "--budget", "8", "--n-boot", "100",
                           "--no-recheck"]) == 0
    png, js = tmp_path / "runs" / "discovery.png", tmp_path / "runs" / "discovery.json"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000
    assert json.loads(js.read_text())["methods"]["sdpo"]["discovery_at"]["8"]["value"] == pytest.approx(2 / 3)
    assert "sdpo (single): @1=0.00" in capsys.readouterr().out
    (tmp_path / "bad.jsonl").write_text("{not json\n")
    assert cli.main(["report", "--log", str(tmp_path / "bad.jsonl"), "--budget", "8"]) == 2


def test_report_on_a_folder_without_attempt_logs_names_the_folder(tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(["report", "--run-dir", str(tmp_path), "--budget", "8"])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and f"--run-dir {tmp_path}: no attempts.jsonl under it" in err


def switch_line(source, target, step, reset_s):
    return f"(TaskRunner pid=7) {switches.SWITCH_MARK} " + json.dumps(
        {"from": source, "to": target, "step": step, "reset_s": reset_s})


def test_switch_lines_are_read_exactly_and_a_cut_one_is_left_out():
    text = "\n".join(["noise", "\x1b[36m" + switch_line("p1", "p2", 3, 1.5) + "\x1b[0m", "step:4 - loss 0.1",
                      switch_line("p2", None, 6, 2.5), f"{switches.SWITCH_MARK} {{\"from\": \"p3"])
    assert switches.switches(text) == [{"from": "p1", "to": "p2", "step": 3, "reset_s": 1.5},
                                       {"from": "p2", "to": None, "step": 6, "reset_s": 2.5}]
    assert switches.reset_summary([switches.switches(text), [{"reset_s": 4.0}]]) == {
        "median": 2.5, "max": 4.0, "switches": 3}
    assert switches.reset_summary([[]]) is None


def test_the_report_records_each_methods_protocol_and_the_reset_cost_of_its_single_protocol_runs(tmp_path):
    recs = synthetic_log()
    logs = []
    for method, resets in (("sdpo", [1.0, 3.0]), ("grpo", [2.0]), ("best_of_k", [])):
        folder = tmp_path / "runs" / method / "seed0"
        folder.mkdir(parents=True)
        (folder / "attempts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs if r["method"] == method))
        (folder / "stdout.log").write_text("".join(switch_line("a", "b", i, r) + "\n" for i, r in enumerate(resets)))
        (folder / "status.json").write_text(json.dumps({"returncode": 0}))
        if method == "sdpo":  # verl's file logger: two steps, the second cut mid-write by a kill
            (folder / "metrics.jsonl").write_text(json.dumps({"step": 1, "data": {
                "self_distillation/demonstration_used_fraction": 0.25, "actor/sdpo/active_sample_fraction": 0.5,
                "critic/advantages/min": 0.0, "critic/advantages/max": 0.0}}) + "\n"
                + json.dumps({"step": 2, "data": {"self_distillation/demonstration_used_fraction": 0.75,
                                                  "critic/advantages/min": -0.5, "critic/advantages/max": 1.5}})
                + "\n" + '{"step": 3, "da')
        logs.append(folder / "attempts.jsonl")
    report = build(curves.read_attempts(logs), 8, logs=logs, run_dir=tmp_path / "runs", task="demo", n_boot=50)
    rows = report["methods"]
    assert {m: rows[m]["protocol"] for m in rows} == {"best_of_k": "sampler", "grpo": "single", "sdpo": "single"}
    assert rows["sdpo"]["reset_s_per_problem"] == {"median": 2.0, "max": 3.0, "switches": 2}
    assert rows["grpo"]["reset_s_per_problem"]["max"] == 2.0 and rows["best_of_k"]["reset_s_per_problem"] is None
    assert rows["sdpo"]["teacher_signal"] == {"steps": 2, "advantage_steps": 0.5,
                                              "self_distillation/demonstration_used_fraction": 0.5,
                                              "actor/sdpo/active_sample_fraction": 0.5}
    assert rows["grpo"]["teacher_signal"] is None
    # the full report and the summary schema in one object: curves and attempts to match side by side
    assert len(rows["sdpo"]["curve"]) == 8 and "attempts_to_match_best_of_k" in rows["sdpo"]
    assert report["runs"] == {"best_of_k/seed0": 0, "grpo/seed0": 0, "sdpo/seed0": 0}
    assert report["tasks"] == {"demo": ["p1", "p2", "p3"]}


def test_the_report_reads_the_published_set_ttrl_results_schema_and_only_adds_to_it():
    """bench/ttrl/results/ttrl_discovery_2026-12-06.json's keys are all in a report built today."""
    from pathlib import Path

    published = json.loads((Path(__file__).resolve().parents[3] / "bench/ttrl/results/"
                            "ttrl_discovery_2026-12-06.json").read_text())
    report = build(synthetic_log(), 8, task="demo", n_boot=20)
    assert set(published) - {"coverage", "runs"} <= set(report)   # those two need run folders / a merge
    method_keys = set().union(*(row.keys() for row in published["methods"].values()))
    assert method_keys - {"difference_vs_reprompt", "attempts_to_match_reprompt", "match_reprompt_within"} \
        <= set(report["methods"]["sdpo"])


def test_a_problem_whose_statement_is_flagged_as_defective_is_never_counted_unless_asked(tmp_path, capsys):
    import pandas as pd

    parquet = tmp_path / "rows.parquet"
    pd.DataFrame([{"data_source": "sdpo_demo_addition", "ability": "arithmetic", "prompt": [],
                   "reward_model": {"style": "rule", "ground_truth": "3"},
                   "extra_info": {"name": name, "split": "test", "index": i, "statement_defect": defect}}
                  for i, (name, defect) in enumerate((("p1", ""), ("p2", "0 = 0 over ℕ (DeepSeek-Prover-V1.5#26)"),
                                                      ("p3", "")))]).to_parquet(parquet)
    log = tmp_path / "attempts.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in synthetic_log()))
    out = tmp_path / "report"
    assert cli.main(["report", "--log", str(log), "--budget", "8", "--n-boot", "50", "--data", str(parquet),
                     "--out-prefix", str(out)]) == 0
    report = json.loads(out.with_suffix(".json").read_text())
    assert report["problems"] == ["p1", "p3"] and report["left_out_defective"] == {"p2": "0 = 0 over ℕ "
                                                                                       "(DeepSeek-Prover-V1.5#26)"}
    assert "left out 1 problems whose statement is flagged as defective: p2" in capsys.readouterr().out
    assert cli.main(["report", "--log", str(log), "--budget", "8", "--n-boot", "50", "--data", str(parquet),
                     "--out-prefix", str(out), "--count-defective"]) == 0
    report = json.loads(out.with_suffix(".json").read_text())
    assert report["problems"] == ["p1", "p2", "p3"] and report["left_out_defective"] == {}
