"""The REPL double against the upstream project's own test suite (protocol-level cases only).

REPL: leanprover-community/repl `test/*.in` / `*.expected.out` at tag v4.9.0 (d920817, the Lean our recipes pin)
and at master (8948401, toolchain v4.33.0-rc2); the double runs with `--lean-version` set to match. Inputs are
paraphrased, each case names its upstream file; only what does not need Lean to elaborate is checked (counters,
shapes, positions the double computes, error forms). The Kimina double's cases: test_fake_kimina_vs_upstream.py.

Not modelled (need Lean's elaboration, skipped): goals and `goal` texts, `#check`/`#print` data of Lean's own
constants, `unknown_tactic`, `invalid_tactic`, `tactic_sorry`, `tactic_mode_sorry`, `have_by_sorry`,
`no_goal_sorry*`, `sorry_hypotheses`, `incomplete`, `unfinished_tactic_block` (the `endPos: null` parse error),
`calc`, `by_cases`, `synthesize_placeholder`, `name_generator`, `trace_simp`, `options`, `def_eval`,
`app_type_mismatch*`, `self_proof_*`, `proof_branching*`, `proof_transitivity`, `assumption_proof`, `root_goals`,
`all_tactics*`, `file` (`tactics`), `infotree*` and Kimina's `test_infotree` tree, `pickle_open*`/
`pickle_scoped_notation*` (no expected output upstream), the messages of `invalid_line_break` and the first
`line_breaks` command, the unused-variable warning in `variables`, Kimina's `tests/match` Lean outputs (their
shapes are covered by tests/lean_env/testing/test_fake_kimina.py), `test_repl.py` (real processes), `tests/perfs`.
"""
import json
import subprocess
import sys

import pytest

V49, MASTER = "4.9.0", "4.33.0"
QUOTE = {V49: "'", MASTER: "`"}
BOTH = pytest.mark.parametrize("version", [V49, MASTER])


def repl(requests, version, raw=None):
    """Feed requests (objects, sent as JSON + blank line) or `raw` text to the REPL double -> (rc, answers)."""
    text = raw if raw is not None else "".join(json.dumps(r, ensure_ascii=False) + "\n\n" for r in requests)
    run = subprocess.run([sys.executable, "-m", "lean_env.testing.fake_repl", "--lean-version", version],
                         input=text, capture_output=True, text=True, timeout=60)
    return run.returncode, [json.loads(b) for b in run.stdout.split("\n\n") if b.strip()]


def p(line, column):
    return {"line": line, "column": column}


def sorry_warning(version, line, c0, c1):
    return {"severity": "warning", "pos": p(line, c0), "endPos": p(line, c1),
            "data": f"declaration uses {QUOTE[version]}sorry{QUOTE[version]}"}


# ---- leanprover-community/repl test/*.in ------------------------------------------------------------------------

@BOTH
def test_unknown_environment(version):
    # repl test/unknown_environment.in (v4.9.0 and master): {"cmd": "def f : Nat := by sorry", "env": 5}
    assert repl([{"cmd": "def f : Nat := by sorry", "env": 5}], version) == (0, [{"message": "Unknown environment."}])


@BOTH
def test_unknown_proof_state_and_sorry_listing(version):
    # repl test/unknown_proof_state.in: a `by sorry` def, then a tactic on proof state 1 (only 0 exists)
    rc, (cmd, err) = repl([{"cmd": "def f : Nat := by sorry"}, {"tactic": "exact 42", "proofState": 1}], version)
    assert rc == 0 and cmd["env"] == 0 and set(cmd) == {"env", "messages", "sorries"}
    (s,) = cmd["sorries"]
    assert set(s) == {"proofState", "pos", "goal", "endPos"}
    assert (s["proofState"], s["pos"], s["endPos"]) == (0, p(1, 18), p(1, 23))
    assert cmd["messages"] == [sorry_warning(version, 1, 4, 5)]
    assert err == {"message": "Unknown proof state."}


@BOTH
def test_readme_tactic_answers_numbering_and_proof_status(version):
    # repl test/readme.in: tactic answers are {proofState, goals} at v4.9.0; master adds `proofStatus`
    rc, (_, a, b) = repl([{"cmd": "def f (x : Unit) : Nat := by sorry"},
                          {"tactic": "apply Int.natAbs", "proofState": 0},
                          {"tactic": "exact -37", "proofState": 1}], version)
    assert rc == 0 and (a["proofState"], b["proofState"]) == (1, 2)
    keys = {"proofState", "goals"} | ({"proofStatus"} if version == MASTER else set())
    assert set(b) == keys and b["goals"] == []
    assert version == V49 or b["proofStatus"] == "Completed"


@BOTH
def test_term_sorry_and_dup_sorries_positions(version):
    # repl test/term_sorry.in and test/dup_sorries.in: sorry and warning positions, one proof state per sorry
    rc, (t,) = repl([{"cmd": "def f : Nat := sorry"}], version)
    assert t["sorries"][0]["pos"] == p(1, 15) and t["sorries"][0]["endPos"] == p(1, 20)
    assert t["messages"] == [sorry_warning(version, 1, 4, 5)]
    rc, (a, b) = repl([{"cmd": "theorem thm1 : 1 = 1 := sorry"},
                       {"cmd": "theorem thm2 : 2 = 2 := sorry", "env": 0}], version)
    assert rc == 0 and (a["env"], b["env"]) == (0, 1)
    assert [a["sorries"][0]["proofState"], b["sorries"][0]["proofState"]] == [0, 1]
    for ans in (a, b):
        assert (ans["sorries"][0]["pos"], ans["sorries"][0]["endPos"]) == (p(1, 24), p(1, 29))
        assert ans["messages"] == [sorry_warning(version, 1, 8, 12)]


@BOTH
def test_variables_sorry_warning_at_the_theorem_name(version):
    # repl test/variables.in: env chain 0 -> 1 -> 2; warning at `problem` (1:8-1:15), sorry at 3:2-3:7
    stmt = "theorem problem (h0 : f 5 = 3) :\n    ∃ (k : Nat), f 2015 = k := by\n  sorry"
    rc, ans = repl([{"cmd": "variable (x y : Nat)"}, {"cmd": "variable (f : Nat → Nat)", "env": 0},
                    {"cmd": stmt, "env": 1}], version)
    assert rc == 0 and [a["env"] for a in ans] == [0, 1, 2]
    assert ans[2]["messages"] == [sorry_warning(version, 1, 8, 15)]
    assert (ans[2]["sorries"][0]["pos"], ans[2]["sorries"][0]["endPos"]) == (p(3, 2), p(3, 7))


@BOTH
def test_dup_msg_check_positions_and_unknown_identifier(version):
    # repl test/dup_msg.in: `#check f` info sits on `#check` (1:0-1:6); `#check g` errors on `g` (1:7-1:8), worded
    # "unknown identifier 'g'" at v4.9.0 and "Unknown identifier `g`" at master. (The info's data needs Lean.)
    rc, (a, b, c) = repl([{"cmd": "theorem f : True := trivial"}, {"cmd": "#check f", "env": 0},
                          {"cmd": "#check g", "env": 1}], version)
    assert rc == 0 and [x["env"] for x in (a, b, c)] == [0, 1, 2] and "messages" not in a
    (info,) = b["messages"]
    assert (info["severity"], info["pos"], info["endPos"]) == ("info", p(1, 0), p(1, 6))
    word = "unknown identifier 'g'" if version == V49 else "Unknown identifier `g`"
    assert c["messages"] == [{"severity": "error", "pos": p(1, 7), "endPos": p(1, 8), "data": word}]


@BOTH
def test_import_answers_a_bare_env(version):
    # repl test/import_lean.in: {"cmd" : "import Lean"} -> {"env": 0}
    assert repl(None, version, raw='{"cmd" : "import Lean"}\n\n') == (0, [{"env": 0}])


def test_last_request_without_blank_line_or_newline_is_answered():
    # repl v4.9.0 test/enableInitializersExecution.in: the file ends without a newline; answer {"env": 0}
    assert repl(None, V49, raw='{"cmd": "import Lake open Lake DSL\\npackage REPL"}') == (0, [{"env": 0}])


@BOTH
def test_pickle_environment_counters(version, tmp_path):
    # repl test/pickle_environment.in and test/pickle_environment_with_imports.in (paths moved to tmp)
    a, b = str(tmp_path / "a.olean"), str(tmp_path / "b.olean")
    rc, ans = repl([{"cmd": "def f := 42"}, {"pickleTo": a, "env": 0}, {"unpickleEnvFrom": a},
                    {"cmd": "example : f = 42 := by rfl", "env": 1}], version)
    assert rc == 0 and ans == [{"env": 0}, {"env": 0}, {"env": 1}, {"env": 2}]
    rc, ans = repl([{"cmd": "import Lean"}, {"cmd": "def f := 42", "env": 0}, {"pickleTo": b, "env": 1},
                    {"unpickleEnvFrom": b}, {"cmd": "example : f = 42 := by rfl", "env": 2}], version)
    assert rc == 0 and ans == [{"env": 0}, {"env": 1}, {"env": 1}, {"env": 2}, {"env": 3}]


@BOTH
@pytest.mark.parametrize("with_env", [False, True])
def test_pickle_proof_state_counters(version, with_env, tmp_path):
    # repl test/pickle_proof_state_1.in (with_env False) and test/pickle_proof_state_env.in (True)
    c, d = str(tmp_path / "c.olean"), str(tmp_path / "d.olean")
    env = {"env": 0} if with_env else {}
    rc, ans = repl([{"cmd": "import Lean"}, {"cmd": "def f : Nat := by sorry", "env": 0},
                    {"pickleTo": c, "proofState": 0}, {"unpickleProofStateFrom": c, **env},
                    {"tactic": "have t : Nat := 42", "proofState": 2}, {"pickleTo": d, "proofState": 3},
                    {"unpickleProofStateFrom": d, **env}, {"tactic": "exact t", "proofState": 5}], version)
    assert rc == 0 and [a["env"] for a in ans[:2]] == [0, 1]
    assert [a["proofState"] for a in ans[2:]] == [1, 2, 3, 4, 5, 6]
    assert all(("proofStatus" in a) == (version == MASTER) for a in ans[2:])


def test_pickle_unknown_targets(tmp_path):
    # repl REPL/Main.lean (v4.9.0 and master) `pickleCommandSnapshot` / `pickleProofSnapshot`: note "proof State"
    rc, ans = repl([{"pickleTo": str(tmp_path / "x"), "env": 3}, {"pickleTo": str(tmp_path / "y"), "proofState": 0},
                    {"unpickleProofStateFrom": str(tmp_path / "y"), "env": 9}], V49)
    assert ans == [{"message": "Unknown environment."}, {"message": "Unknown proof State."},
                   {"message": "Unknown environment."}]


def test_request_form_precedence_pickle_before_cmd(tmp_path):
    # repl REPL/Main.lean `parse`: ProofStep, PickleEnvironment, … come before Command, unknown fields are ignored
    rc, ans = repl([{"cmd": "def g := 1"}, {"cmd": "def h := 2", "pickleTo": str(tmp_path / "e"), "env": 0},
                    {"cmd": "def k := 3", "env": 0, "gc": True}], V49)
    assert rc == 0 and ans == [{"env": 0}, {"env": 0}, {"env": 1}]


@pytest.mark.parametrize("bad", [{"cmd": 5}, {"cmd": "def x := 1", "env": -1}, {"cmd": "def x := 1", "env": "0"},
                                 {"tactic": "rfl", "proofState": "0"}, {"env": 0}, [1]])
def test_requests_of_no_form_kill_the_process(bad):
    # repl REPL/Main.lean `parse`: derived FromJson needs the field types; no form -> uncaught error, exit 1
    rc, ans = repl([{"cmd": "def a := 1"}, bad, {"cmd": "def b := 2"}], V49)
    assert rc == 1 and ans == [{"env": 0}]


def test_null_env_means_no_env():
    # repl REPL/JSON.lean: `env : Option Nat`; null is `none`
    assert repl([{"cmd": "def a := 1", "env": None}], V49) == (0, [{"env": 0}])


@BOTH
def test_a_second_blank_line_is_an_empty_request_that_kills_the_process(version):
    # repl REPL/Main.lean `getLines` returns the blank line itself, so "\n" reaches `Json.parse` and fails
    rc, ans = repl(None, version, raw='{"cmd": "def a := 1"}\n\n\n{"cmd": "def b := 2"}\n\n')
    assert rc == 1 and ans == [{"env": 0}]


def test_comment_requests_are_skipped():
    # repl REPL/Main.lean `loop`: requests starting with `#` or `--` are skipped
    raw = '-- a comment\n\n# another\n\n{"cmd": "def a := 1"}\n\n'
    assert repl(None, V49, raw=raw) == (0, [{"env": 0}])


def test_raw_newline_in_a_string_before_v4_22_is_malformed_json():
    # repl v4.9.0 `getLines` keeps each line's newline (trimming came with 19d4146, v4.22.0); Lean's JSON parser
    # rejects a raw control character in a string, so the request fails to parse and the process exits
    rc, ans = repl(None, V49, raw='{"cmd": "theorem foo : 1 = 1 := by\nsorry"}\n\n')
    assert rc == 1 and ans == []


def test_invalid_line_break_joins_lines_at_master():
    # repl master test/invalid_line_break.in: the lines are joined without newline ("bysorry": no sorry, envs 0, 1)
    rc, ans = repl(None, MASTER, raw='{"cmd": "theorem foo : 1 = 1 := by\nsorry"}\n\n'
                                     '{"cmd": "theorem bar : 1 = 1 := by\nrfl"}\n\n')
    assert rc == 0 and [a["env"] for a in ans] == [0, 1] and not any("sorries" in a for a in ans)


def test_line_breaks_escaped_newline_then_raw_newline():
    # repl master test/line_breaks.in (commands 2 and 3): "\n" escape then a raw line break
    raw = ('{"cmd": "theorem foo : 1 = 1 := by\\n\n  sorry"}\n\n'
           '{"cmd": "theorem bar : 1 = 1 := by\\n\n/- Some long comment here -/\\n\n  rfl"}\n\n')
    rc, (a, b) = repl(None, MASTER, raw=raw)
    assert (a["env"], b) == (0, {"env": 1})
    assert (a["sorries"][0]["pos"], a["sorries"][0]["endPos"]) == (p(2, 2), p(2, 7))
    assert a["messages"] == [sorry_warning(MASTER, 1, 8, 11)]


@BOTH
def test_file_mode_env(version, tmp_path):
    # repl master test/file_env.in: {"path", "env": 1} runs the file on env 1 (two `#check` infos at 1:0 and 3:0);
    # at v4.9.0 `processFile` sets `env := none`, so the names are unknown there
    lean = tmp_path / "file_env.lean"
    lean.write_text("#check demo\n\n#check f\n")
    rc, ans = repl([{"cmd": "def f : Nat := 1"}, {"cmd": "theorem demo (a b: Nat): a + b = b + a := by rfl", "env": 0},
                    {"path": str(lean), "env": 1}], version)
    assert rc == 0 and [a["env"] for a in ans] == [0, 1, 2]
    msgs = ans[2]["messages"]
    if version == MASTER:
        assert [(m["severity"], m["pos"], m["endPos"]) for m in msgs] == [("info", p(1, 0), p(1, 6)),
                                                                            ("info", p(3, 0), p(3, 6))]
    else:
        assert [m["severity"] for m in msgs] == ["error", "error"]
