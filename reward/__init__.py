"""verl reward functions: `reward.lean` (Lean proofs), `reward.math` (MATH answers) and `reward.addition` (the demo
task).

MATH grading is split in four: `math_options` (the grading options, one typed home for the recipe, the CLI and the
reward), `math_answer` (the reply's final answer; pure, linear time), `math_equal` (answer equivalence; sympy),
`math_grader` (equivalence in killable worker processes with a hard time limit).
Import the submodule you need; this package imports nothing heavy on its own.
"""
