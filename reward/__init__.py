"""verl reward functions: `reward.lean` (Lean proofs), `reward.math` (MATH answers) and `reward.addition` (the demo
task); `reward.truncation` (finish reasons from token counts) and `reward.call_kwargs` (what verl passes beside
the options) are shared.

Each reward is a package that names its grading: `reward.lean` (score, cli, verdict_file, verl_manager; the backends
are `lean_env`'s) and `reward.math` (score, options, grader, worker, answer, equal and their parts; its docstring
lists them). `reward.cli` only says where its command moved (`reward.lean.cli`). Import the submodule you need; this
package imports nothing heavy on its own.
"""
