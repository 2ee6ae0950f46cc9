"""A built-in verifiable task with textual feedback, so SDPO can be seen working without Lean or downloads.

Task: "What is a plus b?" for small numbers. The answer is the last \\boxed{n} if there is one, else the last
integer in the reply. Reward 1 for the right number, else 0. Feedback says what was wrong (no number / too
large / too small): like Lean's error messages it tells the teacher *why* the attempt failed without
handing over the answer.

Besides the score, every result carries ``content_correct``: whether the FIRST integer in the reply that is not
one of the two operands is the sum. It does not grow with reply length (numbers rambled after the first answer
do not count), so a score that rises only because longer replies happen to end on the right number shows up as a
gap between the two.
"""
from __future__ import annotations

import re
from typing import Any

_BOXED = re.compile(r"\\boxed\{\s*(-?\d+)\s*\}")
_INTEGER = re.compile(r"-?\d+")


def first_answer(solution_str: str, operands: tuple[int, ...]) -> int | None:
    """The first integer in the reply that is not an operand (None if there is none)."""
    for token in _INTEGER.findall(solution_str or ""):
        if int(token) not in operands:
            return int(token)
    return None


def grade_reply(solution_str: str, target: int, operands: tuple[int, ...] = ()) -> dict[str, Any]:
    """Score, verdict, feedback and ``content_correct`` of one reply (see the module docstring)."""
    content = float(first_answer(solution_str, operands) == target)
    answers = _BOXED.findall(solution_str or "") or _INTEGER.findall(solution_str or "")
    if not answers:
        return {"score": 0.0, "verdict": "no_answer", "infra": 0.0, "content_correct": content, "pred": "",
                "feedback": "Your reply has no number in it. Answer with just the number."}
    answer = int(answers[-1])
    graded = {"infra": 0.0, "content_correct": content, "pred": str(answer)}  # pred: verl's maj@N vote key
    if answer == target:
        return {"score": 1.0, "verdict": "valid", "feedback": "", **graded}
    side = "too large" if answer > target else "too small"
    return {"score": 0.0, "verdict": "wrong", **graded,
            "feedback": f"Your answer {answer} is incorrect: it is {side}. Add the two numbers again carefully."}


def compute_score(data_source: str, solution_str: str, ground_truth: Any, extra_info: Any = None, **_: Any) -> dict:
    """verl reward function: ground_truth is the integer sum (as int or str); extra_info["operands"] the two
    numbers added (rows written before they were recorded grade content against no operands)."""
    operands = extra_info.get("operands", ()) if isinstance(extra_info, dict) else ()
    return grade_reply(solution_str, int(ground_truth), tuple(int(x) for x in operands))
