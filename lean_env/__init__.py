"""Lean 4 proof checking for RL rewards (no verl imports).

One proof's path, wired by `verify`: `parse` (the answer block) -> `screen` (an allowlist of commands over the tokens
of `lexer` and `commands`, with the rules of `rules`, `meta_code` and `evaluated` and the tables of `tables/`) ->
`assemble` (the file that is checked) -> a backend of `backends/` -> `judge` (the verdict) -> `feedback` (the
teacher's text).
Beside it: `types` (the value types), `options` (each setting's one typed home), `text` (source text helpers),
`version` (which Lean a backend runs), `recheck/` (the offline and strict kernel re-check), `testing/` (the Lean
doubles), `cli_checks` (what every command-line tool checks before work: outputs, inputs, the Lean backend).

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
