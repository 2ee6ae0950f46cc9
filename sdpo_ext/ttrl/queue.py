"""Single-problem TTRL over a set in one run (`sdpo.ttrl.protocol=single`): which problem is trained, when the run
moves on, and when the actor must go back to its initial state (stdlib only, over `sdpo_ext.ttrl.problem_set`).

Invariant (what `sdpo_ext.ttrl.hooks` relies on):
- The problems are trained one at a time, in the set's order. A problem is *current* from the step after the
  previous one left until it leaves itself: it retired in the set (solved, with stop_on_success, or its budget
  spent) or it used `steps_per_problem` steps, the step limit a fresh `sdpo.ttrl.theorem=` run on it alone would have
  (`TTRLSet.step_limit` of a set of one; INFRA samples make a run use more steps than its budget needs).
- A step draws the current problem only (`TTRLSet.draw(among=[current])`): the draw of a fresh run on it alone.
- `weights_of` names the problem whose updates the actor's weights carry (None: the initial state). A problem's first
  step must start from the initial state, so `needs_reset` holds when the weights carry another problem's updates;
  the trainer then restores the actor's initial checkpoint and says so (`reset_done`).
- `state_dict` carries the position, the current problem's steps and `weights_of` through a checkpoint beside the
  set's counts. A resumed run `replay`s the attempts the interrupted process judged after its checkpoint (its
  budget is spent, a proof found stays found, and the queue moves on as it did); the weights are the checkpoint's,
  so `weights_of` stays the checkpoint's, and a replay that moved past that problem leaves `needs_reset` set.
"""
from __future__ import annotations

from collections.abc import Sequence
from itertools import groupby
from typing import Any

from sdpo_ext.ttrl.problem_set import TTRLSet

QUEUE_STATE_VERSION = 1


class ProblemQueue:
    """The single protocol's order over a `TTRLSet` (see the module docstring)."""

    def __init__(self, ttrl_set: TTRLSet, prompts_per_step: int, rollout_n: int):
        self.set = ttrl_set
        self.order = list(ttrl_set.problems)
        self.steps_per_problem = TTRLSet(self.order[:1], ttrl_set.budget, ttrl_set.stop_on_success).step_limit(
            prompts_per_step, rollout_n)
        self.position = 0
        self.problem_steps = 0
        self.weights_of: str | None = None

    @property
    def current(self) -> str | None:
        """The problem being trained; None once the queue is done."""
        return self.order[self.position] if self.position < len(self.order) else None

    @property
    def finished(self) -> bool:
        """Every problem left the queue."""
        return self.current is None

    @property
    def needs_reset(self) -> bool:
        """The current problem's next step would start from another problem's updates."""
        return self.current is not None and self.weights_of not in (None, self.current)

    def reset_done(self) -> None:
        """The actor is back in its initial state."""
        self.weights_of = None

    def trained(self, name: str) -> None:
        """The actor's weights now carry an update on `name`."""
        self.weights_of = name

    def draw(self, num_prompts: int, rollout_n: int, step: int) -> list[str]:
        """This step's prompts, all of the current problem; counts the step as one of its steps."""
        if self.current is None:
            raise ValueError("error: every problem of the TTRL queue is done (the run should have ended)")
        self.problem_steps += 1
        return self.set.draw(num_prompts, rollout_n, step, among=[self.current])

    def advance(self) -> str | None:
        """After a step's samples were counted in the set: moves past the current problem if it retired or used its
        steps (and past any later one that retired already, as a replay can leave them). Returns the problem that
        left, or None."""
        current = self.current
        if current is None or (self.set.is_open(current) and self.problem_steps < self.steps_per_problem):
            return None
        self.position += 1
        self.problem_steps = 0
        while self.current is not None and not self.set.is_open(self.current):
            self.position += 1
        return current

    def steps_left(self) -> int:
        """The most steps the queue may still take: the current problem's left, then a full limit per later one."""
        if self.current is None:
            return 0
        later = len(self.order) - self.position - 1
        return self.steps_per_problem - self.problem_steps + later * self.steps_per_problem

    def replay(self, records: Sequence[dict[str, Any]]) -> list[str]:
        """Attempt-log records (`sdpo_attempts.log`) judged after the checkpoint, step by step: counted in the set,
        each step one of its problem's steps, the queue moving on as the interrupted process did. Returns the
        problems that left meanwhile."""
        left = []
        for _, step_records in groupby(records, key=lambda rec: rec["step"]):
            step_records = list(step_records)
            self.set.observe_records(step_records)
            if any(rec["problem"] == self.current for rec in step_records):
                self.problem_steps += 1
            if (name := self.advance()) is not None:  # the next current problem is open: one leaves a step at most
                left.append(name)
        return left

    def metrics(self) -> dict[str, float]:
        """Run bookkeeping for the step's metrics (`sdpo_lean/ttrl_queue_*`)."""
        return {"sdpo_lean/ttrl_queue_position": self.position,
                "sdpo_lean/ttrl_queue_problem_steps": self.problem_steps}

    def state_dict(self) -> dict[str, Any]:
        """JSON-ready position in the queue (the set's counts are saved by the set)."""
        return {"version": QUEUE_STATE_VERSION, "order": self.order, "position": self.position,
                "problem_steps": self.problem_steps, "weights_of": self.weights_of}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Take `state_dict`'s output; the order must be this run's (another order is another run)."""
        if state.get("version") != QUEUE_STATE_VERSION:
            raise ValueError(f"error: TTRL queue state version {state.get('version')!r}, expected "
                             f"{QUEUE_STATE_VERSION}")
        if state["order"] != self.order:
            raise ValueError("error: the checkpoint's TTRL queue has another order of problems than this run's "
                             "(resume with the same sdpo.ttrl.theorems, in the same order)")
        self.position, self.problem_steps = int(state["position"]), int(state["problem_steps"])
        self.weights_of = state["weights_of"]
