"""pass@k sampling through a mocked `reward.lean.score.verify_many`; infra never counts as failure."""
from __future__ import annotations

import json
import socket
import sys
import time

import pytest

import reward.lean.score
import sdpo_eval.prover_eval as prover_eval
from sdpo_attempts.pass_at_k import pass_at_k
from sdpo_data.prepare import prepare_lean
from sdpo_eval.engines import Completion, ModelSpec, SamplingParams

HEADER = "import Mathlib\n\n"
FAKE_REPL = f"{sys.executable} -m lean_env.testing.fake_repl"


class SeedEngine:
    """Output depends only on (problem marker in the prompt, seed) through a script: seed -> text."""

    def __init__(self, script):
        self.spec, self.script, self.seen = ModelSpec("fake"), script, []

    @property
    def has_chat_template(self):
        return True

    def generate(self, prompts, params, seeds=None):
        seeds = seeds if seeds is not None else [params.seed + i for i in range(len(prompts))]
        out = []
        for prompt, seed in zip(prompts, seeds):
            problem = next(n for n in self.script if f"theorem {n} " in prompt[-1]["content"])
            self.seen.append((problem, seed))
            out.append(Completion(self.script[problem](seed), 10 + seed, "stop"))
        return out


@pytest.fixture
def fake_verifier(monkeypatch):
    calls = []

    async def verify_many(items, on_result=None, **kwargs):
        calls.append((list(items), kwargs))
        results = []
        for it in items:
            gt = json.loads(it["ground_truth"])
            assert it["finish_reason"] == "stop" and gt["formal_statement"].startswith("theorem")
            text = it["solution_str"]
            if text == "INFRA":
                results.append({"score": 0.0, "verdict": "infra", "feedback": "", "infra": 1.0})
            elif text == "GOOD":
                results.append({"score": 1.0, "verdict": "valid", "feedback": "", "infra": 0.0})
            else:
                results.append({"score": 0.0, "verdict": "lean_error", "feedback": "err", "infra": 0.0})
            if on_result is not None:   # as the real verify_many does, as each result comes
                on_result(len(results) - 1, results[-1])
        return results

    monkeypatch.setattr(reward.lean.score, "verify_many", verify_many)
    return calls


@pytest.fixture
def data(tmp_path):
    src = tmp_path / "mini.jsonl"
    rows = [{"name": n, "split": "test", "informal_prefix": "", "header": HEADER,
             "formal_statement": f"theorem {n} : True := by\n"} for n in ("easy", "hard", "flaky")]
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return prepare_lean("minif2f", str(src), "kimina", tmp_path / "prep")["files"]["test"]


SCRIPT = {
    "easy": lambda s: "GOOD" if s % 2 == 0 else "bad",          # 2 of 4 valid
    "hard": lambda s: "bad",                                      # 0 of 4
    "flaky": lambda s: "INFRA" if s < 2 else ("GOOD" if s == 3 else "bad"),   # 2 infra, 1 of 2 judged valid
}


def test_pass_at_k_excludes_infra_from_denominators(data, fake_verifier, tmp_path):
    problems = prover_eval.load_problems([data])
    log = tmp_path / "attempts.jsonl"
    report = prover_eval.pass_at_k_report(problems, SeedEngine(SCRIPT), SamplingParams(seed=0), n=4, ks=[1, 2, 4],
                                          reward_kwargs={"backend": "repl"}, attempt_log=str(log),
                                          recheck=None)
    rows = {p["name"]: p for p in report["problems"]}
    assert (rows["flaky"]["judged"], rows["flaky"]["valid"], rows["flaky"]["infra"]) == (2, 1, 2)
    assert rows["easy"]["verdicts"] == {"valid": 2, "lean_error": 2}
    k1 = (pass_at_k(4, 2, 1) + pass_at_k(4, 0, 1) + pass_at_k(2, 1, 1)) / 3
    assert report["pass_at_k"]["1"] == {"pass_at_k": pytest.approx(k1), "problems": 3,
                                        "problems_without_k_judged_samples": 0}
    k4 = report["pass_at_k"]["4"]
    assert k4["problems"] == 2 and k4["problems_without_k_judged_samples"] == 1
    assert k4["pass_at_k"] == pytest.approx(0.5)
    assert report["infra_samples"] == 2 and report["samples"] == 12
    assert fake_verifier[0][1] == {"backend": "repl"} and len(fake_verifier) == 1
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(records) == 12 and {r["method"] for r in records} == {"sampling"}
    assert {"problem", "method", "run_id", "step", "attempt", "seed", "response_tokens", "verdict", "score",
            "infra"} <= set(records[0])
    with pytest.raises(ValueError, match="1..n"):
        prover_eval.pass_at_k_report(problems, SeedEngine(SCRIPT), SamplingParams(), n=2, ks=[3], reward_kwargs={},
                                     recheck=None)


def test_load_problems_reports_close_names(data):
    with pytest.raises(ValueError, match="eas"):
        prover_eval.load_problems([data], ["eassy"])
    assert [p["name"] for p in prover_eval.load_problems([data])] == ["easy", "hard", "flaky"]


def test_cli_passk_writes_json(data, fake_verifier, monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(prover_eval, "load_engine", lambda spec, options: SeedEngine(SCRIPT))
    out = tmp_path / "passk.json"
    assert prover_eval.main(["passk", "--model", "fake", "--data", str(data), "--n", "4", "--k", "1,4",
                             "--reward-kwarg", "backend=repl", "--reward-kwarg", f"repl_command={FAKE_REPL}",
                             "--reward-kwarg", "timeout_s=30", "--out", str(out), "--no-recheck"]) == 1
    assert fake_verifier[0][1] == {"backend": "repl", "repl_command": FAKE_REPL, "timeout_s": 30}
    printed = capsys.readouterr()
    assert "infra samples (excluded): 2 / 12" in printed.out
    # two samples got no verdict: the report is written, and the exit code and message say how to judge them
    assert "2 of 12 samples got no verdict" in printed.err
    assert "kept no attempt log: with --attempt-log LOG" in printed.err
    assert json.loads(out.read_text())["pass_at_k"]["4"]["problems"] == 2


def test_cli_passk_leaves_out_a_problem_whose_statement_is_flagged_unless_asked(data, fake_verifier, monkeypatch,
                                                                                  tmp_path, capsys):
    import pandas as pd

    frame = pd.read_parquet(data)
    frame["extra_info"] = [dict(e, statement_defect="0 = 0 over ℕ (issue)" if e["name"] == "hard" else "")
                           for e in frame["extra_info"]]
    flagged = tmp_path / "flagged.parquet"
    frame.to_parquet(flagged)
    monkeypatch.setattr(prover_eval, "load_engine", lambda spec, options: SeedEngine(SCRIPT))
    argv = ["passk", "--model", "fake", "--data", str(flagged), "--problems", "easy,hard", "--n", "4", "--k", "1",
            "--reward-kwarg", "backend=repl", "--reward-kwarg", f"repl_command={FAKE_REPL}", "--no-recheck",
            "--out", str(tmp_path / "passk.json")]
    assert prover_eval.main(argv) == 0
    report = json.loads((tmp_path / "passk.json").read_text())
    assert [p["name"] for p in report["problems"]] == ["easy"]
    assert report["left_out_defective"] == {"hard": "0 = 0 over ℕ (issue)"}
    assert "left out 1 problems whose statement is flagged as defective: hard" in capsys.readouterr().out
    assert prover_eval.main(argv + ["--count-defective"]) == 0
    report = json.loads((tmp_path / "passk.json").read_text())
    assert [p["name"] for p in report["problems"]] == ["easy", "hard"] and report["left_out_defective"] == {}


@pytest.mark.parametrize("k, message", [("8", "--k 8 with --n 4: every k must be in 1..n"),
                                        ("1,x", "--k 1,x: comma-separated integers")])
def test_cli_passk_checks_k_before_any_model_loads(data, monkeypatch, capsys, k, message):
    monkeypatch.setattr(prover_eval, "load_engine", lambda spec, options: pytest.fail("the model was loaded"))
    assert prover_eval.main(["passk", "--model", "fake", "--data", str(data), "--n", "4", "--k", k]) == 2
    assert capsys.readouterr().err.startswith(f"error: {message}")


def test_passk_resume_draws_only_what_the_attempt_log_lacks(data, fake_verifier, tmp_path):
    """A run stopped after its first problem (the log holds only easy's samples): --resume samples hard and flaky
    only, and the report equals an uninterrupted run's."""
    problems = prover_eval.load_problems([data])
    full_log, log = tmp_path / "full.jsonl", tmp_path / "attempts.jsonl"
    full = prover_eval.pass_at_k_report(problems, SeedEngine(SCRIPT), SamplingParams(seed=0), n=4, ks=[1, 4],
                                        reward_kwargs={}, attempt_log=str(full_log), recheck=None)
    log.write_text("".join(line + "\n" for line in full_log.read_text().splitlines()
                           if json.loads(line)["problem"] == "easy"))
    engine = SeedEngine(SCRIPT)
    resumed = prover_eval.pass_at_k_report(problems, engine, SamplingParams(seed=0), n=4, ks=[1, 4],
                                           reward_kwargs={}, attempt_log=str(log), resume=True,
                                           recheck=None)
    assert sorted({name for name, _ in engine.seen}) == ["flaky", "hard"] and len(engine.seen) == 8
    assert resumed["resumed_samples"] == 4
    assert resumed["pass_at_k"] == full["pass_at_k"] and resumed["problems"] == full["problems"]
    assert len(log.read_text().splitlines()) == 12


def test_passk_resume_needs_an_attempt_log(data, capsys):
    assert prover_eval.main(["passk", "--model", "fake", "--data", str(data), "--n", "4", "--resume"]) == 2
    assert "--resume needs --attempt-log" in capsys.readouterr().err


def _unused_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _no_model(monkeypatch):
    monkeypatch.setattr(prover_eval, "load_engine", lambda spec, options: pytest.fail("the model was loaded"))


def test_cli_stops_before_any_model_loads_when_no_lean_server_answers(data, monkeypatch, capsys, tmp_path):
    """The default backend (Kimina) with no server: exit 3 in seconds, naming the server variables and the switch to
    a REPL, instead of generating every sample and masking each one as infra."""
    _no_model(monkeypatch)
    monkeypatch.delenv("LEAN_BACKEND", raising=False)
    monkeypatch.setenv("LEAN_SERVER_API_URL", f"http://127.0.0.1:{_unused_port()}")
    start = time.monotonic()
    assert prover_eval.main(["passk", "--model", "fake", "--data", str(data), "--n", "4",
                             "--out", str(tmp_path / "passk.json")]) == 3
    err = capsys.readouterr().err
    assert time.monotonic() - start < 30 and err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("error: the Kimina server at http://127.0.0.1:") and "LEAN_SERVER_API_URL" in err
    assert "--reward-kwarg backend=repl" in err and not (tmp_path / "passk.json").exists()


def test_cli_names_a_missing_data_file_and_how_to_make_it(monkeypatch, capsys, tmp_path):
    _no_model(monkeypatch)
    missing = tmp_path / "minif2f_kimina_test.parquet"
    assert prover_eval.main(["passk", "--model", "fake", "--data", str(missing), "--n", "4"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: --data {missing}: no such file (a prepared parquet: python -m sdpo_data.prepare "
                          "lean")
    assert "Traceback" not in err


@pytest.mark.parametrize("flag", ["--out", "--attempt-log"])
def test_cli_refuses_an_output_it_cannot_write_before_any_model_loads(data, monkeypatch, capsys, tmp_path, flag):
    _no_model(monkeypatch)
    blocker = tmp_path / "a_file"
    blocker.write_text("kept")
    assert prover_eval.main(["passk", "--model", "fake", "--data", str(data), "--n", "4",
                             flag, str(blocker / "out.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {flag} {blocker / 'out.json'}: {blocker} is a file") and "Traceback" not in err
    assert blocker.read_text() == "kept"


def test_passk_resume_judges_again_what_infrastructure_left_unjudged(data, fake_verifier, tmp_path):
    """flaky's first two samples were infra: a resumed run draws those two again (same seeds) and judges them; the
    judged samples are read from the log, not drawn."""
    problems = prover_eval.load_problems([data])
    log = tmp_path / "attempts.jsonl"
    first = prover_eval.pass_at_k_report(problems, SeedEngine(SCRIPT), SamplingParams(seed=0), n=4, ks=[1],
                                         reward_kwargs={}, attempt_log=str(log), recheck=None)
    assert first["infra_samples"] == 2 and "2 of 12 samples got no verdict" in prover_eval.infra_error(first, None)
    engine = SeedEngine({**SCRIPT, "flaky": lambda s: "GOOD" if s in (0, 3) else "bad"})   # the backend is back
    resumed = prover_eval.pass_at_k_report(problems, engine, SamplingParams(seed=0), n=4, ks=[1],
                                           reward_kwargs={}, attempt_log=str(log), resume=True, recheck=None)
    assert sorted(engine.seen) == [("flaky", 0), ("flaky", 1)] and resumed["infra_samples"] == 0
    assert {p["name"]: (p["judged"], p["valid"]) for p in resumed["problems"]}["flaky"] == (4, 2)
    assert prover_eval.infra_error(resumed, str(log)) is None


def test_a_misspelt_reward_kwarg_is_one_error_line_with_the_closest_key_and_exit_2(data, monkeypatch, capsys):
    monkeypatch.setattr(prover_eval, "load_engine", lambda spec, options: pytest.fail("the model was loaded"))
    assert prover_eval.main(["passk", "--model", "fake", "--data", str(data), "--n", "4",
                             "--reward-kwarg", "recheck_projet=/ws"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("error: --reward-kwarg: unknown Lean reward option 'recheck_projet' (did you mean "
                           "recheck_project")
    assert "known:" not in line and "backoff_s" not in line


def test_the_recheck_settings_are_the_recheck_flags_and_the_old_reward_kwarg_still_works(data, fake_verifier,
                                                                                        monkeypatch, capsys):
    """The `--recheck-*` flags of `recheck` and `discovery report` (RecheckOptions through sdpo_options.flags) reach
    pass@k's re-check and the reward; `--reward-kwarg recheck_tool=` is the deprecated spelling (issue 58 item 4)."""
    monkeypatch.setattr(prover_eval, "load_engine", lambda spec, options: SeedEngine(SCRIPT))
    argv = ["passk", "--model", "fake", "--data", str(data), "--n", "4", "--reward-kwarg", "backend=repl",
            "--reward-kwarg", f"repl_command={FAKE_REPL}"]
    assert prover_eval.main([*argv, "--recheck-tool", "lean4checker", "--recheck-project", "/ws"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("error: recheck_tool lean4checker recompiles the checked file")
    assert prover_eval.main([*argv, "--reward-kwarg", "recheck_tool=lean4checker", "--recheck-project", "/ws"]) == 2
    note, line = capsys.readouterr().err.strip().splitlines()
    assert note == ("note: --reward-kwarg recheck_tool= is deprecated, use --recheck-tool (the old spelling goes in "
                    "the next release)") and line.startswith("error: recheck_tool lean4checker recompiles")
    assert prover_eval.main([*argv, "--recheck-tool", "comparator", "--reward-kwarg", "recheck_tool=comparator"]) == 2
    assert "recheck_tool given both as a flag and as --reward-kwarg" in capsys.readouterr().err
    prover_eval.main([*argv, "--no-recheck", "--recheck-timeout-s", "60"])
    assert fake_verifier[-1][1] == {"backend": "repl", "repl_command": FAKE_REPL, "recheck_timeout_s": 60.0}


def test_k_defaults_to_1_and_n_as_in_math_eval():
    """One `--k` default in both tools (issue 58 item 4): pass@1 and pass@n."""
    assert prover_eval.parse_ks(None, 8) == [1, 8] and prover_eval.parse_ks(None, 1) == [1]
    assert prover_eval.parse_ks("1,4", 8) == [1, 4]
