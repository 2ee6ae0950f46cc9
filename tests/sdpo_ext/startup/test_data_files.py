"""The pre-flight reads the data: each file the run reads is a parquet with verl's columns and some rows, read from its
footer; a misspelt `sdpo.dataset` gets the closest names; the demo's missing model names the command that makes it."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sdpo_ext.startup import preflight
from sdpo_ext.startup.checks import data_content_problems
from sdpo_ext.startup.data_files import data_file_problems, file_problem
from sdpo_ext.startup.preflight import data_problems, model_problems
from tests.recipes.test_recipes import compose_recipe

ROW = {"data_source": "minif2f", "prompt": [{"role": "user", "content": "prove it"}],
       "reward_model": {"style": "rule", "ground_truth": "{}"}, "extra_info": {"name": "t1", "index": 0}}


def _write(path: Path, rows: list[dict] | None = None, table: pa.Table | None = None) -> str:
    pq.write_table(table if table is not None else pa.Table.from_pylist(rows), path)
    return str(path)


def _config(train: str, ttrl: bool = False) -> dict:
    return {"data": {"train_files": train, "val_files": [], "sdpo_ttrl": {"files": []}}}


@pytest.mark.parametrize("rows, ttrl, words", [
    ([{k: v for k, v in ROW.items() if k != "prompt"}], False, "no column 'prompt'"),
    ([{**ROW, "prompt": "prove it"}], False, "column 'prompt' is string, not a list"),
    ([{**ROW, "prompt": [{"content": "x"}]}], False, "a list of chat messages: a struct with a string 'role'"),
    ([{**ROW, "data_source": 3}], False, "column 'data_source' is int64, not a string"),
    ([{**ROW, "reward_model": {"style": "rule"}}], False, "column 'reward_model' is struct<style: string>, not a "
                                                          "struct with a string 'ground_truth'"),
    ([{k: v for k, v in ROW.items() if k != "extra_info"}], True, "no column 'extra_info'"),
    ([{**ROW, "extra_info": {"index": 0}}], True, "a struct with a string 'name'"),
])
def test_a_file_without_the_columns_verl_and_the_reward_read_is_named(tmp_path, rows, ttrl, words):
    path = _write(tmp_path / "minif2f_kimina_valid.parquet", rows)
    (problem,) = data_file_problems(_config(path), ttrl_active=ttrl)
    assert problem.startswith(f"data.train_files: {path} lacks what verl and the reward read: ") and words in problem
    assert "make it again with: python -m sdpo_data.prepare lean --dataset minif2f" in problem


def test_a_good_file_passes_and_extra_info_is_asked_only_of_ttrl(tmp_path):
    assert data_file_problems(_config(_write(tmp_path / "a.parquet", [ROW])), ttrl_active=True) == []
    plain = [{k: v for k, v in ROW.items() if k != "extra_info"}]
    assert data_file_problems(_config(_write(tmp_path / "b.parquet", plain)), ttrl_active=False) == []


def test_another_kind_of_file_under_a_parquet_name_and_an_empty_one(tmp_path):
    text = tmp_path / "addition_train.parquet"
    text.write_text('{"prompt": "a jsonl file renamed"}\n')
    (problem,) = data_file_problems(_config(str(text)), ttrl_active=False)
    assert problem == (f"data.train_files: {text} is not a parquet file (it does not begin and end with PAR1) "
                       f"(make it again with: python -m sdpo_data.addition_rows --out-dir {tmp_path})")
    empty = _write(tmp_path / "mine.parquet", table=pa.Table.from_pylist([ROW]).slice(0, 0))
    (problem,) = data_file_problems(_config(empty), ttrl_active=False)
    assert problem.startswith(f"data.train_files: {empty} has no rows (write verl rows: prompt")
    damaged = tmp_path / "cut.parquet"
    damaged.write_bytes(b"PAR1" + b"\0" * 20 + b"PAR1")
    assert "is not a readable parquet file" in file_problem(str(damaged), "prompt", "data_source", False)


def test_the_check_reads_the_footer_only(tmp_path):
    big = _write(tmp_path / "big.parquet", [ROW] * 200_000)
    start = time.perf_counter()
    assert file_problem(big, "prompt", "data_source", True) is None
    assert time.perf_counter() - start < 0.5


def test_the_recipes_data_from_each_tool_passes(tmp_path, monkeypatch):
    from sdpo_data import toy_lean
    from sdpo_data.addition_rows import main as addition_main

    toy_lean.write(tmp_path / "toy")
    monkeypatch.setenv("SDPO_TOY_DATA_DIR", str(tmp_path / "toy"))
    assert data_content_problems(compose_recipe("sdpo_toy_lean", ("sdpo.ttrl.theorem=toy_add_7_5",))) == []
    assert addition_main(["--out-dir", str(tmp_path / "add")]) == 0
    monkeypatch.setenv("SDPO_DEMO_DATA_DIR", str(tmp_path / "add"))
    assert data_content_problems(compose_recipe("sdpo_demo")) == []


def test_a_misspelt_dataset_is_one_problem_with_the_closest_names(tmp_path, monkeypatch):
    monkeypatch.setenv("SDPO_DATA_DIR", str(tmp_path))
    problems = data_problems(compose_recipe("sdpo_kimina_1_7b", ("sdpo.dataset=minif2g",)))
    assert problems == ["sdpo.dataset=minif2g names no prepared dataset (did you mean minif2f? known: minif2f, "
                        "proofnet, toy)"]


def test_the_prepared_datasets_are_those_the_tools_make():
    from sdpo_data.lean_rows import LEAN_DATASETS
    from sdpo_data.toy_lean import TOY

    assert sorted(preflight.PREPARED_DATASETS) == sorted([*LEAN_DATASETS, TOY.name])


def test_the_demos_missing_model_names_the_command_that_makes_it(tmp_path):
    folder = tmp_path / "models" / "smollm2-135m"
    (problem,) = model_problems({"actor_rollout_ref": {"model": {"path": str(folder)}}})
    assert problem.endswith(f"(make it with: python -m sdpo_data.smollm2 --out-dir {folder})")


def test_bad_data_stops_the_run_before_ray_each_problem_in_the_one_message(tmp_path):
    from sdpo_data import toy_lean

    toy_lean.write(tmp_path / "toy")
    (tmp_path / "BAD").write_text("not a parquet\n")
    root = str(Path(__file__).parents[3])
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "SDPO_OUTPUT_DIR": str(tmp_path / "runs"),
           "SDPO_TOY_DATA_DIR": str(tmp_path / "toy"), "PYTHONPATH": root}
    proc = subprocess.run([sys.executable, "-m", "verl.trainer.main_ppo", "+recipe=sdpo_toy_lean", "sdpo.dataset=toyy",
                           f"data.val_files={tmp_path / 'BAD'}"], capture_output=True, text=True, timeout=120,
                          env=env, cwd=tmp_path)
    assert proc.returncode == 2 and "sdpo-lean found" in proc.stderr, proc.stderr[-2000:]
    assert "- MissingData: sdpo.dataset=toyy names no prepared dataset (did you mean toy?" in proc.stderr
    assert f"- BadData: data.val_files: {tmp_path / 'BAD'} is not a parquet file" in proc.stderr
    assert "ray init kwargs" not in proc.stdout and "Traceback" not in proc.stderr
