"""Data preparation a newcomer can act on: 0 rows name the filter, stale split files go, input errors name
`--input` and the dataset card."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from sdpo_data import sources
from sdpo_data.prepare import main

STATEMENT = "theorem good_a (x : ℕ) (h : x = 2) : x + 1 = 3 := by\n"


def _jsonl(path, rows):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def _lean(src, out, dataset="minif2f"):
    return main(["lean", "--dataset", dataset, "--input", src, "--prompt-style", "kimina", "--out-dir", str(out)])


def test_zero_lean_rows_is_an_error_naming_the_screen(tmp_path, capsys):
    src = _jsonl(tmp_path / "in.jsonl", [{"name": "good_a", "split": "train", "formal_statement": STATEMENT}])
    assert _lean(src, tmp_path / "out") == 2
    err = capsys.readouterr().err
    assert "0 of 1 records pass the minif2f screen" in err and "unknown split" in err and "'train'" in err
    assert "--input" in err and "datasets/minif2f.md" in err
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())


def test_zero_math_rows_is_an_error_naming_the_subject_filter(tmp_path, capsys):
    src = _jsonl(tmp_path / "math.jsonl", [{"problem": "1+1?", "answer": "2", "subject": "algebra"}])
    assert main(["math", "--subjects", "geometry", "--input", src, "--out-dir", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "0 MATH problems" in err and "--subjects geometry" in err and "datasets/math.md" in err
    assert not (tmp_path / "out" / "math_test.parquet").exists()


def test_a_split_with_no_rows_now_loses_its_file_from_an_earlier_run(tmp_path, capsys):
    out = tmp_path / "out"
    both = [{"name": "good_a", "split": "valid", "formal_statement": STATEMENT},
            {"name": "good_b", "split": "test", "formal_statement": "theorem good_b : True := by\n"}]
    assert _lean(_jsonl(tmp_path / "both.jsonl", both), out) == 0
    assert (out / "minif2f_kimina_test.parquet").exists()
    assert _lean(_jsonl(tmp_path / "valid.jsonl", both[:1]), out) == 0
    assert not (out / "minif2f_kimina_test.parquet").exists()   # the recipes would validate on stale rows
    valid = pd.read_parquet(out / "minif2f_kimina_valid.parquet")
    assert list(valid["extra_info"].map(lambda e: e["name"])) == ["good_a"]
    assert f"removed {out / 'minif2f_kimina_test.parquet'}" in capsys.readouterr().out


def test_an_unreadable_input_names_the_flag_and_the_card(tmp_path, capsys):
    assert _lean(str(tmp_path / "absent.jsonl"), tmp_path / "out", dataset="proofnet") == 2
    err = capsys.readouterr().err
    assert f"--input {tmp_path / 'absent.jsonl'}" in err and "datasets/proofnet.md" in err


@pytest.mark.parametrize("record", [[1, 2], "a string", 7])
def test_a_record_that_is_not_an_object_is_one_error_line_not_a_traceback(tmp_path, capsys, record):
    src = _jsonl(tmp_path / "in.jsonl", [{"name": "good_a", "split": "valid", "formal_statement": STATEMENT}, record])
    assert _lean(src, tmp_path / "out") == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: --input {src}: record 2 is a JSON {type(record).__name__}, not an object")
    assert "datasets/minif2f.md" in err and "Traceback" not in err


def test_a_hub_failure_names_the_flag_and_the_card(tmp_path, monkeypatch, capsys):
    def offline(*args, **kwargs):
        raise ConnectionError("Couldn't reach 'owner/minif2f' on the Hub (LocalEntryNotFoundError)")

    monkeypatch.setattr(sources, "_load_hub", offline)
    assert _lean("owner/minif2f", tmp_path / "out") == 2
    err = capsys.readouterr().err
    assert "--input owner/minif2f: ConnectionError" in err and "datasets/minif2f.md" in err
    assert main(["math", "--subjects", "algebra", "--out-dir", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "EleutherAI/hendrycks_math from the Hugging Face hub" in err and "--input FILE" in err
    assert "datasets/math.md" in err


@pytest.mark.parametrize("card", ["minif2f", "proofnet", "math"])
def test_the_named_cards_exist(card):
    from pathlib import Path

    assert (Path(__file__).resolve().parents[2] / "datasets" / f"{card}.md").exists()
