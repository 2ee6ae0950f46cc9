"""The discovery and pass@k reports re-check what they count out of process (`sdpo_eval.report_recheck`), against the
fake comparator of `lean_env.testing.fake_lean_tools` (no Lean): a proof the fast path accepted and the re-check
rejects is a cheat, not a discovery; a re-check without a verdict is unverified, never a cheat; on by default."""
from __future__ import annotations

import json
import sys

import pandas as pd
import pytest

import reward.lean.score
import sdpo_eval.discovery.cli as discovery
import sdpo_eval.prover_eval as prover_eval
from sdpo_data.prepare import prepare_lean
from sdpo_eval.engines import Completion, ModelSpec, SamplingParams
from sdpo_eval.report_recheck import ReportRecheck, recheck_discovery, reference_tasks

HEADER = "import Mathlib\n\n"
FAKE_REPL = f"{sys.executable} -m lean_env.testing.fake_repl"


def proof(name: str, marker: str = "") -> str:
    """A model answer proving `theorem <name> : True`; a `-- fake:<what>` marker makes the fake comparator fail:
    mismatch (statements differ: a cheat the fast path paid), crash (the tool dies: no verdict)."""
    comment = f"  -- fake:{marker}\n" if marker else ""
    return f"<think>ok</think>\n```lean4\ntheorem {name} : True := by\n{comment}  trivial\n```"


@pytest.fixture
def data(tmp_path):
    src = tmp_path / "mini.jsonl"
    rows = [{"name": n, "split": "test", "informal_prefix": "", "header": HEADER,
             "formal_statement": f"theorem {n} : True := by\n"} for n in ("p1", "p2")]
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return prepare_lean("minif2f", str(src), "kimina", tmp_path / "prep")["files"]["test"]


def rec(method, problem, attempt, marker=None, run_id=None):
    """An attempt record; `marker` None: a failed attempt, else valid on the fast path with that proof."""
    valid = marker is not None
    return {"problem": problem, "method": method, "run_id": run_id or f"{method}-{problem}", "step": attempt,
            "attempt": attempt, "seed": 0, "response_tokens": 5, "verdict": "valid" if valid else "lean_error",
            "score": float(valid), "infra": 0, **({"proof": proof(problem, marker)} if valid else {})}


def runs():
    """sdpo p1: a cheat at 2, an honest proof at 5; sdpo p2: a cheat at 1, then the run stopped (stop on success);
    best_of_k p1: honest at 3; best_of_k p2: nothing in 4."""
    return ([rec("sdpo", "p1", 1), rec("sdpo", "p1", 2, "mismatch"), rec("sdpo", "p1", 3), rec("sdpo", "p1", 4),
             rec("sdpo", "p1", 5, ""), rec("sdpo", "p2", 1, "mismatch")]
            + [rec("best_of_k", "p1", a, "" if a == 3 else None) for a in (1, 2, 3)]
            + [rec("best_of_k", "p2", a) for a in range(1, 5)])


def write_log(tmp_path, records):
    log = tmp_path / "attempts.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    return log


def report_argv(log, data, project, *extra):
    return ["report", "--log", str(log), "--budget", "8", "--n-boot", "50", "--data", str(data),
            "--recheck-project", str(project), "--recheck-tool", "comparator", *extra]


def test_discovery_report_counts_a_cheat_the_fast_path_paid_as_a_cheat_not_a_discovery(tmp_path, data,
                                                                                        recheck_tools, capsys):
    log = write_log(tmp_path, runs())
    assert discovery.main(report_argv(log, data, recheck_tools[1])) == 0
    report = json.loads((tmp_path / "discovery.json").read_text())
    sdpo = report["methods"]["sdpo"]
    assert sdpo["first_success"] == {"p1": [5], "p2": [None]}       # the fast path alone: p1 at 2, p2 at 1
    assert sdpo["solved_runs"] == 1 and sdpo["reached"] == {"p1": 8, "p2": 1}   # p2's run stopped at its cheat
    block = report["recheck"]
    assert (block["status"], block["tool"], block["checked"], block["confirmed"]) == ("done", "comparator", 4, 2)
    assert [(c["method"], c["problem"], c["attempt"]) for c in block["cheats"]] == [("sdpo", "p1", 2),
                                                                                    ("sdpo", "p2", 1)]
    assert "statement do not match" in block["cheats"][0]["message"] and block["unverified"] == []
    assert "- cheat: sdpo p1 seed 0 attempt 2" in (tmp_path / "discovery.md").read_text()
    assert "4 counted proofs, 2 confirmed, 2 cheats, 0 unverified" in capsys.readouterr().out


def test_an_infra_failure_of_the_recheck_is_unverified_never_a_cheat_and_fails_closed(tmp_path, data,
                                                                                       recheck_tools, capsys):
    records = runs()
    records[1] = rec("sdpo", "p1", 2, "crash")             # the tool dies on the run's first success
    log = write_log(tmp_path, records)
    assert discovery.main(report_argv(log, data, recheck_tools[1])) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: 1 counted proofs got no re-check verdict")
    assert "--recheck-project" in err and "--no-recheck" in err
    report = json.loads((tmp_path / "discovery.json").read_text())
    block = report["recheck"]
    assert block["status"] == "incomplete" and [c["problem"] for c in block["cheats"]] == ["p2"]
    assert [(u["problem"], u["attempt"]) for u in block["unverified"]] == [("p1", 2)]
    # neither a discovery nor a failure: the run is known up to the attempt before it
    sdpo = report["methods"]["sdpo"]
    assert sdpo["first_success"]["p1"] == [None] and sdpo["reached"]["p1"] == 1


def test_a_missing_tool_is_unverified_too(tmp_path, data, recheck_tools, capsys):
    log = write_log(tmp_path, runs())
    argv = report_argv(log, data, recheck_tools[1], "--recheck-command", str(tmp_path / "no_such_comparator"))
    assert discovery.main(argv) == 1
    block = json.loads((tmp_path / "discovery.json").read_text())["recheck"]
    assert block["cheats"] == [] and len(block["unverified"]) == 3   # each run's first success, none moved on


@pytest.mark.parametrize("extra, message", [
    ([], "pass --data (the prepared parquet the runs used), or --no-recheck"),
    (["--data", "DATA"], "needs a Lean project: --recheck-project DIR"),
    (["--data", "DATA", "--recheck-project", "PROJECT", "--recheck-tool", "lean4checker"],
     "recheck_tool lean4checker recompiles the checked file"),
])
def test_the_recheck_is_on_by_default_and_its_settings_are_named(tmp_path, data, recheck_tools, capsys, extra,
                                                                  message):
    log = write_log(tmp_path, runs())
    extra = [str(data) if a == "DATA" else str(recheck_tools[1]) if a == "PROJECT" else a for a in extra]
    assert discovery.main(["report", "--log", str(log), "--budget", "8", *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and "--no-recheck" in err and err.count("\n") == 1
    assert not (tmp_path / "discovery.json").exists()


def test_no_recheck_marks_the_report_as_not_rechecked(tmp_path, capsys):
    log = write_log(tmp_path, runs())
    assert discovery.main(["report", "--log", str(log), "--budget", "8", "--n-boot", "50", "--no-recheck"]) == 0
    report = json.loads((tmp_path / "discovery.json").read_text())
    assert report["recheck"]["status"] == "off" and report["methods"]["sdpo"]["first_success"]["p1"] == [2]
    assert "not re-checked (--no-recheck)" in (tmp_path / "discovery.md").read_text()


def test_problems_that_are_not_lean_are_listed_and_need_no_lean_project(tmp_path, capsys):
    """The demo's addition rows (ability `arithmetic`) have no statement to re-check against."""
    parquet = tmp_path / "addition.parquet"
    pd.DataFrame([{"data_source": "sdpo_demo_addition", "ability": "arithmetic", "prompt": [],
                   "reward_model": {"style": "rule", "ground_truth": str(12 + i)},
                   "extra_info": {"name": f"add_{i}", "split": "train", "index": i}} for i in range(2)]
                 ).to_parquet(parquet)
    records = [dict(rec(m, f"add_{i}", 1, ""), proof="12") for m in ("sdpo", "best_of_k") for i in range(2)]
    log = write_log(tmp_path, records)
    assert discovery.main(["report", "--log", str(log), "--budget", "8", "--n-boot", "50", "--data",
                           str(parquet)]) == 0
    report = json.loads((tmp_path / "discovery.json").read_text())
    assert report["recheck"]["not_lean"] == ["add_0", "add_1"] and report["recheck"]["checked"] == 0
    assert report["methods"]["sdpo"]["first_success"] == {"add_0": [1], "add_1": [1]}


def test_a_problem_without_a_reference_statement_is_an_error(data):
    tasks = reference_tasks([data])
    with pytest.raises(ValueError, match="no reference statement for p3 in --data"):
        recheck_discovery([rec("sdpo", "p3", 1, "")], 8, tasks, lambda: pytest.fail("no tool needed"))


# ------------------------------------------------------------------ pass@k

class ScriptEngine:
    """Sample j of a problem is script[j] (a marker for `proof`, or None for a wrong answer)."""

    def __init__(self, script):
        self.spec, self.script = ModelSpec("fake"), script

    @property
    def has_chat_template(self):
        return True

    def generate(self, prompts, params, seeds=None):
        out = []
        for prompt, seed in zip(prompts, seeds):
            name = "p1" if "theorem p1 " in prompt[-1]["content"] else "p2"
            marker = self.script[seed - params.seed]
            out.append(Completion("no proof" if marker is None else proof(name, marker), 10, "stop"))
        return out


@pytest.fixture
def fast_path(monkeypatch):
    """The fast path pays every answer that holds a proof, cheats included."""
    async def verify_many(items, on_result=None, **kwargs):
        results = [{"score": float("trivial" in it["solution_str"]), "infra": 0.0, "feedback": "",
                    "verdict": "valid" if "trivial" in it["solution_str"] else "lean_error"} for it in items]
        for index, result in enumerate(results):
            if on_result is not None:   # as the real verify_many does, as each result comes
                on_result(index, result)
        return results

    monkeypatch.setattr(reward.lean.score, "verify_many", verify_many)


def test_pass_at_k_counts_a_cheat_as_judged_not_valid_and_leaves_unverified_samples_out(data, fast_path,
                                                                                         recheck_tools):
    problems = prover_eval.load_problems([data], ["p1"])
    tool = ReportRecheck.from_options(reward.lean.score.resolve_config(
        recheck_project=str(recheck_tools[1]), recheck_tool="comparator").recheck, "--reward-kwarg")
    engine = ScriptEngine(["", "mismatch", None, "crash"])
    report = prover_eval.pass_at_k_report(problems, engine, SamplingParams(seed=0), n=4, ks=[1], reward_kwargs={},
                                          recheck=tool)
    (row,) = report["problems"]
    assert (row["judged"], row["valid"], row["infra"]) == (3, 1, 1)   # the fast path alone: 4 judged, 3 valid
    assert row["verdicts"] == {"valid": 1, "cheat": 1, "lean_error": 1, "unverified": 1}
    assert report["pass_at_k"]["1"]["pass_at_k"] == pytest.approx(1 / 3)
    block = report["recheck"]
    assert [(c["problem"], c["sample_key"]) for c in block["cheats"]] == [("p1", "seed=1")]
    assert [u["sample_key"] for u in block["unverified"]] == ["seed=3"] and block["status"] == "incomplete"


def test_passk_cli_rechecks_by_default(data, fast_path, recheck_tools, monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(prover_eval, "load_engine", lambda spec, options: pytest.fail("the model was loaded"))
    argv = ["passk", "--model", "fake", "--data", str(data), "--n", "2", "--reward-kwarg", "backend=repl",
            "--reward-kwarg", f"repl_command={FAKE_REPL}"]
    assert prover_eval.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: the report re-checks each counted proof out of process") and err.count("\n") == 1
    assert "--recheck-project DIR" in err and "--no-recheck" in err
    monkeypatch.setattr(prover_eval, "load_engine", lambda spec, options: ScriptEngine(["mismatch", ""]))
    out = tmp_path / "passk.json"
    assert prover_eval.main([*argv, "--reward-kwarg", "recheck_tool=comparator", "--reward-kwarg",
                             f"recheck_project={tmp_path / 'project'}", "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["recheck"]["status"] == "done" and len(report["recheck"]["cheats"]) == 2   # p1's and p2's
    assert "4 counted proofs, 2 confirmed, 2 cheats, 0 unverified" in capsys.readouterr().out
