"""Append-only JSONL log of every attempt, shared by SDPO/GRPO runs and the best-of-k sampler.

One line per sample: {"problem", "method", "run_id", "step", "attempt", "seed", "response_tokens",
"verdict", "score", "infra"} plus "proof" for valid attempts. `attempt` is 1-based and counts, per problem,
every sample that was judged (infra failures are logged with infra=1 but do not consume an attempt), so in a set-TTRL
run, where one log holds every problem of the set, each record carries its problem's own attempt count.

A run killed while writing leaves its last line cut. `read_records` (the one reader of a log) leaves such a line out
with a warning; `AttemptLog`, resuming, moves it to `<log>.cut` (kept, not dropped silently) so that its appends
stay whole lines. A bad line anywhere else is an error: only the last line can be cut by a kill.
"""
from __future__ import annotations

import json
import os
import warnings
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

RUN_ID_FILE = "sdpo_run_id.txt"
CUT_SUFFIX = ".cut"  # where a resumed log's cut last line is kept


def read_records(path: str | os.PathLike) -> list[dict[str, Any]]:
    """Every record of the log at `path`, in order; a cut last line is left out with a warning, a bad line before
    it is a ValueError naming the line."""
    with open(path, encoding="utf-8") as handle:
        lines = [(number, line) for number, line in enumerate(handle, 1) if line.strip()]
    records = []
    for i, (number, line) in enumerate(lines):
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as e:
            if i != len(lines) - 1 or line.endswith("\n"):
                raise ValueError(f"error: {path}, line {number}: not an attempt record ({e.msg}; only the last "
                                 "line, cut by a killed run, may be incomplete)") from e
            warnings.warn(f"{path}: cut last line left out (a run killed while writing): {line[:60]!r}",
                          stacklevel=2)
    return records


def _set_aside_cut_tail(path: str) -> None:
    """Make the log at `path` end with a whole line: a cut last line moves to `<path>.cut` (with a warning), a whole
    last record written without its newline gets one."""
    with open(path, "rb") as handle:
        data = handle.read()
    if not data or data.endswith(b"\n"):
        return
    start = data.rfind(b"\n") + 1
    tail = data[start:]
    try:
        json.loads(tail)
    except ValueError:
        with open(path + CUT_SUFFIX, "ab") as kept:
            kept.write(tail + b"\n")
        with open(path, "r+b") as handle:
            handle.truncate(start)
        warnings.warn(f"{path}: cut last line (a run killed while writing) moved to {path + CUT_SUFFIX}",
                      stacklevel=3)
        return
    with open(path, "ab") as handle:
        handle.write(b"\n")


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
            if os.path.exists(self.path):
                _set_aside_cut_tail(self.path)
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
        return [rec for rec in read_records(self.path) if rec.get("run_id") == self.run_id
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
