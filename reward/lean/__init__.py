"""The Lean reward: `score` (verl's `compute_score` and the start-up `preflight`), `cli` (`python -m reward.lean.cli
verify`), `verdict_file` (the CLI's output), `verl_manager` (the recipes' reward manager; imports verl).
This face hands on what verl and the start-up checks load by name from `pkg://reward.lean`; import the rest from its
module. It may import `lean_env` and the shared `reward` modules (`reward.truncation`, `reward.call_kwargs`), never
`sdpo_ext`.
"""
from reward.lean.score import compute_score, preflight

__all__ = ["compute_score", "preflight"]
