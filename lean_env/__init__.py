"""Lean 4 proof checking for RL rewards (no verl imports).

Public entry points: `screen`, `extract_answer`, `build_check`, `judge`, `render_feedback`,
`verify`, `Task`, the value types, and the backends in `lean_env.backends.{kimina,repl,ray_actor}`, built from
options by `lean_env.backends.factory` (imported lazily, so `import lean_env` stays light).
"""
from lean_env.assemble import DEFAULT_HEADER, CheckPlan, build_check
from lean_env.feedback import render_feedback
from lean_env.judge import ALLOWED_AXIOMS, Judgement, judge
from lean_env.parse import Extracted, extract_answer
from lean_env.screen import ScreenResult, Statement, parse_statement, screen
from lean_env.types import LeanBackend, LeanMessage, Outcome, RunResult, Snippet, Verdict
from lean_env.verify import Task, VerifyResult, verify

__all__ = [
    "ALLOWED_AXIOMS", "DEFAULT_HEADER", "CheckPlan", "Extracted", "Judgement", "LeanBackend", "LeanMessage",
    "Outcome", "RunResult", "ScreenResult", "Snippet", "Statement", "Task", "Verdict", "VerifyResult",
    "build_check", "extract_answer", "judge", "parse_statement", "render_feedback", "screen", "verify",
]
