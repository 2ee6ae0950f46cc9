"""The one rule for a valid attempt, read by training (`sdpo_ext.judged`), the samplers and every report (stdlib
only).

A valid attempt solved its problem: the reward's verdict is "valid", or, for a reward without verdicts (MATH answer
checking through a plain score), the score is full (>= 1.0). A record flagged infra (an infrastructure failure, no
verdict on the response) is never valid.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

FULL_SCORE = 1.0  # a reward without verdicts marks a solved sample by this score


def is_valid(score: float, verdict: str | None) -> bool:
    """Whether a judged sample solved its problem: `verdict == "valid"`, or `score >= 1.0` where the reward gives no
    verdict (None)."""
    return verdict == "valid" if verdict is not None else score >= FULL_SCORE


def valid_record(record: Mapping[str, Any]) -> bool:
    """Whether a record (an attempt-log line, a reward's result dict) is valid: not infra, and `is_valid` on its
    score (missing or not a number: 0) and verdict (missing: None)."""
    if record.get("infra"):
        return False
    score = record.get("score")
    return is_valid(float(score) if isinstance(score, (int, float)) else 0.0, record.get("verdict"))
