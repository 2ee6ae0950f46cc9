"""A built-in verifiable task with textual feedback, so SDPO can be seen working without Lean or downloads.

Task: "Compute a + b" for small numbers. The answer is the last \\boxed{n} if there is one, else the last
integer in the reply. Reward 1 for the right number, else 0. Feedback says what was wrong (no number / too
large / too small): like Lean's error messages it tells the teacher *why* the attempt failed without
handing over the answer.
"""
from __future__ import annotations

import re
from typing import Any

_BOXED = re.compile(r"\\boxed\{\s*(-?\d+)\s*\}")
_INTEGER = re.compile(r"-?\d+")


def judge(solution_str: str, target: int) -> dict[str, Any]:
    answers = _BOXED.findall(solution_str or "") or _INTEGER.findall(solution_str or "")
    if not answers:
        return {"score": 0.0, "verdict": "no_answer", "infra": 0.0,
                "feedback": "Your reply has no number in it. Answer with just the number."}
    answer = int(answers[-1])
    if answer == target:
        return {"score": 1.0, "verdict": "valid", "infra": 0.0, "feedback": ""}
    side = "too large" if answer > target else "too small"
    return {"score": 0.0, "verdict": "wrong", "infra": 0.0,
            "feedback": f"Your answer {answer} is incorrect: it is {side}. Add the two numbers again carefully."}


def compute_score(data_source: str, solution_str: str, ground_truth: Any, extra_info: Any = None, **_: Any) -> dict:
    """verl reward function: ground_truth is the integer sum (as int or str)."""
    return judge(solution_str, int(ground_truth))
