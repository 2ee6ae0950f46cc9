"""TTRLSet (sdpo_ext.ttrl.problem_set): the draw keeps the batch full from the open problems, budgets are per problem
and spent at an even pace, INFRA spends none, the state survives a JSON round trip."""
from __future__ import annotations

import json
from collections import Counter

import pytest

from sdpo_ext.ttrl.problem_set import INFRA_HEADROOM, TTRLSet


def run_steps(ttrl: TTRLSet, num_prompts: int, n: int, outcome, max_steps: int = 1000) -> list[list[str]]:
    """Draw and judge step by step until the set is finished; outcome(step, problem, sample) -> "valid" | "fail" |
    "infra". Returns the draws; checks each one is full and holds only problems open when it was drawn."""
    draws = []
    for step in range(1, max_steps + 1):
        if ttrl.finished:
            return draws
        open_before = set(ttrl.open_problems())
        names = ttrl.draw(num_prompts, n, step)
        assert len(names) == num_prompts and set(names) <= open_before
        draws.append(names)
        for name in names:
            for j in range(n):
                verdict = outcome(step, name, j)
                ttrl.observe(name, valid=verdict == "valid", infra=verdict == "infra")
    raise AssertionError("the set never finished")


def test_budgets_are_spent_evenly_and_exactly_when_n_divides_them():
    ttrl = TTRLSet([f"p{i}" for i in range(5)], budget=12, seed=3)
    assert ttrl.step_limit(3, 4) == INFRA_HEADROOM * 5  # 5 problems x 3 slots = 15 slots, 3 per step
    draws = run_steps(ttrl, num_prompts=3, n=4, outcome=lambda *_: "fail")
    assert len(draws) == 5
    assert {name: s.attempts for name, s in ttrl.problems.items()} == dict.fromkeys(ttrl.problems, 12)
    # even pace: after every step no problem is more than one slot (n attempts) ahead of another
    seen = Counter()
    for names in draws:
        seen.update(names)
        assert max(seen[p] for p in ttrl.problems) - min(seen[p] for p in ttrl.problems) <= 1
    assert ttrl.solved() == [] and ttrl.metrics()["sdpo_lean/ttrl_unspent_attempts"] == 0


def test_a_problem_retires_after_its_first_valid_proof_and_the_batch_stays_full():
    ttrl = TTRLSet(["a", "b", "c"], budget=64, seed=0)
    # "a" is proved in its first slot (second sample), "b" at step 3, "c" never
    def outcome(step, name, j):
        return "valid" if (name == "a" and j == 1) or (name == "b" and step == 3 and j == 0) else "fail"

    draws = run_steps(ttrl, num_prompts=4, n=2, outcome=outcome)
    first_a = next(i for i, names in enumerate(draws) if "a" in names)
    assert all("a" not in names for names in draws[first_a + 1:])
    assert all(names == ["c"] * 4 for names in draws[3:])  # only "c" open: every slot is a copy of it
    assert ttrl.problems["a"].first_success == 2 and ttrl.problems["a"].successes >= 1
    # "c" alone fills the last batch: its budget ends inside it, and the slots past the budget still run
    assert 64 <= ttrl.problems["c"].attempts < 64 + 4 * 2 and ttrl.problems["c"].first_success is None
    assert sorted(ttrl.solved()) == ["a", "b"] and ttrl.finished


def test_without_stop_on_success_a_solved_problem_stays_until_its_budget_is_spent():
    ttrl = TTRLSet(["a", "b"], budget=8, stop_on_success=False)
    draws = run_steps(ttrl, num_prompts=2, n=4, outcome=lambda step, name, j: "valid" if name == "a" else "fail")
    assert len(draws) == 2 and ttrl.problems["a"].attempts == 8 and ttrl.problems["a"].successes == 8
    assert ttrl.problems["a"].first_success == 1


def test_slots_go_over_a_budget_only_when_the_open_budgets_cannot_fill_the_batch():
    ttrl = TTRLSet(["a", "b"], budget=6, seed=1)
    ttrl.problems["a"].attempts = 4          # 2 left: one slot of n=4 covers it
    assert sorted(ttrl.draw(2, 4, step=1)) == ["a", "b"]
    assert Counter(ttrl.draw(3, 4, step=1)) == {"b": 2, "a": 1}  # b's 6 need 2 slots, a's 2 need 1
    assert Counter(ttrl.draw(4, 4, step=1)) == {"b": 2, "a": 2}   # 3 slots cover both; the 4th goes over


def test_infra_spends_no_budget_and_never_retires_a_problem():
    ttrl = TTRLSet(["a", "b"], budget=4, seed=0)

    def outcome(step, name, j):  # "a"'s checker is down for the first three steps
        return "infra" if name == "a" and step <= 3 else "fail"

    draws = run_steps(ttrl, num_prompts=1, n=4, outcome=outcome)
    a = ttrl.problems["a"]
    assert a.attempts == 4 and a.infra == 4 * sum(names == ["a"] for names in draws[:3])
    assert a.infra > 0 and a.first_success is None and ttrl.problems["b"].attempts == 4
    assert sum(names.count("a") for names in draws) == a.infra // 4 + 1  # redrawn until its budget was judged


def test_a_problem_whose_checks_keep_failing_gets_its_share_of_the_batch_not_all_of_it():
    ttrl = TTRLSet(["a", "b", "c"], budget=16, seed=2)
    for step in range(1, 5):  # "a"'s checker always fails: its attempts stay 0 while b and c spend theirs
        names = ttrl.draw(3, 4, step)
        assert sorted(names) == ["a", "b", "c"], (step, names)
        for name in names:
            for _ in range(4):
                ttrl.observe(name, valid=False, infra=name == "a")
    assert ttrl.problems["a"].attempts == 0 and ttrl.open_problems() == ["a"]
    assert ttrl.draw(3, 4, step=5) == ["a"] * 3  # alone now: it fills the batch until the step limit
    assert ttrl.step_limit(3, 4) == INFRA_HEADROOM * 2


def test_the_draw_depends_only_on_state_step_and_seed():
    def fresh(seed):
        return TTRLSet([f"p{i}" for i in range(8)], budget=32, seed=seed)

    assert fresh(0).draw(3, 4, step=5) == fresh(0).draw(3, 4, step=5)
    draws = {tuple(fresh(0).draw(3, 4, step=s)) for s in range(1, 30)}
    assert len(draws) > 10  # ties are broken differently at each step, so no problem is always first
    assert {tuple(fresh(s).draw(3, 4, step=1)) for s in range(10)} != {tuple(fresh(0).draw(3, 4, step=1))}


def test_state_round_trips_through_json_and_refuses_another_set():
    ttrl = TTRLSet(["a", "b", "c"], budget=16)
    for verdict in ("fail", "valid", "fail"):
        ttrl.observe("a", valid=verdict == "valid", infra=False)
    ttrl.observe("b", valid=False, infra=True)
    state = json.loads(json.dumps(ttrl.state_dict(step=7)))
    again = TTRLSet(["c", "b", "a"], budget=16)
    assert again.load_state_dict(state) == 7
    assert again.problems == ttrl.problems and again.open_problems() == ["c", "b"]
    larger = TTRLSet(["a", "b", "c"], budget=32, stop_on_success=False)
    larger.load_state_dict(state)
    assert larger.is_open("a")  # budget and stop rule come from the resumed run's config
    with pytest.raises(ValueError, match="differs.*not in the checkpoint: \\['d'\\]"):
        TTRLSet(["a", "b", "c", "d"], budget=16).load_state_dict(state)


def test_observe_records_reads_attempt_log_records():
    ttrl = TTRLSet(["a", "b"], budget=8)
    ttrl.observe_records([
        {"problem": "a", "infra": 0}, {"problem": "a", "infra": 1}, {"problem": "a", "infra": 0, "proof": "by simp"},
        {"problem": "b", "infra": 0},
    ])
    assert (ttrl.problems["a"].attempts, ttrl.problems["a"].infra, ttrl.problems["a"].first_success) == (2, 1, 2)
    assert ttrl.open_problems() == ["b"]


def test_errors_name_the_problem():
    with pytest.raises(ValueError, match="at least one"):
        TTRLSet([], budget=4)
    with pytest.raises(ValueError, match=r"twice.*\['a'\]"):
        TTRLSet(["a", "b", "a"], budget=4)
    with pytest.raises(ValueError, match="max_attempts"):
        TTRLSet(["a"], budget=0)
    ttrl = TTRLSet(["a"], budget=1)
    with pytest.raises(ValueError, match="'z'"):
        ttrl.observe("z", valid=False, infra=False)
    ttrl.observe("a", valid=False, infra=False)
    with pytest.raises(ValueError, match="should have ended"):
        ttrl.draw(1, 4, step=2)


def test_the_ttrl_config_block_takes_one_way_of_naming_the_set_and_a_budget():
    from sdpo_ext.config import TTRLConfig

    assert not TTRLConfig().active and TTRLConfig(theorem="t", max_attempts=8).active
    assert TTRLConfig(theorems=["a", "b"], max_attempts=8).active and TTRLConfig(split="val", max_attempts=8).active
    with pytest.raises(ValueError, match=r"one of theorem, theorems, split, not \['theorem', 'split'\]"):
        TTRLConfig(theorem="t", split="val", max_attempts=8)
    with pytest.raises(ValueError, match="sdpo.ttrl.split must be one of"):
        TTRLConfig(split="test", max_attempts=8)
    with pytest.raises(ValueError, match="sdpo.ttrl.theorems is empty"):
        TTRLConfig(theorems=[], max_attempts=8)
    with pytest.raises(ValueError, match="sdpo.ttrl.theorems needs sdpo.ttrl.max_attempts"):
        TTRLConfig(theorems=["a"])


def test_a_proof_found_past_the_budget_in_the_last_step_is_not_counted_as_solved():
    """The last step's slot runs over the budget (B=6, n=4: attempts 5..8); a proof at attempt 7 is past B, so the
    run's metrics must not count the problem solved (the discovery report counts attempts 1..B only)."""
    ttrl = TTRLSet(["a"], budget=6, seed=0)
    run_steps(ttrl, 1, 4, lambda step, name, j: "valid" if step == 2 and j == 2 else "fail")
    assert ttrl.problems["a"].attempts == 8 and ttrl.problems["a"].first_success == 7 and ttrl.finished
    assert ttrl.solved() == [] and ttrl.metrics()["sdpo_lean/ttrl_solved_problems"] == 0
    within = TTRLSet(["a"], budget=6, seed=0)  # the same step's proof at attempt 6 is within the budget
    run_steps(within, 1, 4, lambda step, name, j: "valid" if step == 2 and j == 1 else "fail")
    assert within.solved() == ["a"]


def test_a_slot_goes_first_to_an_open_problem_whose_remaining_budget_it_still_fits():
    """Budget 6, n = 4, two slots: `spent` has 1 attempt left, `fresh` its whole budget but more work so far (INFRA
    samples). The first slot goes to the least-worked (`spent`); the second must go to `fresh`, whose budget it fits,
    not to `spent` again (least work, but over its budget: 8 samples for 1 attempt left, and `fresh` none)."""
    s = TTRLSet(["spent", "fresh"], budget=6)
    for _ in range(5):
        s.observe("spent", valid=False, infra=False)
    for _ in range(10):
        s.observe("fresh", valid=False, infra=True)
    assert s.draw(2, rollout_n=4, step=1) == ["spent", "fresh"]
