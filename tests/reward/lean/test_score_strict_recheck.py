"""Strict mode (`strict_recheck: true`): every proof the fast path pays is re-checked by an external kernel tool in a
separate process (`lean_env.recheck.online`), here the fake REPL for the fast path and the fake tools of
`lean_env.testing.fake_lean_tools`. A rejection scores 0, a tool failure is masked infra, nothing else changes."""
import json
import sys
from functools import partial

import pytest

import reward.lean.score as rl
from lean_env.options import LeanOptions, RecheckOptions
from tests.reward.lean.lean_scores import score_all

STATEMENT = "theorem t1 (x : ℝ) (h : x = 2) : x + 1 = 3 := by\n"
GT = json.dumps({"name": "t1", "formal_statement": STATEMENT, "header": "import Mathlib\n\nopen Real\n"})
RULES = json.dumps([{"match": "nlinarith", "outcome": "error", "message": "linarith failed"}])
REPL = dict(backend="repl", repl_command=f"{sys.executable} -m lean_env.testing.fake_repl --rules '{RULES}'",
            timeout_s=5.0, backoff_s=0.01)


score = partial(score_all, GT)


def leftovers(project):
    return [p for p in project.rglob("*") if p.is_file() and p.name != "lakefile.toml"]


@pytest.mark.parametrize("tool", ["safeverify", "lean4checker", "comparator"])
def test_a_confirmed_proof_is_paid_and_its_files_are_removed(recheck_tools, answer, tool):
    paths, root = recheck_tools
    command = str(paths["safe_verify" if tool == "safeverify" else tool])
    (d,) = score([answer("subst h\n  norm_num")], **REPL, strict_recheck=True, recheck_tool=tool,
                 recheck_project=str(root), recheck_command=command)
    assert d["verdict"] == "valid" and d["score"] == 1.0 and d["infra"] == 0.0
    assert [p for p in leftovers(root) if "Strict" in str(p)] == []


def test_a_proof_the_tool_rejects_scores_zero_with_the_reason_as_feedback(recheck_tools, answer):
    paths, root = recheck_tools
    (d,) = score([answer("subst h\n  norm_num -- fake:mismatch")], **REPL, strict_recheck=True,
                 recheck_project=str(root), recheck_command=str(paths["safe_verify"]))
    assert d["verdict"] == "forbidden" and d["score"] == 0.0 and d["infra"] == 0.0
    assert "kernel re-check (safeverify) rejected" in d["feedback"] and "SafeVerify check failed" in d["feedback"]
    (off,) = score([answer("subst h\n  norm_num -- fake:mismatch")], **REPL)   # the fast path alone pays it
    assert off["verdict"] == "valid"


@pytest.mark.parametrize("setting", [dict(recheck_command="/nonexistent/safe_verify"),
                                     dict(recheck_tool="comparator", recheck_timeout_s=1.0)])
def test_a_tool_that_gives_no_verdict_makes_the_sample_masked_infra(recheck_tools, answer, setting):
    paths, root = recheck_tools
    setting = {"recheck_command": str(paths["comparator"]), **setting}
    proof = "subst h\n  norm_num -- fake:hang" if setting.get("recheck_tool") == "comparator" else "subst h\n  norm_num"
    (d,) = score([answer(proof)], **REPL, strict_recheck=True, recheck_project=str(root), **setting)
    assert d["verdict"] == "infra" and d["infra"] == 1.0 and d["score"] == 0.0 and d["feedback"] == ""


@pytest.mark.parametrize("tool, marker, verdict", [
    ("safeverify", "fake:mismatch", "forbidden"), ("lean4checker", "fake:tamper", "forbidden"),
    ("comparator", "fake:axiom", "forbidden"), ("comparator", "fake:crash", "infra"),
    ("comparator", "fake:hang", "infra"), ("safeverify", "fake:no-olean", "infra"),
])
def test_a_rejected_or_failed_recheck_leaves_none_of_its_files(recheck_tools, answer, tool, marker, verdict):
    paths, root = recheck_tools
    command = str(paths["safe_verify" if tool == "safeverify" else tool])
    (d,) = score([answer(f"subst h\n  norm_num -- {marker}")], **REPL, strict_recheck=True, recheck_tool=tool,
                 recheck_project=str(root), recheck_command=command, recheck_timeout_s=1.0)
    assert d["verdict"] == verdict and d["score"] == 0.0 and d["infra"] == float(verdict == "infra")
    assert leftovers(root) == []


def test_only_valid_proofs_are_rechecked(recheck_tools, answer):
    _, root = recheck_tools
    outs = score([answer("nlinarith [h]"), answer("sorry")], **REPL, strict_recheck=True,
                 recheck_project=str(root), recheck_command="/nonexistent/tool")   # a run would be infra
    assert [d["verdict"] for d in outs] == ["lean_error", "sorry"] and leftovers(root) == []


def test_strict_mode_options_are_checked_at_start():
    assert LeanOptions().recheck.strict_recheck is False
    with pytest.raises(ValueError, match="recheck_project"):
        RecheckOptions(strict_recheck=True)
    with pytest.raises(ValueError, match="recheck_tool"):
        RecheckOptions(recheck_tool="leanchecker")
    with pytest.raises(ValueError, match="comparator"):
        RecheckOptions(recheck_tool="comparator", recheck_workers=2)
    with pytest.raises(ValueError, match="true or false"):
        rl.resolve_config(strict_recheck="false")
    with pytest.raises(ValueError, match="max_heartbeats"):
        rl.resolve_config(max_heartbeats=-1)
    assert rl.resolve_config(max_heartbeats=0).check.max_heartbeats == 0
