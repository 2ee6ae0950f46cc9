"""The sampling baselines of set discovery: best-of-k and `reprompt` (feedback in the context, no update)."""
from __future__ import annotations

import json

import pytest

from sdpo_attempts.log import AttemptLog
from sdpo_eval.discovery.sampler import Judge, parse_runs, run_all, sample_set
from sdpo_eval.engines import Completion, SamplingParams
from sdpo_ext.teacher.reprompt import RepromptConfig

FEEDBACK_MARK = "feedback from your unsuccessful earlier attempt"


class ScriptedEngine:
    """Answers "right" only when the prompt shows the feedback "use 12" (a model that reads feedback and nothing
    else), "wrong" otherwise; records every prompt it was given."""

    def __init__(self, right_without_feedback: frozenset = frozenset()):
        self.prompts: list = []
        self.seeds: list[int] = []
        self.right_without_feedback = right_without_feedback

    def generate(self, prompts, params, seeds=None):
        self.prompts += list(prompts)
        self.seeds += list(seeds)
        out = []
        for p in prompts:
            text = p[-1]["content"]
            right = "use 12" in text or any(name in text for name in self.right_without_feedback)
            out.append(Completion(text="12" if right else "11", num_tokens=1, finish_reason="stop"))
        return out


def reward(data_source, solution_str, ground_truth, extra_info=None):
    if solution_str == ground_truth:
        return {"score": 1.0, "verdict": "valid", "feedback": ""}
    return {"score": 0.0, "verdict": "wrong", "feedback": f"{solution_str} is wrong; use {ground_truth}"}


def rows(*names):
    return [{"name": n, "prompt": [{"role": "user", "content": f"Solve {n}."}], "ground_truth": "12",
             "data_source": "toy", "extra_info": {"name": n}} for n in names]


def test_reprompt_samples_from_the_teachers_context_of_the_latest_failure_and_best_of_k_never_does(tmp_path):
    params = SamplingParams(temperature=1.0, seed=3)
    engines, results = {}, {}
    for method in ("best_of_k", "reprompt"):
        engines[method] = ScriptedEngine()
        log = AttemptLog(path=str(tmp_path / f"{method}.jsonl"), method=method, run_id=method, seed=3)
        results[method] = sample_set(method, rows("p1", "p2"), engines[method], params, n=4, budget=12,
                                     judge=Judge(reward), log=log, reprompt_cfg=RepromptConfig())
    # round 1 is the plain prompt for both; reprompt's round 2 shows each slot its own failure's feedback
    assert results["reprompt"] == {p: {"first_success": 5, "judged": 8, "drawn": 8} for p in ("p1", "p2")}
    assert results["best_of_k"] == {p: {"first_success": None, "judged": 12, "drawn": 12} for p in ("p1", "p2")}
    second_round = engines["reprompt"].prompts[8:]
    assert all(FEEDBACK_MARK in p[-1]["content"] and "11 is wrong; use 12" in p[-1]["content"] for p in second_round)
    assert all(p[-1]["content"].startswith("Solve p") for p in second_round)  # the original prompt stays first
    assert not any(FEEDBACK_MARK in p[-1]["content"] for p in engines["best_of_k"].prompts)
    # the same seeds in the same order: the two methods differ only in the context
    assert engines["best_of_k"].seeds[:16] == engines["reprompt"].seeds[:16]
    logged = [json.loads(line) for line in (tmp_path / "reprompt.jsonl").read_text().splitlines()]
    assert [r["attempt"] for r in logged if r["problem"] == "p1"] == list(range(1, 9))
    assert sum(r["score"] for r in logged) == 8  # the whole second round was right, and then the problems retired


def test_infrastructure_failures_consume_no_attempt_and_give_no_feedback():
    calls = {"n": 0}

    def flaky(data_source, solution_str, ground_truth, extra_info=None):
        calls["n"] += 1
        if calls["n"] <= 2:  # the first two judgements of round 1: the checker was down
            return {"score": 0.0, "verdict": "infra_error", "infra": 1.0, "feedback": "use 12 (server said)"}
        return reward(data_source, solution_str, ground_truth, extra_info)

    engine = ScriptedEngine()
    result = sample_set("reprompt", rows("p1"), engine, SamplingParams(), n=2, budget=4, judge=Judge(flaky), log=None,
                        reprompt_cfg=RepromptConfig())
    # round 1: both infra (no attempt, no feedback); round 2: plain prompts again, both wrong; round 3: reprompted
    assert result["p1"] == {"first_success": 3, "judged": 4, "drawn": 6}
    assert not any(FEEDBACK_MARK in p[-1]["content"] for p in engine.prompts[:4])
    assert "server said" not in " ".join(p[-1]["content"] for p in engine.prompts)


def test_a_run_gives_up_after_rounds_that_were_all_infrastructure():
    def down(**_):
        return {"score": 0.0, "infra": 1.0}

    result = sample_set("best_of_k", rows("p1"), ScriptedEngine(), SamplingParams(), n=2, budget=4, judge=Judge(down),
                        log=None, max_all_infra_rounds=2)
    assert result["p1"] == {"first_success": None, "judged": 0, "drawn": 4}


def test_keep_going_spends_the_whole_budget_and_best_of_k_finds_what_sampling_finds():
    engine = ScriptedEngine(right_without_feedback=frozenset({"p2"}))
    result = sample_set("best_of_k", rows("p1", "p2"), engine, SamplingParams(), n=4, budget=8, judge=Judge(reward),
                        log=None, stop_on_success=False)
    assert result == {"p1": {"first_success": None, "judged": 8, "drawn": 8},
                      "p2": {"first_success": 1, "judged": 8, "drawn": 8}}


def test_async_reward_functions_are_awaited_like_verls_reward_loop():
    async def areward(data_source, solution_str, ground_truth, extra_info=None):
        return reward(data_source, solution_str, ground_truth, extra_info)

    judge = Judge(areward)
    assert [r["score"] for r in judge(rows("p1", "p1"), ["12", "3"])] == [1.0, 0.0]
    assert [r["score"] for r in judge(rows("p1"), ["12"])] == [1.0]  # the same loop serves a second call
    judge.close()
    assert Judge(lambda **_: 0.5)(rows("p1"), ["x"]) == [{"score": 0.5}]


def test_run_all_writes_the_set_run_layout_and_skips_finished_runs(tmp_path):
    from sdpo_eval.discovery.sampler import RecipeSampling

    setting = RecipeSampling(model="-", rows=rows("p1"), params=SamplingParams(), n=2, reward_fn=reward,
                             reprompt_cfg=RepromptConfig())
    first = run_all(setting, ScriptedEngine(), [("reprompt", 1), ("best_of_k", 1)], 4, tmp_path)
    assert [r["solved"] for r in first] == [1, 0]
    status = json.loads((tmp_path / "reprompt" / "seed1" / "status.json").read_text())
    assert status["returncode"] == 0 and status["problems"]["p1"]["first_success"] == 3
    again = run_all(setting, ScriptedEngine(), [("reprompt", 1)], 4, tmp_path)
    assert again == [{"method": "reprompt", "seed": 1, "returncode": 0, "skipped": True}]


def test_parse_runs_names_the_fix():
    assert parse_runs("best_of_k:1, reprompt:2") == [("best_of_k", 1), ("reprompt", 2)]
    with pytest.raises(ValueError, match="method:seed"):
        parse_runs("grpo:1")


def test_the_demo_recipe_gives_the_sampler_its_reward_prompts_and_teacher_settings(tmp_path, monkeypatch):
    """from_recipe on the real demo recipe: the rows, the reward function verl would call, the SDPO reprompt block."""
    from sdpo_data.addition_rows import write_data
    from sdpo_eval.discovery.sampler import from_recipe

    write_data(tmp_path)
    monkeypatch.setenv("SDPO_DEMO_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("SDPO_DEMO_MODEL", str(tmp_path / "model"))
    import pandas as pd

    names = [e["name"] for e in pd.read_parquet(tmp_path / "addition_train.parquet")["extra_info"][:2]]
    setting = from_recipe("sdpo_demo", names)
    assert [r["name"] for r in setting.rows] == names and setting.n == 8
    assert setting.params.temperature == 1.0 and setting.params.max_new_tokens == 128
    assert setting.reprompt_cfg == RepromptConfig()
    right = str(setting.rows[0]["ground_truth"])
    verdicts = Judge(setting.reward_fn)(setting.rows[:1] * 2, [f"The answer is {right}.", "The answer is 1."])
    assert verdicts[0]["score"] == 1.0 and verdicts[1]["score"] == 0.0 and verdicts[1]["feedback"]


def test_the_toy_lean_recipe_judges_round_after_round_on_one_repl_and_closes_it(tmp_path, monkeypatch):
    """The Lean reward through the REPL double: its backend lives across rounds (one event loop), feedback comes back
    for a failed proof, and close() ends the REPL process."""
    from sdpo_data.toy_lean import write
    from sdpo_eval.discovery.sampler import from_recipe

    write(tmp_path)
    monkeypatch.setenv("SDPO_TOY_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("SDPO_DEMO_MODEL", str(tmp_path / "model"))
    setting = from_recipe("sdpo_toy_lean", ["toy_add_7_5"])
    proof = "```lean4\ntheorem toy_add_7_5 : (7 : ℕ) + 5 = 12 := by\n  norm_num\n```"
    stuck = "```lean4\ntheorem toy_add_7_5 : (7 : ℕ) + 5 = 12 := by\n  intro h\n```"
    judge = Judge(setting.reward_fn)
    try:
        first = judge(setting.rows * 2, [proof, stuck])
        second = judge(setting.rows * 2, [stuck, proof])
    finally:
        judge.close()
    assert [r["verdict"] for r in first + second] == ["valid", "lean_error", "lean_error", "valid"]
    assert "unsolved goals" in first[1]["feedback"] and not any(r.get("infra") for r in first + second)


def test_a_lean_backend_that_does_not_answer_stops_the_sampler_before_any_model_loads(tmp_path, monkeypatch, capsys):
    """The reward's own preflight (the training pre-flight's) runs before the engine: with no Kimina server the
    sampler exits 3 naming the backend, instead of generating proofs nothing can check."""
    from sdpo_data.toy_lean import write
    from sdpo_eval.discovery import sampler as discovery_sampler

    write(tmp_path)
    monkeypatch.setenv("SDPO_TOY_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("SDPO_DEMO_MODEL", str(tmp_path / "model"))
    assert discovery_sampler.from_recipe("sdpo_toy_lean", ["toy_add_7_5"]).reward_problems == ()   # the REPL double

    def no_engine(*args):
        raise AssertionError("the engine was loaded")

    monkeypatch.setattr(discovery_sampler, "_engine", no_engine)
    rc = discovery_sampler.main(["--recipe", "sdpo_toy_lean", "--problems", "toy_add_7_5", "--budget", "8",
                                 "--runs", "best_of_k:1", "--out-dir", str(tmp_path / "out"), "--",
                                 "reward.custom_reward_function.reward_kwargs.backend=kimina",
                                 "++reward.custom_reward_function.reward_kwargs.url=http://127.0.0.1:9"])
    err = capsys.readouterr().err
    assert rc == 3 and "error:" in err and "127.0.0.1:9" in err
    # an override that does not compose is a usage error naming Hydra's fix, not a traceback
    rc = discovery_sampler.main(["--recipe", "sdpo_toy_lean", "--problems", "toy_add_7_5", "--budget", "8",
                                 "--runs", "best_of_k:1", "--out-dir", str(tmp_path / "out"), "--",
                                 "reward.custom_reward_function.reward_kwargs.no_such_key=1"])
    assert rc == 2 and "To append to your config use +" in capsys.readouterr().err


def test_an_out_dir_that_cannot_be_made_is_one_error_line_before_the_recipe_composes(tmp_path, capsys):
    from sdpo_eval.discovery import sampler as discovery_sampler

    blocker = tmp_path / "a_file"
    blocker.write_text("kept")
    rc = discovery_sampler.main(["--recipe", "sdpo_demo", "--problems", "p", "--budget", "8", "--runs", "best_of_k:1",
                                 "--out-dir", str(blocker / "out")])
    assert rc == 2 and capsys.readouterr().err == (f"error: --out-dir {blocker / 'out'}: {blocker} is a file, so no "
                                                   "folder can be made there (choose another path)\n")
    assert blocker.read_text() == "kept"
