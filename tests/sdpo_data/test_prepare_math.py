"""MATH preparation from local JSONL and the verl RLHFDataset contract of the prepared files."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from sdpo_data.math_rows import load_math, parse_subjects, to_problems
from sdpo_data.prepare import main, prepare_lean, prepare_math

RECORDS = [
    {"problem": "What is $1+1$?", "solution": "It is $\\boxed{2}$.", "type": "Algebra", "level": "Level 1"},
    {"problem": "Simplify $\\frac{2}{4}$.", "solution": "We get $\\boxed{\\frac{1}{2}}$.", "type": "Prealgebra"},
    {"problem": "Count it.", "answer": "7", "subject": "counting_and_probability"},
    {"problem": "No answer here.", "solution": "Unboxed 3.", "type": "Algebra"},
    {"problem": "", "answer": "1", "type": "Algebra"},
]


def test_reference_answers_and_exclusions():
    problems, excluded = to_problems(RECORDS)
    assert [(p.subject, p.answer) for p in problems] == [("algebra", "2"), ("prealgebra", "\\frac{1}{2}"),
                                                         ("counting_and_probability", "7")]
    assert [i for i, _ in excluded] == [3, 4]
    assert parse_subjects("all") is None and parse_subjects("algebra, geometry") == ("algebra", "geometry")
    with pytest.raises(ValueError, match="unknown MATH subject"):
        parse_subjects("algebra,calculus")


def test_math500_and_subjectless_records(tmp_path):
    math500 = {"problem": "P", "solution": "S", "answer": "\\frac{1}{2}", "subject": "Counting & Probability",
               "level": 3, "unique_id": "test/counting_and_probability/7.json"}
    plain = {"problem": "Q", "solution": "So $\\boxed{-2}$ and $\\boxed{1}$."}
    problems, excluded = to_problems([math500, plain])
    assert [(p.id, p.subject, p.level, p.answer) for p in problems] == [
        ("test/counting_and_probability/7.json", "counting_and_probability", "Level 3", "\\frac{1}{2}"),
        ("math_unknown_1", "unknown", "", "-2, 1")] and excluded == []
    src = tmp_path / "m.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in [math500, plain]))
    assert len(load_math(None, input_path=str(src))[0]) == 2
    assert [p.id for p in load_math(("counting_and_probability",), input_path=str(src))[0]] == [math500["unique_id"]]
    assert len(load_math(None, input_path=str(src), limit_per_subject=1)[0]) == 2


def test_hub_unreachable_fails_at_once(monkeypatch):
    import socket
    import time

    from sdpo_data.sources import load_records

    def no_dns(*args, **kwargs):
        raise socket.gaierror("Name or service not known")

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(socket, "getaddrinfo", no_dns)
    start = time.monotonic()
    with pytest.raises(ConnectionError, match="HF_HUB_OFFLINE"):
        load_records("EleutherAI/hendrycks_math", "algebra", "test")
    assert time.monotonic() - start < 5


def test_prepare_math_rows(tmp_path):
    src = tmp_path / "math.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    summary = prepare_math(("algebra", "prealgebra"), tmp_path / "out", input_path=str(src))
    assert summary["kept"] == {"algebra": 1, "prealgebra": 1} and len(summary["excluded"]) == 2
    rows = pd.read_parquet(summary["files"]["test"])
    assert list(rows["reward_model"].map(lambda r: r["ground_truth"])) == ["2", "\\frac{1}{2}"]
    assert set(rows["ability"]) == {"math"} and set(rows["data_source"]) == {"math"}
    assert "\\boxed{}" in rows.iloc[0]["prompt"][0]["content"]
    assert main(["math", "--subjects", "algebra", "--input", str(src), "--out-dir", str(tmp_path / "cli")]) == 0


def test_verl_rl_dataset_reads_prepared_lean_file(tmp_path, smollm2_tokenizer):
    from omegaconf import OmegaConf
    from verl.utils.dataset.rl_dataset import RLHFDataset

    src = tmp_path / "mini.jsonl"
    src.write_text(json.dumps({"name": "t1", "split": "test", "informal_prefix": "", "header": "import Mathlib\n\n",
                               "formal_statement": "theorem t1 : True := by\n"}) + "\n")
    files = prepare_lean("minif2f", str(src), "kimina", tmp_path / "out")["files"]
    tokenizer = smollm2_tokenizer
    config = OmegaConf.create({"prompt_key": "prompt", "max_prompt_length": 1024, "return_raw_chat": True,
                               "filter_overlong_prompts": False, "truncation": "error",
                               "cache_dir": str(tmp_path / "cache")})
    dataset = RLHFDataset(data_files=[files["test"]], tokenizer=tokenizer, config=config)
    item = dataset[0]
    assert len(dataset) == 1
    assert item["raw_prompt"][1]["content"].endswith("theorem t1 : True := by\n```\n")
    assert json.loads(item["reward_model"]["ground_truth"])["name"] == "t1"
    assert item["data_source"] == "minif2f" and item["extra_info"]["name"] == "t1"
