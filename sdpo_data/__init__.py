"""Dataset preparation (verl parquet) for miniF2F, ProofNet, MATH and the built-in demo tasks.

`prepare` (the CLI: `python -m sdpo_data.prepare lean|math`) over `sources` (raw records from a file or the hub),
`lean_rows` and `math_rows` (a problem to a row), `statement_defects` (miniF2F statements the field reported as
defective, flagged in the rows), `prompts` (the prompt styles of the models); the one-GPU demos:
`smollm2` (SmolLM2-135M from a PyPI package, no model hub), `addition_rows` (the addition task), `toy_lean` (toy
theorems for TTRL without Lean).
"""
