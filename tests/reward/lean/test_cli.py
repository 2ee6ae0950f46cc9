import json
import sys

from reward.lean.cli import main

STATEMENT = "theorem t1 (x : ℝ) (h : x = 2) : x + 1 = 3 := by\n"


def test_cli_writes_verdicts_and_prints_table(tmp_path, capsys, answer):
    inp = tmp_path / "in.jsonl"
    rows = [{"name": "t1", "formal_statement": STATEMENT, "output": answer(p)} for p in ["norm_num", "sorry"]]
    rows.append({"ground_truth": json.dumps({"formal_statement": STATEMENT}), "output": "```lean4\n"})
    inp.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out.jsonl"
    rc = main(["verify", str(inp), "--out", str(out), "--backend", "repl",
               "--repl-command", f"{sys.executable} -m lean_env.testing.fake_repl", "--num-repls", "2"])
    assert rc == 0
    got = [json.loads(line) for line in out.read_text().splitlines()]
    assert [g["verdict"] for g in got] == ["valid", "sorry", "truncated"]
    assert got[0]["output"] == rows[0]["output"]
    printed = capsys.readouterr().out
    assert "valid" in printed and "total" in printed and "3" in printed


def test_cli_memory_limits_are_numbers_not_strings(tmp_path, answer):
    """--mem-limit-mb / --max-rss-mb default to None in the config; parsed as text they made every sample infra."""
    inp = tmp_path / "in.jsonl"
    inp.write_text(json.dumps({"name": "t1", "formal_statement": STATEMENT, "output": answer("norm_num")}) + "\n")
    out = tmp_path / "out.jsonl"
    rc = main(["verify", str(inp), "--out", str(out), "--backend", "repl", "--mem-limit-mb", "8000",
               "--max-rss-mb", "6000", "--repl-command", f"{sys.executable} -m lean_env.testing.fake_repl"])
    assert rc == 0
    (got,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert got["verdict"] == "valid" and got["infra"] == 0
