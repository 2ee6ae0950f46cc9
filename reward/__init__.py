"""verl reward functions: `reward.lean` (Lean proofs) and `reward.math` (MATH answers).

Import the submodule you need; this package imports nothing heavy on its own.
"""
