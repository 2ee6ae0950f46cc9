"""Evaluation: MATH accuracy, prover pass@k through the Lean reward, test-time discovery and training curves.

Modules: `answers` (boxed-answer extraction, math-verify grading), `stats` (Wilson/Newcombe intervals,
pass@k, discovery@k, bootstrap), `engines` (vLLM / transformers generation), `math_prompts`,
`math_eval` (CLI), `prover_eval` (pass@k and best-of-k sampler, CLI), `discovery` (TTRL driver and report, CLI), `curves` (training curves from verl's file logger, CLI).
Heavy dependencies (torch, transformers, vLLM, math-verify, matplotlib) are imported where used.
"""
