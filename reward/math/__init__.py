"""The MATH reward. This face hands on what verl and the start-up checks load by name from `pkg://reward.math`:
`compute_score` and `preflight`. Absolute imports only: inside this package `math` is still the standard library's.

Modules, from the reward down:
- `score`: verl's `compute_score` and the start-up `preflight`;
- `options`: the grading options, one typed home for the recipe, the CLI and the reward;
- `grader`: `grade` a reply: extraction here, equivalence in killable `worker` processes with a hard time limit;
- `worker`: one grading worker process (`python -m reward.math.worker`, JSON lines over pipes);
- `answer`: the reply's final answer (pure, linear time), composed of `reply` (the visible reply: think blocks,
  end of turn, made-up turns), `boxes` (boxes and the final box group), `phrases` (answer phrases and the value a
  sentence states), `retraction` (a later sentence that takes the answer back) and `trailing` (the last formula or
  number of a finished reply);
- `equal`: answer equivalence (sympy), on the normal form of `canonical` and the decimal rule of `decimals`.
"""
from reward.math.score import compute_score, preflight

__all__ = ["compute_score", "preflight"]
