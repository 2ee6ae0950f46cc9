"""reward.math.compute_score: the verl return contract for every kind of input."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reward.math.score import compute_score, preflight

KEYS = {"score": float, "verdict": str, "infra": float, "feedback": str, "extracted": str, "pred": str}


@pytest.mark.parametrize("reply, truth, verdict, score, infra", [
    (r"Thus $\boxed{\dfrac{1}{2}}$.", r"\frac12", "valid", 1.0, 0.0),
    (r"\boxed{3}", r"\boxed{4}", "wrong", 0.0, 0.0),
    ("I do not know", "4", "no_answer", 0.0, 0.0),
    (None, "4", "no_answer", 0.0, 0.0),
    (r"\boxed{4}", "", "bad_task", 0.0, 1.0),
    (r"\boxed{4}", None, "bad_task", 0.0, 1.0),
    (r"\boxed{4}", 4, "valid", 1.0, 0.0),
    (r"\boxed{9^{9^{9^9}}}", "4", "grader_timeout", 0.0, 0.0),
])
def test_contract(reply, truth, verdict, score, infra):
    out = compute_score("math", reply, truth, extra_info={"index": 0}, timeout_s=2)
    assert {k: type(v) for k, v in out.items()} == KEYS
    assert (out["verdict"], out["score"], out["infra"]) == (verdict, score, infra)
    if infra:
        assert out["feedback"] == ""


def test_a_grader_timeout_is_scored_zero_with_feedback():
    """The reply's own pathological answer is penalised in RL (score 0, not masked) and told to the teacher."""
    out = compute_score("math", r"So \boxed{2^{2^{2^{2^{100}}}}}.", "3", timeout_s=1)
    assert (out["verdict"], out["score"], out["infra"]) == ("grader_timeout", 0.0, 0.0)
    assert out["feedback"] == "Your final answer 2^{2^{2^{2^{100}}}} could not be checked in time; state it in " \
                              "simplest form."


def test_feedback_and_vote_key():
    wrong = compute_score("math", r"So \boxed{0.75}.", r"\frac{2}{3}")
    assert wrong["feedback"] == "Your final answer 0.75 is incorrect." and "2}{3" not in wrong["feedback"]
    assert compute_score("math", "no idea", "1")["feedback"].startswith("Your reply does not state a final answer")
    replies = (r"\boxed{\dfrac{1}{2}}", r"\boxed{ \frac{1}{2} }", r"Final Answer: $\frac{1}{2}$.")
    assert {compute_score("math", reply, "1")["pred"] for reply in replies} == {r"\frac{1}{2}"}


def test_options_are_checked():
    with pytest.raises(ValueError, match="unknown MATH reward option"):
        compute_score("math", r"\boxed{1}", "1", timeout=3)
    with pytest.raises(ValueError, match="timeout_s"):
        compute_score("math", r"\boxed{1}", "1", timeout_s=0)
    with pytest.raises(ValueError, match="prompt_opens_think must be true or false"):
        compute_score("math", r"\boxed{1}", "1", prompt_opens_think="false")
    compute_score("math", r"\boxed{1}", "1", reward_router_address=None)  # verl's own keyword


def test_prompt_opens_think_from_reward_kwargs():
    cut = r"So far 1 + 1 = 2, so \boxed{2}"
    assert compute_score("math", cut, "2")["verdict"] == "valid"
    assert compute_score("math", cut, "2", prompt_opens_think=True)["verdict"] == "no_answer"


_piece = st.sampled_from(["\\boxed{", "}", "{", "\\frac", "\\sqrt", "^", "x", "2", "-", "\\%", "\\text{ cm}", "(",
                          ")", ",", "\\overline{3}", "0.", "\\mathrm{i}", "=", "\\in", "[", "]", "\\infty", "<think>",
                          "</think>"])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_piece, max_size=16).map("".join), st.lists(_piece, max_size=8).map("".join))
def test_never_raises_and_keeps_the_contract(reply, truth):
    out = compute_score("math", "So \\boxed{" + reply + "}", truth, timeout_s=2)
    assert {k: type(v) for k, v in out.items()} == KEYS
    assert out["verdict"] in ("valid", "wrong", "no_answer", "grader_timeout", "infra", "bad_task")
    assert out["infra"] == float(out["verdict"] in ("infra", "bad_task"))


def test_preflight_reports_bad_options_before_training():
    """sdpo_ext.startup.checks calls the reward module's preflight(reward_kwargs) before verl starts."""
    assert preflight({"timeout_s": 5, "prompt_opens_think": False}) == [] and preflight({}) == []
    assert preflight({"prompt_opens_think": "false"}) == [
        "MATH grading option prompt_opens_think must be true or false, got 'false' "
        "(fix reward.custom_reward_function.reward_kwargs)"]
    assert "unknown MATH reward option(s) ['timeout']" in preflight({"timeout": 5})[0]
