"""Set-TTRL bookkeeping: which problems a step draws, when a problem retires, when the run ends (stdlib and
sdpo_attempts only).

A set of problems (`sdpo.ttrl.theorems`, a split, or the one `sdpo.ttrl.theorem`: a set of one) is trained on in
one run. Each problem has its own attempt budget B (`sdpo.ttrl.max_attempts`), counted in judged attempts of that
problem, the same count as the attempt log's `attempt` field.

Invariant (what `SDPOTrainer` relies on):
- A problem is *open* while it has budget left (attempts < B) and, with `stop_on_success`, no valid proof yet. It
  retires for good once it is not open; the run ends when no problem is open (every problem solved or every
  budget spent).
- Batch fill: `draw(num_prompts, n, step)` always returns exactly `num_prompts` names, all open: the step's prompt
  slots are resampled from the open problems, so every step's batch keeps its size while problems retire. Each
  slot goes to the open problem with the least work so far (samples drawn for it: judged attempts + INFRA samples,
  + n per slot already given to it this step; ties broken by a seeded draw), first among the problems whose
  remaining budget (B − judged attempts) a slot still fits; when every open problem's budget is covered, the last
  slots go over it (as single-theorem TTRL's last step overshoots when n does not divide B). Budgets are so spent
  at an even pace, and a set smaller than the batch gets several prompt copies per problem (each its own GRPO group
  of n).
- INFRA (a sample the checker could not judge: server down, timeout) spends no attempt, never retires or
  penalises a problem, and the problem is redrawn. Its samples still count as work in the draw, so a problem
  whose checks keep failing gets its share of the slots, not all of them. A run whose infrastructure keeps failing
  ends at `step_limit`: `INFRA_HEADROOM` times the steps its budgets need without INFRA, with the unspent budgets in
  its metrics.
- `draw` depends only on (state, step, seed). `state_dict` / `load_state_dict` carry the solved set and every count
  through a checkpoint (JSON). A resumed run also counts the attempts the interrupted process judged after its
  checkpoint (spent budget, and a proof found stays found), so it draws from those counts: not necessarily what the
  interrupted run drew at the same steps, but no budget is spent twice.
"""
from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from sdpo_attempts.log import within_budget

# why 2: a run may take twice the steps its budgets need when nothing fails, so that INFRA samples (no budget
# spent) can be redrawn; a Lean server that fails on more than half of the samples ends the run at this limit.
INFRA_HEADROOM = 2.0
STATE_VERSION = 1


@dataclass
class ProblemState:
    """One problem's counts: judged attempts, INFRA samples (not attempts), valid proofs, first valid attempt."""

    attempts: int = 0
    infra: int = 0
    successes: int = 0
    first_success: int | None = None


class TTRLSet:
    """The open/retired state of every problem of a set-TTRL run (see the module docstring)."""

    def __init__(self, problems: Sequence[str], budget: int, stop_on_success: bool = True, seed: int = 0):
        if not problems:
            raise ValueError("error: a TTRL set needs at least one problem (set sdpo.ttrl.theorems)")
        duplicates = sorted(name for name, count in Counter(problems).items() if count > 1)
        if duplicates:
            raise ValueError(f"error: problems listed twice in the TTRL set: {duplicates} (names must be unique)")
        if budget < 1:
            raise ValueError(f"error: sdpo.ttrl.max_attempts must be >= 1, got {budget}")
        self.budget = int(budget)
        self.stop_on_success = bool(stop_on_success)
        self.seed = int(seed)
        self.problems: dict[str, ProblemState] = {name: ProblemState() for name in problems}

    # ------------------------------------------------------------------ state
    def is_open(self, name: str) -> bool:
        """Whether `name` still has budget and, with stop_on_success, no valid proof yet."""
        state = self.problems[name]
        return state.attempts < self.budget and not (self.stop_on_success and state.successes > 0)

    def open_problems(self) -> list[str]:
        """The open problems, in the set's order."""
        return [name for name in self.problems if self.is_open(name)]

    @property
    def finished(self) -> bool:
        """No problem is open: every one solved (with stop_on_success) or its budget spent."""
        return not self.open_problems()

    def solved(self) -> list[str]:
        """Problems with a valid proof within their budget: a proof from the last slot's overshoot (attempt > B) is
        logged but, as in the discovery report, does not count."""
        return [name for name, state in self.problems.items()
                if state.first_success is not None and within_budget(state.first_success, self.budget)]

    # ------------------------------------------------------------------ drawing
    def draw(self, num_prompts: int, rollout_n: int, step: int, among: Sequence[str] | None = None) -> list[str]:
        """Exactly `num_prompts` open problems for this step's prompts (a name repeats when the batch is larger than
        the open set). Slot by slot: the least-worked open problem, where work = attempts + infra + rollout_n × slots
        given this step, first among those whose remaining budget B − attempts exceeds rollout_n × slots given.
        `among` narrows the candidates (the single protocol's one current problem: `sdpo_ext.ttrl.queue`)."""
        if num_prompts < 1 or rollout_n < 1:
            raise ValueError(f"need num_prompts >= 1 and rollout_n >= 1, got {num_prompts}, {rollout_n}")
        candidates = [name for name in self.open_problems() if among is None or name in among]
        if not candidates:
            which = "every problem of the TTRL set is" if among is None else f"each of {list(among)[:5]} is"
            raise ValueError(f"error: {which} solved or out of budget (the run should have ended or moved on; "
                             f"see TTRLSet.finished)")
        rng = random.Random(f"{self.seed}:{step}")
        tiebreak = {name: rng.random() for name in candidates}
        given = dict.fromkeys(candidates, 0)

        def work(name: str) -> tuple[int, float]:
            state = self.problems[name]
            return state.attempts + state.infra + rollout_n * given[name], tiebreak[name]

        drawn = []
        for _ in range(num_prompts):
            within = [p for p in candidates if rollout_n * given[p] < self.budget - self.problems[p].attempts]
            choice = min(within or candidates, key=work)
            given[choice] += 1
            drawn.append(choice)
        return drawn

    def step_limit(self, num_prompts: int, rollout_n: int) -> int:
        """Steps the run may take: INFRA_HEADROOM × ceil(Σ_open ceil((B − attempts) / n) / num_prompts), at least 1
        (without INFRA each slot spends n of one open problem's budget, so the budgets need the inner count)."""
        slots = sum(math.ceil((self.budget - self.problems[p].attempts) / rollout_n) for p in self.open_problems())
        return max(1, math.ceil(INFRA_HEADROOM * math.ceil(slots / num_prompts)))

    # ------------------------------------------------------------------ outcomes
    def observe(self, name: str, *, valid: bool, infra: bool) -> None:
        """One judged sample (or INFRA sample) of `name`, in the attempt log's order."""
        if name not in self.problems:
            raise ValueError(f"error: sample of {name!r}, which is not in the TTRL set ({len(self.problems)} "
                             f"problems; the dataset and the set disagree)")
        state = self.problems[name]
        if infra:
            state.infra += 1
            return
        state.attempts += 1
        if valid:
            state.successes += 1
            if state.first_success is None:
                state.first_success = state.attempts

    def observe_records(self, records: Sequence[dict[str, Any]]) -> None:
        """Attempt-log records (`sdpo_attempts.log`): a record holds `proof` exactly when its attempt was valid."""
        for rec in records:
            self.observe(rec["problem"], valid="proof" in rec, infra=bool(rec.get("infra")))

    def metrics(self) -> dict[str, float]:
        """Run bookkeeping for the step's metrics (`sdpo_lean/ttrl_*`)."""
        open_now = self.open_problems()
        return {
            "sdpo_lean/ttrl_problems": len(self.problems),
            "sdpo_lean/ttrl_solved_problems": len(self.solved()),
            "sdpo_lean/ttrl_open_problems": len(open_now),
            "sdpo_lean/ttrl_attempts": sum(s.attempts for s in self.problems.values()),
            "sdpo_lean/ttrl_infra_samples": sum(s.infra for s in self.problems.values()),
            "sdpo_lean/ttrl_unspent_attempts": sum(self.budget - self.problems[p].attempts for p in open_now),
        }

    # ------------------------------------------------------------------ checkpoints
    def state_dict(self, step: int) -> dict[str, Any]:
        """JSON-ready state after `step`; the budget and stop rule come from the config, not from here."""
        return {"version": STATE_VERSION, "step": int(step),
                "problems": {name: asdict(state) for name, state in self.problems.items()}}

    def load_state_dict(self, state: dict[str, Any]) -> int:
        """Take every problem's counts from `state_dict`'s output; returns its step. The problems must be the same
        set (a different set is another run); a changed budget applies from here on."""
        if state.get("version") != STATE_VERSION:
            raise ValueError(f"error: TTRL set state version {state.get('version')!r}, expected {STATE_VERSION}")
        saved = state["problems"]
        if set(saved) != set(self.problems):
            missing, extra = sorted(set(self.problems) - set(saved)), sorted(set(saved) - set(self.problems))
            raise ValueError(f"error: the checkpoint's TTRL set differs from this run's (not in the checkpoint: "
                             f"{missing[:5]}, only in the checkpoint: {extra[:5]}; resume with the same "
                             f"sdpo.ttrl.theorems)")
        for name, counts in saved.items():
            self.problems[name] = ProblemState(**counts)
        return int(state["step"])
