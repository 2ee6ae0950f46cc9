"""Evaluation: MATH accuracy, prover pass@k through the Lean reward, and test-time discovery curves.

Modules: `stats` (Wilson/Newcombe intervals, pass@k, discovery@k, bootstrap), `engines` (vLLM / transformers
generation), `math_prompts`, `math_scoring` (accuracy, pass@k, maj@k, paired comparison), `sample_log` (per-sample
JSONL with resume), `math_eval` (CLI; answers are graded by `reward.math_grader`), `prover_eval` (pass@k and best-of-k
sampler, CLI), `discovery` (TTRL driver and report, CLI).
Heavy dependencies (torch, transformers, vLLM, matplotlib) are imported where used.
"""
