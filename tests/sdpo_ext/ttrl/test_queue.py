"""The single protocol's queue (`sdpo_ext.ttrl.queue`), pure: order, moving on, resets, replay, checkpoint state."""
from __future__ import annotations

import pytest

from sdpo_ext.ttrl.problem_set import TTRLSet
from sdpo_ext.ttrl.queue import ProblemQueue


def queue(budget: int = 8, n: int = 4, problems=("a", "b", "c")) -> ProblemQueue:
    return ProblemQueue(TTRLSet(list(problems), budget=budget, seed=3), prompts_per_step=1, rollout_n=n)


def judge(q: ProblemQueue, name: str, valid=(), infra=(), n: int = 4) -> None:
    for j in range(n):
        q.set.observe(name, valid=j in valid, infra=j in infra)


def test_one_problem_at_a_time_with_a_fresh_runs_step_limit():
    q = queue()
    assert q.steps_per_problem == TTRLSet(["x"], budget=8).step_limit(1, 4) == 4
    assert q.steps_left() == 12 and q.current == "a"
    assert q.draw(1, 4, step=1) == ["a"]
    judge(q, "a")
    assert q.advance() is None and q.steps_left() == 11
    assert q.draw(1, 4, step=2) == ["a"]
    judge(q, "a")  # budget of 8 spent
    assert q.advance() == "a" and q.current == "b" and q.problem_steps == 0
    assert q.draw(1, 4, step=3) == ["b"]
    judge(q, "b", valid={2})  # solved
    assert q.advance() == "b" and q.current == "c"


def test_infra_keeps_a_problem_until_its_step_limit():
    q = queue(problems=("a", "b"))
    for step in range(1, 5):
        assert q.draw(1, 4, step) == ["a"]
        judge(q, "a", infra={0, 1, 2, 3})
        left = q.advance()
    assert left == "a" and q.set.problems["a"].attempts == 0 and q.current == "b"


def test_a_reset_is_needed_only_when_the_weights_carry_another_problem():
    q = queue()
    assert not q.needs_reset
    q.draw(1, 4, 1)
    q.trained("a")
    assert not q.needs_reset  # still a's run
    judge(q, "a", valid={0})
    q.advance()
    assert q.needs_reset and q.weights_of == "a"
    q.reset_done()
    assert not q.needs_reset and q.weights_of is None


def test_the_last_problem_ends_the_queue():
    q = queue(problems=("a",))
    q.draw(1, 4, 1)
    judge(q, "a", valid={1})
    assert q.advance() == "a" and q.finished and q.current is None and q.steps_left() == 0
    q.trained("a")
    assert not q.needs_reset  # nothing follows
    with pytest.raises(ValueError, match="queue is done"):
        q.draw(1, 4, 2)


def test_replay_moves_on_as_the_interrupted_process_did():
    first = queue()
    first.draw(1, 4, 1)
    first.trained("a")
    judge(first, "a", valid={0})
    first.advance()
    saved_set, saved_queue = first.set.state_dict(1), first.state_dict()
    # after the checkpoint: b's two steps spend its budget, then c's first step; the process dies
    records = [{"step": s, "problem": p, "attempt": 1} for s, p in ((2, "b"), (3, "b"), (4, "c")) for _ in range(4)]

    resumed = queue()
    resumed.set.load_state_dict(saved_set)
    resumed.load_state_dict(saved_queue)
    assert resumed.replay(records) == ["b"]
    assert (resumed.current, resumed.problem_steps) == ("c", 1)
    assert resumed.set.problems["b"].attempts == 8 and resumed.set.problems["c"].attempts == 4
    assert resumed.needs_reset and resumed.weights_of == "a"  # the checkpoint's weights are a's


def test_a_checkpoint_of_another_order_is_refused():
    state = queue(problems=("a", "b", "c")).state_dict()
    with pytest.raises(ValueError, match="another order"):
        queue(problems=("b", "a", "c")).load_state_dict(state)
    with pytest.raises(ValueError, match="version"):
        queue().load_state_dict({**state, "version": 99})
