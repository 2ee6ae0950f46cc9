"""Append-only JSONL log of every attempt, shared by SDPO/GRPO runs and the best-of-k sampler.

One line per sample: {"problem", "method", "run_id", "step", "attempt", "seed", "response_tokens",
"verdict", "score", "infra"} plus "proof" for valid attempts. `attempt` is 1-based and counts, per problem,
every sample that was judged (infra failures are logged with infra=1 but do not consume an attempt).
"""
from __future__ import annotations

import json
import os
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Optional


@dataclass
class AttemptLog:
    path: Optional[str]
    method: str
    run_id: str
    seed: int
    _attempts: dict = field(default_factory=lambda: defaultdict(int))

    def __post_init__(self) -> None:
        if self.path:
            os.makedirs(os.path.dirname(os.path.abspath(self.path)) or ".", exist_ok=True)
            self._restore_counts()

    def _restore_counts(self) -> None:
        """On resume, continue the per-problem attempt counters of this run_id."""
        if not os.path.exists(self.path):
            return
        with open(self.path) as handle:
            for line in handle:
                rec = json.loads(line)
                if rec.get("run_id") == self.run_id and not rec.get("infra"):
                    self._attempts[rec["problem"]] = max(self._attempts[rec["problem"]], rec["attempt"])

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
