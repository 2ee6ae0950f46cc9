"""One judged sample of a training step: the record `SDPOTrainer` builds once per step from verl's batch and hands to
the attempt log, the TTRL set's bookkeeping and the teacher fields (stdlib only, no verl).

A valid sample, the one rule (`is_valid`, kept in `sdpo_attempts.valid` where the samplers and reports read it too)
for training and validation alike: the reward's verdict is "valid", or, for a reward without verdicts (MATH answer
checking through a plain score), the score is full (>= 1.0). A masked sample
(an infrastructure failure, or verl's balancing padding) is never valid: it says nothing about the model, and it is
never trained on, never a GRPO baseline and never a teacher signal.
"""
from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any

from sdpo_attempts.valid import is_valid

__all__ = ["JudgedSample", "is_valid"]


@dataclass(frozen=True, kw_only=True)
class JudgedSample:
    """One rollout sample of a step with its reward's judgement, in TransferQueue order."""

    key: str  # the sample's TransferQueue key
    uid: Hashable  # its GRPO group (one prompt)
    problem: str  # the problem's name (the row's extra_info `name`; else the uid)
    score: float  # the reward: the sum of its token-level scores
    text: str  # the decoded response
    response_tokens: int
    verdict: str | None = None  # the reward's verdict; None: a reward without verdicts
    feedback: str = ""  # the environment's feedback on the response ("": none)
    infra: bool = False  # the reward flagged an infrastructure failure (no verdict on the response)
    padding: bool = False  # verl's balancing padding, not a sample of the model's

    @classmethod
    def from_reward(cls, reward_info: Mapping[str, Any], **fields: Any) -> JudgedSample:
        """The record of a sample whose reward returned `reward_info` (verl's `reward_extra_info`: `verdict`,
        `feedback`, `infra` > 0 for an infrastructure failure; each optional); `fields` give the rest."""
        return cls(
            verdict=reward_info.get("verdict"),
            feedback=str(reward_info.get("feedback", "") or ""),
            infra=float(reward_info.get("infra", 0.0) or 0.0) > 0,
            **fields,
        )

    @property
    def masked(self) -> bool:
        """An infrastructure failure or padding: never trained on, never a baseline, never a teacher signal."""
        return self.infra or self.padding

    @property
    def valid(self) -> bool:
        """Not masked, and valid by `is_valid`."""
        return not self.masked and is_valid(self.score, self.verdict)

    def attempt(self) -> dict[str, Any]:
        """The sample as `sdpo_attempts.log.AttemptLog.record` takes it; the proof (the response) only if valid."""
        return {
            "problem": self.problem,
            "sample_key": self.key,
            "response_tokens": self.response_tokens,
            "verdict": self.verdict,
            "score": self.score,
            "infra": float(self.infra),
            "proof": self.text if self.valid else None,
        }
