"""bench/ttrl/discovery_chunks.py: the discovery job cut into chunks of one device call, and the merge of chunks from
different calls into one report that says which runs are in and which are missing."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bench.bench_scripts import on_path
from tests.sdpo_eval.test_discovery_set import set_run_log

on_path("ttrl")
import discovery_chunks  # noqa: E402
import ttrl_discovery  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PROBLEMS = {"demo": ["add_train_1", "add_train_2"], "toy_lean": ["toy_add_7_5"]}


def chunk_folder(root: Path, name: str, chunk: int, runs: dict[tuple[str, str, int], tuple[int, int | None]],
                 budget: int = 32, problems: dict | None = None) -> Path:
    """An unpacked chunk: chunk.json and, per (task, method, seed), (returncode, first valid attempt) of its run."""
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "chunk.json").write_text(json.dumps({"chunk": chunk, "budget": budget, "call": f"call of {name}",
                                                   "problems": problems or PROBLEMS}))
    for (task, method, seed), (rc, first) in runs.items():
        run_dir = folder / "runs" / task / method / f"seed{seed}"
        set_run_log(run_dir / "attempts.jsonl", method, seed, {p: first for p in PROBLEMS[task]}, budget=budget)
        (run_dir / "status.json").write_text(json.dumps({"returncode": rc}))
    return folder


def test_the_first_two_chunks_give_best_of_k_against_grpo_and_the_sdpo_family_on_every_task():
    first, second = discovery_chunks.plan(1), discovery_chunks.plan(2)
    assert {m for _, m, _ in first} == {"best_of_k", "grpo"} and {m for _, m, _ in second} == {"sdpo_confident", "srpo"}
    assert {t for t, _, _ in first + second} == set(discovery_chunks.TASKS) and {s for _, _, s in first} == {1}
    planned = discovery_chunks.planned_runs()
    assert len(planned) == len(set(planned))  # no run is in two chunks
    assert {m for r in planned for m in [r.split("/")[1]]} >= {"best_of_k", "grpo", "sdpo_confident", "srpo"}
    with pytest.raises(ValueError, match="chunk 0 is the base rates"):
        discovery_chunks.plan(0)


def test_chunks_from_two_calls_merge_and_the_report_lists_what_is_in_and_missing(tmp_path):
    a = chunk_folder(tmp_path, "call_a", 1, {("demo", "best_of_k", 1): (0, None), ("demo", "grpo", 1): (0, 5),
                                              ("toy_lean", "best_of_k", 1): (0, 20), ("toy_lean", "grpo", 1): (124, 3)})
    b = chunk_folder(tmp_path, "call_b", 1, {("toy_lean", "grpo", 1): (0, 7), ("demo", "grpo", 1): (0, 9)})
    coverage = discovery_chunks.merge([a, b], tmp_path / "merged")
    assert coverage["in"]["demo/grpo/seed1"].startswith("chunk 1 (call_a)")     # first given wins
    assert coverage["in"]["toy_lean/grpo/seed1"].startswith("chunk 1 (call_b)")  # cut in call_a, finished in call_b
    assert coverage["missing"]["demo/srpo/seed1"] == "not run yet"
    assert len(coverage["in"]) + len(coverage["missing"]) == len(discovery_chunks.planned_runs())
    result = ttrl_discovery.report(tmp_path / "merged" / "runs", 32, [], "merged", tmp_path / "out" / "disc",
                                   n_boot=50, coverage=tmp_path / "merged" / "coverage.json")
    assert result["methods"]["grpo"]["first_success"]["toy_add_7_5"] == [7]  # call_b's finished run, not the cut one
    assert result["methods"]["grpo"]["first_success"]["add_train_1"] == [5]
    assert result["coverage"]["missing"]["toy_lean/srpo/seed1"] == "not run yet"


def test_a_cut_run_is_missing_with_its_returncode(tmp_path):
    a = chunk_folder(tmp_path, "call_a", 2, {("demo", "srpo", 1): (124, None)})
    coverage = discovery_chunks.merge([a], tmp_path / "merged")
    assert coverage["missing"]["demo/srpo/seed1"] == "returncode 124 in chunk 2 (call_a)"
    assert not (tmp_path / "merged" / "runs" / "demo" / "srpo").exists()


def test_chunks_of_different_problem_sets_or_budgets_are_refused_on_one_line(tmp_path):
    a = chunk_folder(tmp_path, "a", 1, {("demo", "grpo", 1): (0, 5)})
    b = chunk_folder(tmp_path, "b", 2, {("demo", "srpo", 1): (0, 5)}, budget=64)
    proc = subprocess.run([sys.executable, "bench/ttrl/discovery_chunks.py", "merge", "--chunk-dir", str(a),
                           "--chunk-dir", str(b), "--out", str(tmp_path / "m")],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.startswith("error: the chunks differ in budget or problems")
    assert "Traceback" not in proc.stderr and not (tmp_path / "m").exists()


def test_chunk_zero_writes_the_problem_file_every_later_chunk_reads(tmp_path):
    for task, names in (("demo", ["add_train_1", "add_train_2"]), ("toy_lean", ["toy_add_7_5", "toy_mul_6_7"])):
        log = tmp_path / "base" / task / "attempts.jsonl"
        log.parent.mkdir(parents=True)
        rows = [{"problem": p, "attempt": i, "score": float(p in ("add_train_2", "toy_mul_6_7") and i <= 16)}
                for p in names for i in range(1, 65)]
        log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    chosen = ttrl_discovery.problem_file(tmp_path / "base", budget=128, samples=64, max_rate=0.1, count=16)
    assert chosen["problems"] == {"demo": ["add_train_1"], "toy_lean": ["toy_add_7_5"]}  # the others: 16/64
    assert chosen["budget"] == 128 and chosen["base_rate"]["demo"]["add_train_2"]["rate"] == 0.25
