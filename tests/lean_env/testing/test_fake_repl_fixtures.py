"""The REPL double against the real REPL's recorded transcripts (../shared/fixtures/lean_repl)."""
import glob
import json
import os
import subprocess
import sys

import pytest

from lean_env.testing.leanjson import pretty

MASTER = ["--lean-version", "4.33.0"]   # the transcripts are repl master's (toolchain v4.33.0-rc2)
FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "shared", "fixtures", "lean_repl")
PAIRS = sorted(p[: -len(".expected.out")]
               for p in glob.glob(os.path.join(FIXTURES, "**", "*.expected.out"), recursive=True))
needs_fixtures = pytest.mark.skipif(not PAIRS, reason="../shared/fixtures absent")


def _blocks(text):
    return [b for b in text.split("\n\n") if b.strip()]


@needs_fixtures
def test_pretty_printer_reproduces_every_real_answer_byte_for_byte():
    n = 0
    for base in PAIRS:
        for block in _blocks(open(base + ".expected.out").read()):
            assert pretty(json.loads(block)) == block.strip("\n"), base
            n += 1
    assert n > 150


@needs_fixtures
def test_framing_and_env_counters_match_real_transcripts():
    """Same number of answers, and the same `env` numbers, for every transcript the double can
    follow (pickling and file mode excluded: they need files the transcripts do not carry)."""
    checked = 0
    for base in PAIRS:
        request_text = open(base + ".in").read()
        if any(k in request_text for k in ("pickle", '"path"')):
            continue
        expected = [json.loads(b) for b in _blocks(open(base + ".expected.out").read())]
        run = subprocess.run([sys.executable, "-m", "lean_env.testing.fake_repl", *MASTER], input=request_text,
                             capture_output=True, text=True, timeout=60)
        assert run.returncode == 0, (base, run.stderr)
        assert run.stdout.endswith("\n\n") or not run.stdout
        got = [json.loads(b) for b in _blocks(run.stdout)]
        assert len(got) == len(expected), base
        for g, e in zip(got, expected):
            assert ("env" in g) == ("env" in e) or "proofStatus" in e, (base, g, e)
            if "env" in e:
                assert g["env"] == e["env"], (base, g, e)
            if "message" in e and "env" not in e and e["message"].startswith("Unknown"):
                assert g == e, base
        checked += 1
    assert checked > 40


def test_malformed_json_exits_nonzero_with_nothing_on_stdout():
    run = subprocess.run([sys.executable, "-m", "lean_env.testing.fake_repl"], input='{"cmd": \n\n',
                         capture_output=True, text=True, timeout=30)
    assert run.returncode == 1 and run.stdout == "" and run.stderr


def test_line_joining_and_comment_skipping():
    text = '-- a comment request\n\n{"cmd": "theorem foo : 1 = 1 := by\nsorry"}\n\n{"cmd": "def x := 1", "env": 0}\n'
    run = subprocess.run([sys.executable, "-m", "lean_env.testing.fake_repl", *MASTER], input=text,
                         capture_output=True, text=True, timeout=30)
    got = [json.loads(b) for b in _blocks(run.stdout)]
    assert [g["env"] for g in got] == [0, 1]
    assert "sorries" not in got[0]   # "bysorry" after joining, as in the real REPL


def test_semantic_rules_and_axiom_audit():
    rules = json.dumps([{"match": "nlinarith", "outcome": "error", "message": "linarith failed", "line": 2, "col": 2},
                        {"match": "cheat_tac", "outcome": "axiom", "axioms": ["myAxiom"]}])
    reqs = [{"cmd": "import Mathlib"},
            {"cmd": "theorem a : True := by\n  nlinarith\n\n#print axioms a", "env": 0},
            {"cmd": "theorem b : True := by\n  cheat_tac\n\n#print axioms b", "env": 0},
            {"cmd": "#print axioms zzz", "env": 0}]
    text = "".join(json.dumps(r) + "\n\n" for r in reqs)
    run = subprocess.run([sys.executable, "-m", "lean_env.testing.fake_repl", "--rules", rules, "--sorry-quote", "'"],
                         input=text, capture_output=True, text=True, timeout=30)
    got = [json.loads(b) for b in _blocks(run.stdout)]
    assert got[1]["messages"][0] == {"severity": "error", "pos": {"line": 2, "column": 2},
                                     "endPos": {"line": 2, "column": 11}, "data": "linarith failed"}
    assert "sorryAx" in got[1]["messages"][-1]["data"]
    assert "myAxiom" in got[2]["messages"][-1]["data"]
    assert got[3]["messages"][0]["severity"] == "error" and "Unknown constant" in got[3]["messages"][0]["data"]
