"""The MATH reward: `score` (verl's `compute_score` and the start-up `preflight`), `options` (the grading options, one
typed home for the recipe, the CLI and the reward), `answer` (the reply's final answer; pure, linear time), `equal`
(answer equivalence; sympy), `grader` (equivalence in killable worker processes with a hard time limit).
This face hands on what verl and the start-up checks load by name from `pkg://reward.math`. Absolute imports only:
inside this package `math` is still the standard library's.
"""
from reward.math.score import compute_score, preflight

__all__ = ["compute_score", "preflight"]
