"""sdpo_eval.discovery.merge: the merge of runs brought back by several device calls into one report, cut runs
included as far as they got."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sdpo_attempts.log import AttemptLog
from sdpo_eval.discovery import merge as discovery_chunks
from sdpo_eval.discovery.report import write as write_report
from tests.sdpo_eval.discovery.test_discovery_at_k import set_run_log

ROOT = Path(__file__).resolve().parents[3]
PROBLEMS = {"demo": ["add_train_1", "add_train_2"], "toy_lean": ["toy_add_7_5"]}


def chunk_folder(root: Path, name: str, runs: dict[tuple[str, str, int], tuple[int | None, int | None]],
                 budget: int = 32, problems: dict | None = None) -> Path:
    """What one call brought back: problems_<task>.txt and, per (task, method, seed) -> (returncode or None for a run
    still going when the call ended, first valid attempt), the run's attempt log and status."""
    folder = root / name
    folder.mkdir(parents=True)
    for task, names in (problems or PROBLEMS).items():
        (folder / f"problems_{task}.txt").write_text(",".join(names) + "\n")
    for (task, method, seed), (rc, first) in runs.items():
        run_dir = folder / "runs" / task / method / f"seed{seed}"
        set_run_log(run_dir / "attempts.jsonl", method, seed, {p: first for p in PROBLEMS[task]}, budget=budget)
        if rc is not None:
            (run_dir / "status.json").write_text(json.dumps({"returncode": rc}))
    return folder


def cut_log(path: Path, method: str, seed: int, problems: list[str], made: int) -> None:
    """A run cut after `made` attempts on each problem, none valid, the last line half written."""
    log = AttemptLog(str(path), method=method, run_id=f"{method}-{seed}", seed=seed)
    for p in problems:
        log.record(1, [{"problem": p, "response_tokens": 5, "verdict": "lean_error", "score": 0.0, "infra": 0.0}
                       for _ in range(made)])
    with open(path, "a") as handle:
        handle.write('{"problem": "add_tr')


def test_a_cut_run_is_merged_with_how_far_it_got_and_the_furthest_copy_wins(tmp_path):
    a = chunk_folder(tmp_path, "call1", {("demo", "best_of_k", 1): (0, 3), ("demo", "grpo", 1): (None, None)})
    (a / "runs/demo/grpo/seed1/attempts.jsonl").unlink()
    cut_log(a / "runs/demo/grpo/seed1/attempts.jsonl", "grpo", 1, PROBLEMS["demo"], 8)
    b = chunk_folder(tmp_path, "call2", {("demo", "best_of_k", 1): (None, None)})
    (b / "runs/demo/best_of_k/seed1/attempts.jsonl").unlink()
    cut_log(b / "runs/demo/best_of_k/seed1/attempts.jsonl", "best_of_k", 1, PROBLEMS["demo"], 4)
    coverage = discovery_chunks.merge([b, a], tmp_path / "merged")
    grpo = coverage["in"]["demo/grpo/seed1"]
    assert grpo == {"chunk": "call1", "finished": False, "returncode": None,
                    "attempts": {"add_train_1": 8, "add_train_2": 8}, "solved": []}
    # the finished copy of call1 beats call2's cut one, whichever is given first
    assert coverage["in"]["demo/best_of_k/seed1"]["chunk"] == "call1"
    assert coverage["in"]["demo/best_of_k/seed1"]["finished"] is True
    assert coverage["problems"] == PROBLEMS
    merged = tmp_path / "merged" / "runs"
    assert (merged / "demo/grpo/seed1/attempts.jsonl").exists()
    with pytest.warns(UserWarning, match="cut last line"):
        result = write_report(merged, 32, tmp_path / "out" / "r", call="unit test", n_boot=50,
                              coverage=tmp_path / "merged" / "coverage.json")
    assert result["covered_k"] == 8 and result["covered_k_pairs"] == {"best_of_k vs grpo": 8}
    assert result["coverage"]["demo/grpo/seed1"]["attempts"] == {"add_train_1": 8, "add_train_2": 8}


def test_a_cut_copy_that_got_further_replaces_one_that_got_less(tmp_path):
    runs = {("demo", "grpo", 2): (None, None)}
    a, b = chunk_folder(tmp_path, "a", runs), chunk_folder(tmp_path, "b", runs)
    for folder, made in ((a, 3), (b, 9)):
        (folder / "runs/demo/grpo/seed2/attempts.jsonl").unlink()
        cut_log(folder / "runs/demo/grpo/seed2/attempts.jsonl", "grpo", 2, PROBLEMS["demo"], made)
    coverage = discovery_chunks.merge([a, b], tmp_path / "merged")
    assert coverage["in"]["demo/grpo/seed2"]["chunk"] == "b"


def test_chunks_of_other_problems_are_refused(tmp_path):
    a = chunk_folder(tmp_path, "a", {("demo", "grpo", 1): (0, 2)})
    b = chunk_folder(tmp_path, "b", {("demo", "grpo", 2): (0, 2)}, problems={"demo": ["add_train_9"]})
    with pytest.raises(ValueError, match="other demo problems"):
        discovery_chunks.merge([a, b], tmp_path / "merged")
    proc = subprocess.run([sys.executable, "-m", "sdpo_eval.discovery", "merge", "--chunk-dir", str(a),
                           "--chunk-dir", str(b), "--out-dir", str(tmp_path / "m")], cwd=ROOT, capture_output=True,
                          text=True)
    assert proc.returncode == 2 and proc.stderr.startswith("error: ") and "Traceback" not in proc.stderr
