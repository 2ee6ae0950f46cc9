"""reward.lean: the verl contract, masking of infra failures, backend selection, fuzzing."""
import asyncio
import json
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import reward.lean.score as rl
from lean_env.backends import factory
from lean_env.backends.kimina import KiminaBackend
from lean_env.testing.fake_kimina import FakeKimina
from lean_env.testing.semantics import load_rules

STATEMENT = "theorem t1 (x : ℝ) (h : x = 2) : x + 1 = 3 := by\n"
GT = json.dumps({"name": "t1", "formal_statement": STATEMENT})
RULES = json.dumps([{"match": "nlinarith", "outcome": "error", "message": "linarith failed\nx : ℝ\n⊢ False"},
                    {"match": "HANG", "outcome": "hang"}, {"match": "CRASH", "outcome": "crash"},
                    {"match": "cheat_tac", "outcome": "axiom", "axioms": ["cheat"]}])
REPL = dict(backend="repl", repl_command=f"{sys.executable} -m lean_env.testing.fake_repl --rules '{RULES}'",
            timeout_s=1.0, backoff_s=0.01)
KEYS = {"score": float, "verdict": str, "feedback": str, "infra": float, "lean_time_s": float}


def score_all(outputs, gt=GT, extra_info=None, **kw):
    async def main():
        try:
            return [await rl.compute_score("lean", o, gt, extra_info or {}, **kw) for o in outputs]
        finally:
            await factory.aclose_backends()
    return asyncio.run(main())


def _contract(d):
    assert set(d) == set(KEYS) and all(isinstance(d[k], t) for k, t in KEYS.items())
    assert d["score"] == (1.0 if d["verdict"] == "valid" else 0.0)
    if d["infra"] or d["verdict"] == "valid":
        assert d["feedback"] == ""


def test_verdicts_through_the_real_pipeline(answer):
    cases = {"subst h; norm_num": "valid", "nlinarith [h]": "lean_error", "sorry": "sorry",
             "cheat_tac": "forbidden", "native_decide": "forbidden", "HANG": "timeout", "CRASH": "infra"}
    outs = score_all([answer(p) for p in cases] + ["<think>never ends", "no code"], **REPL)
    for d in outs:
        _contract(d)
    assert [d["verdict"] for d in outs] == list(cases.values()) + ["truncated", "no_answer"]
    by = dict(zip(cases, outs))
    assert "line 2, column 2" in by["nlinarith [h]"]["feedback"]
    assert by["HANG"]["infra"] == 1.0 and by["CRASH"]["infra"] == 1.0 and by["nlinarith [h]"]["infra"] == 0.0


def test_finish_reason_from_extra_info_and_dict_ground_truth_with_header(answer):
    gt = {"formal_statement": STATEMENT, "header": "import Mathlib\nopen Real"}
    (d,) = score_all([answer("norm_num")], gt=gt, extra_info={"finish_reason": "length"}, **REPL)
    assert d["verdict"] == "truncated" and d["infra"] == 0.0
    (d,) = score_all([answer("norm_num")], gt=gt, **REPL)
    assert d["verdict"] == "valid"


def test_server_down_is_masked_never_scored(monkeypatch, answer):
    fake = FakeKimina(faults=[500] * 100)
    monkeypatch.setattr(factory, "make_backend", lambda cfg: KiminaBackend(cfg.url, transport=fake.transport(),
                                                                      backoff_s=0.01, restart_wait_s=0.05,
                                                                      max_backoff_s=0.01))
    (d,) = score_all([answer("norm_num")], backend="kimina", backoff_s=0.01)
    _contract(d)
    assert d["verdict"] == "infra" and d["infra"] == 1.0 and d["feedback"] == ""
    assert fake.statuses and set(fake.statuses) == {500}   # the server answered 500 (not a backend built wrong)


def test_kimina_path_and_env_var_selection(monkeypatch, answer):
    fake = FakeKimina(rules=load_rules(RULES))
    made = []

    def make(cfg):
        made.append(cfg)
        return KiminaBackend(cfg.url, cfg.api_key, transport=fake.transport())
    monkeypatch.setattr(factory, "make_backend", make)
    monkeypatch.setenv("LEAN_BACKEND", "kimina")
    monkeypatch.setenv("LEAN_SERVER_API_URL", "http://lean:9000")
    monkeypatch.setenv("LEAN_SERVER_API_KEY", "k")
    outs = score_all([answer("norm_num"), answer("nlinarith")])
    assert [d["verdict"] for d in outs] == ["valid", "lean_error"]
    assert len(made) == 1 and made[0].url == "http://lean:9000" and made[0].api_key == "k"


def test_config_errors_are_loud_and_verl_kwargs_are_accepted():
    with pytest.raises(ValueError, match="unknown Lean reward option"):
        rl.resolve_config(timeout=3)
    with pytest.raises(ValueError, match="backend"):
        rl.resolve_config(backend="lean3")
    with pytest.raises(ValueError, match="mem_limit_mb must be a number"):
        rl.resolve_config(mem_limit_mb="4000")
    with pytest.raises(ValueError, match="timeout_s must be a number"):
        rl.resolve_config(timeout_s="fast")
    with pytest.raises(ValueError, match="statement_check must be true or false"):
        rl.resolve_config(statement_check="false")
    assert rl.resolve_config(timeout_s=30, max_rss_mb=5000.5).check.timeout_s == 30
    assert rl.resolve_config(reward_router_address=None).backend_options.backend in ("kimina", "repl", "repl-ray")
    with pytest.raises(ValueError, match="formal_statement"):
        rl.parse_ground_truth('{"name": "x"}')


def test_verl_loads_and_calls_it_with_reward_kwargs(answer):
    from omegaconf import OmegaConf
    from verl.trainer.ppo.reward import get_custom_reward_fn

    cfg = OmegaConf.create({"reward": {"custom_reward_function": {
        "path": rl.__file__, "name": "compute_score", "reward_kwargs": REPL}}})
    fn = get_custom_reward_fn(cfg)

    async def main():
        try:
            return await fn(data_source="lean", solution_str=answer("norm_num"), ground_truth=GT,
                            extra_info={"num_turns": 1, "rollout_reward_scores": {}})
        finally:
            await factory.aclose_backends()
    d = asyncio.run(main())
    assert d["verdict"] == "valid" and d["score"] == 1.0


def test_verify_many_keeps_order_and_reuses_one_backend(answer):
    items = [{"formal_statement": STATEMENT, "output": answer(p)} for p in ["norm_num", "nlinarith", "CRASH"] * 4]

    async def main():
        try:
            out = await rl.verify_many(items, progress=False, **REPL)
            return out, list(factory._backends.values())
        finally:
            await factory.aclose_backends()
    out, backends = asyncio.run(main())
    assert [d["verdict"] for d in out] == ["valid", "lean_error", "infra"] * 4
    assert len(backends) == 1


_frag = st.sampled_from(["<think>", "</think>", "```lean4\n", "```", "\n", "theorem t1 (x : ℝ) (h : x = 2) : x + 1 = 3",
                         " := by\n  ", "norm_num", "nlinarith", "HANG", "CRASH", "sorry", "-/", "/-", "\"",
                         "lemma a : True := trivial\n"])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(st.text(max_size=30), st.lists(_frag, max_size=25).map("".join)), min_size=1, max_size=6))
def test_fuzzed_outputs_never_crash_the_reward(outputs):
    for d in score_all(outputs, **{**REPL, "timeout_s": 0.3, "timeout_retries": 0, "infra_retries": 0}):
        _contract(d)


@pytest.mark.parametrize("gt,why", [
    (None, "JSON object"), (3, "JSON object"), (2.5, "JSON object"), ([GT], "JSON object"), ("[1, 2]", "JSON object"),
    ({}, "formal_statement"), ({"name": "t1"}, "formal_statement"), ('{"formal_statement": 5}', "formal_statement"),
    ('{"formal_statement": "', "not valid JSON"), ("not json", "not valid JSON"), ("[" * 100_000, "not valid JSON"),
    ({"formal_statement": "lemma := 1"}, "no `theorem"), ({"formal_statement": STATEMENT, "name": 7}, "'name'"),
    ({"formal_statement": STATEMENT, "header": ["import Mathlib"]}, "'header'"),
    ({"formal_statement": STATEMENT + "\ud800"}, "surrogate"),
])
def test_malformed_ground_truth_is_a_clear_data_error_and_a_masked_score(gt, why, answer):
    with pytest.raises(ValueError, match=why):
        rl.parse_ground_truth(gt)
    (d,) = score_all([answer("norm_num")], gt=gt, **REPL)
    _contract(d)
    assert d["verdict"] == "bad_task" and d["infra"] == 1.0 and d["score"] == 0.0


def test_statement_check_failure_is_a_statement_mismatch_and_can_be_switched_off(answer):
    rules = json.dumps([{"match": "RETYPED", "outcome": "retyped"}])
    repl = {**REPL, "repl_command": f"{sys.executable} -m lean_env.testing.fake_repl --rules '{rules}'"}
    (d,) = score_all([answer("norm_num -- RETYPED")], **repl)
    assert d["verdict"] == "statement_mismatch" and "dataset's statement" in d["feedback"]
    (d,) = score_all([answer("norm_num -- RETYPED")], **repl, statement_check=False)
    assert d["verdict"] == "valid"


def test_lone_surrogate_in_output_is_bad_output_not_infra(answer):
    (d,) = score_all([answer("norm_num [h] \ud800")], **REPL)
    _contract(d)
    assert d["verdict"] == "forbidden" and d["infra"] == 0.0 and "surrogate" in d["feedback"]


def test_many_blank_lines_are_fast(answer):
    import time

    t0 = time.perf_counter()
    (d,) = score_all(["\n" * 64_000 + answer("norm_num" + "\n" * 64_000)], **REPL)
    assert d["verdict"] == "valid" and time.perf_counter() - t0 < 10.0


_ground_truths = st.one_of(
    st.none(), st.integers(), st.floats(), st.booleans(), st.text(max_size=40), st.binary(max_size=20),
    st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=3),
    st.sampled_from([GT, GT[:-3], "{}", '{"formal_statement": null}', '{"formal_statement": "theorem"}']),
    st.builds(lambda s, n: {"formal_statement": s, "name": n}, st.text(max_size=60) | st.just(STATEMENT),
              st.none() | st.text(max_size=5) | st.integers()),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_ground_truths,
       st.one_of(st.none(), st.integers(), st.text(max_size=60), st.lists(_frag, max_size=12).map("".join)))
def test_compute_score_never_raises(gt, output):
    for d in score_all([output], gt=gt, **{**REPL, "timeout_s": 0.3, "timeout_retries": 0, "infra_retries": 0}):
        _contract(d)
