import glob
import json
import os
import random

import pytest

from lean_env import (
    LeanMessage,
    Outcome,
    RunResult,
    Verdict,
    build_check,
    judge,
    parse_statement,
    render_feedback,
    screen,
)
from lean_env.backends.common import parse_repl_response
from lean_env.judge import parse_audit

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "fixtures")
STATEMENT = "theorem t1 (x : ℝ) (h : x = 2) : x + 1 = 3 := by\n"


@pytest.fixture
def plan(answer):
    return build_check(screen(STATEMENT, answer("subst h\n  norm_num\n  linarith")))


def _msg(sev, line, text, col=2):
    return LeanMessage(sev, line, col, line, col + 3, text)


def _audit(plan, axioms="propext, Classical.choice, Quot.sound"):
    return _msg("info", plan.audit_line, f"'{plan.audited}' depends on axioms: [{axioms}]", col=0)


def _result(*messages, n_sorries=0, outcome=Outcome.OK, repl_error=None):
    return RunResult("x", outcome, 0.1, tuple(messages), n_sorries, repl_error=repl_error)


def test_statement_check_reference_shares_a_trailing_open_in_of_the_preamble(answer):
    st_ = "open Real in\ntheorem t3 : Real.pi > 3 := by\n"
    plan = build_check(screen(st_, "```lean4\ntheorem t3 : Real.pi > 3 := by\n  exact Real.pi_gt_three\n```"))
    body = plan.snippet.body
    assert "open Real in\naxiom sdpo_ref_" in body and "\nopen Real in\ntheorem t3" in body
    assert body.split("\n")[plan.visible_offset].startswith("theorem t3 : Real.pi > 3 :=")
    check = body.split("\n")[plan.check_line - 1]
    assert check.startswith(f"set_option maxHeartbeats 400000 in theorem _root_.{plan.audited} : "
                            "type_of% @_root_.sdpo_ref_")
    assert check.endswith(" := @_root_.t3")
    assert plan.audit_line == plan.check_line + 1 == body.count("\n")   # the audit is the last line


def test_open_in_on_the_statements_own_line_prefixes_reference_and_theorem():
    st_ = "open Real in theorem t3 : Real.pi > 3 := by\n"
    assert parse_statement(st_).preamble == "open Real in "
    assert parse_statement("@[simp] theorem t3 : True := by\n").preamble == ""   # never an attribute of the reference
    plan = build_check(screen(st_, "```lean4\ntheorem t3 : Real.pi > 3 := by\n  exact Real.pi_gt_three\n```"))
    body = plan.snippet.body
    assert "open Real in \naxiom sdpo_ref_" in body and "\nopen Real in \ntheorem t3" in body


def test_statements_open_in_still_prefixes_the_theorem_after_model_helpers():
    st_ = "open Real in\ntheorem t3 : Real.pi > 3 := by\n"
    out = "```lean4\nlemma aux : (1 : ℕ) = 1 := rfl\n\ntheorem t3 : Real.pi > 3 := by\n  exact Real.pi_gt_three\n```"
    plan = build_check(screen(st_, out))
    lines = plan.snippet.body.split("\n")
    assert lines[plan.visible_offset] == "lemma aux : (1 : ℕ) = 1 := rfl"   # feedback line 1 is still the model's
    theorem = next(i for i, ln in enumerate(lines) if ln.startswith("theorem t3"))
    reference = next(i for i, ln in enumerate(lines) if ln.startswith("axiom sdpo_ref_"))
    assert lines[theorem - 1] == "open Real in" and lines[reference - 1] == "open Real in"
    assert plan.visible_source.splitlines()[theorem - plan.visible_offset - 1] == "open Real in"
    assert lines[plan.audit_line - 1] == f"#print axioms _root_.{plan.audited}"


def test_assembled_file_uses_trusted_header_dataset_statement_and_audit(plan):
    s = plan.snippet
    assert s.header == "import Mathlib\nimport Aesop\n"
    body_lines = s.body.split("\n")
    assert body_lines[plan.audit_line - 1] == f"#print axioms _root_.{plan.audited}"
    assert body_lines[plan.visible_offset] == STATEMENT.rstrip("\n")
    assert "open BigOperators Real Nat Topology Rat" in s.body.split(STATEMENT)[0]


@pytest.mark.parametrize("quote", ["'", "`"])
def test_sorry_warning_in_both_quoting_styles(plan, quote):
    warning = _msg("warning", plan.visible_offset + 1, f"declaration uses {quote}sorry{quote}")
    j = judge(_result(warning, _audit(plan)), plan)
    assert j.verdict is Verdict.SORRY


def test_verdict_table(plan):
    audit = _audit(plan)
    err = _msg("error", plan.visible_offset + 3, "linarith failed\nx : ℝ\n⊢ False")
    cases = [
        (_result(audit), Verdict.VALID),
        (_result(_msg("warning", 3, "unused variable"), audit), Verdict.VALID),
        (_result(err, audit), Verdict.LEAN_ERROR),
        (_result(audit, n_sorries=1), Verdict.SORRY),
        (_result(_audit(plan, "propext, sorryAx")), Verdict.SORRY),
        (_result(_audit(plan, "propext, cheat")), Verdict.FORBIDDEN),
        (_result(_audit(plan, "propext, Lean.ofReduceBool")), Verdict.FORBIDDEN),
        (_result(_msg("info", plan.audit_line, f"'{plan.audited}' does not depend on any axioms", col=0)),
         Verdict.VALID),
        (_result(_msg("error", plan.audit_line, f"Unknown constant `{plan.audited}`", col=15)),
         Verdict.STATEMENT_MISMATCH),
        (_result(), Verdict.FORBIDDEN),   # audit silently missing
        (_result(outcome=Outcome.TIMEOUT), Verdict.TIMEOUT),
        (_result(outcome=Outcome.INFRA), Verdict.INFRA),
        (_result(repl_error="Unknown environment."), Verdict.INFRA),
    ]
    for result, verdict in cases:
        assert judge(result, plan).verdict is verdict, (result, verdict)


def test_parse_audit_handles_wrapping_quotes_in_names_and_none():
    assert parse_audit("'a' depends on axioms: [propext,\n Classical.choice,\n Quot.sound]") == (
        "a", ("propext", "Classical.choice", "Quot.sound"))
    assert parse_audit("'a'' does not depend on any axioms") == ("a'", ())
    assert parse_audit("'Foo.a' depends on axioms: [propext]") == ("Foo.a", ("propext",))
    assert parse_audit("hello") is None
    assert parse_audit("'a' depends on axioms: [propext]\n'b' does not depend on any axioms") is None


def test_feedback_lines_relative_to_visible_code_with_context_and_goal(plan):
    err = _msg("error", plan.visible_offset + 3, "linarith failed\nx : ℝ\n⊢ False")
    fb = render_feedback(judge(_result(err, _audit(plan)), plan), plan)
    assert "error at line 3, column 2" in fb and "⊢ False" in fb
    assert ">   3 |   norm_num" in fb and "    2 |   subst h" in fb and "    1 | theorem t1" in fb


def test_feedback_capped_deterministic_and_empty_for_valid_and_infra(plan):
    errs = [_msg("error", plan.visible_offset + 1 + i % 4, "bad " + "x" * 2000, col=i) for i in range(30)]
    j = judge(_result(*errs, _audit(plan)), plan)
    fb = render_feedback(j, plan, max_errors=3, max_chars=2500)
    assert fb.count("error at line") == 3 and len(fb) <= 2500 and "more error(s) not shown" in fb
    shuffled = errs[:]
    random.Random(0).shuffle(shuffled)
    assert render_feedback(judge(_result(*shuffled, _audit(plan)), plan), plan, max_errors=3, max_chars=2500) == fb
    assert render_feedback(judge(_result(_audit(plan)), plan), plan) == ""
    assert render_feedback(judge(_result(outcome=Outcome.INFRA), plan), plan) == ""
    assert render_feedback(judge(_result(outcome=Outcome.TIMEOUT), plan), plan) == ""


def _real_blocks():
    for path in sorted(glob.glob(os.path.join(FIXTURES, "lean_repl", "**", "*.expected.out"), recursive=True)):
        for block in open(path).read().split("\n\n"):
            if block.strip():
                yield path, json.loads(block)


def test_real_repl_answers_decode_and_judge_sorry_warnings():
    blocks = list(_real_blocks())
    if not blocks:
        pytest.skip("../shared/fixtures absent")
    n_sorry_warnings = 0
    for path, obj in blocks:
        if "proofStatus" in obj:
            continue
        r = parse_repl_response("x", obj, 0.0)
        assert r.outcome is Outcome.OK, (path, r)
        if "env" not in obj:
            assert r.repl_error == obj["message"]
            continue
        assert len(r.messages) == len(obj.get("messages", [])) and r.n_sorries == len(obj.get("sorries", []))
        if any("declaration uses `sorry`" in m["data"] for m in obj.get("messages", [])):
            n_sorry_warnings += 1
            errors = [m for m in r.messages if m.severity == "error"]
            plan_like = type("P", (), {"audit_line": -1, "check_line": None, "name": "x"})()
            assert judge(r, plan_like).verdict in ((Verdict.LEAN_ERROR,) if errors else (Verdict.SORRY,))
    assert n_sorry_warnings > 20


def test_feedback_total_cap_drops_whole_errors(plan):
    errs = [_msg("error", plan.visible_offset + 1, f"bad{i} " + "x" * 500, col=i) for i in range(5)]
    fb = render_feedback(judge(_result(*errs, _audit(plan)), plan), plan, max_chars=1200)
    assert len(fb) <= 1200 and "more error(s) not shown" in fb and 1 <= fb.count("error at line") < 5
