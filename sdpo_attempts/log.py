"""Append-only JSONL log of every attempt, shared by SDPO/GRPO runs and the best-of-k sampler.

One line per sample: {"problem", "method", "run_id", "step", "attempt", "seed", "response_tokens",
"verdict", "score", "infra"} plus "proof" for valid attempts. `attempt` is 1-based and counts, per problem,
every sample that was judged (infra failures are logged with infra=1 but do not consume an attempt), so in a set-TTRL
run, where one log holds every problem of the set, each record carries its problem's own attempt count.
"""
from __future__ import annotations

import json
import os
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

RUN_ID_FILE = "sdpo_run_id.txt"


def within_budget(attempt: int, budget: int) -> bool:
    """Whether the judged attempt numbered `attempt` counts against a budget of `budget` attempts: 1 <= attempt <= B.
    A TTRL run's last step may overshoot B (n samples a prompt); those attempts are logged, but a proof among them
    solves nothing, for the run (`TTRLSet.solved`) and for the discovery report alike."""
    return 1 <= attempt <= budget


@dataclass
class AttemptLog:
    """The attempt log of one run: appends a line per judged or INFRA sample to `path` (None: counts only), keeping
    each problem's attempt count."""

    path: str | None
    method: str
    run_id: str
    seed: int
    _attempts: dict = field(default_factory=lambda: defaultdict(int))

    def __post_init__(self) -> None:
        if self.path:
            os.makedirs(os.path.dirname(os.path.abspath(self.path)) or ".", exist_ok=True)
            self._restore_counts()

    def _restore_counts(self) -> None:
        """Continue the per-problem attempt counters of this run_id from the log."""
        for rec in self.run_records():
            if not rec.get("infra"):
                self._attempts[rec["problem"]] = max(self._attempts[rec["problem"]], rec["attempt"])

    def run_records(self, after_step: int | None = None) -> list[dict[str, Any]]:
        """This run_id's records (of the steps after `after_step` when given), in log order; none without a log."""
        if not self.path or not os.path.exists(self.path):
            return []
        with open(self.path) as handle:
            records = [json.loads(line) for line in handle if line.strip()]
        return [rec for rec in records if rec.get("run_id") == self.run_id
                and (after_step is None or rec.get("step", 0) > after_step)]

    def save_run_id(self, checkpoint_dir: str) -> None:
        """Store this run's id with a trainer checkpoint, so a resumed run continues its attempt counts."""
        os.makedirs(checkpoint_dir, exist_ok=True)
        with open(os.path.join(checkpoint_dir, RUN_ID_FILE), "w") as handle:
            handle.write(self.run_id)

    def resume_from(self, checkpoint_dir: str) -> bool:
        """Take the run id stored with the checkpoint and continue its counters over every attempt logged under
        it (attempts judged after that checkpoint by the interrupted process count as spent budget). False when
        the checkpoint holds no run id (then this process's attempts start at 1 under a new id)."""
        path = os.path.join(checkpoint_dir, RUN_ID_FILE)
        if not os.path.exists(path):
            return False
        with open(path) as handle:
            self.run_id = handle.read().strip()
        self._attempts.clear()
        if self.path:
            self._restore_counts()
        return True

    def record(self, step: int, samples: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """samples: dicts with problem, response_tokens, verdict, score, infra, sample_key, proof (optional)."""
        records = []
        for sample in samples:
            infra = bool(sample.get("infra", 0.0))
            if not infra:
                self._attempts[sample["problem"]] += 1
            rec = {
                "problem": sample["problem"],
                "method": self.method,
                "run_id": self.run_id,
                "step": step,
                "attempt": self._attempts[sample["problem"]],
                "seed": self.seed,
                "sample_key": sample.get("sample_key"),
                "response_tokens": int(sample["response_tokens"]),
                "verdict": sample.get("verdict"),
                "score": float(sample["score"]),
                "infra": int(infra),
            }
            if sample.get("proof") is not None:
                rec["proof"] = sample["proof"]
            records.append(rec)
        if self.path and records:
            with open(self.path, "a") as handle:
                for rec in records:
                    handle.write(json.dumps(rec) + "\n")
        return records
