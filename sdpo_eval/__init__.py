"""Evaluation: MATH accuracy, prover pass@k through the Lean reward, test-time discovery and training curves.

Modules: `stats` (Wilson/Newcombe intervals, discovery@k, bootstrap; pass@k is `sdpo_attempts.pass_at_k`), `engines`
(vLLM / transformers generation), `math_prompts`, `math_scoring` (accuracy, pass@k, maj@k, paired comparison),
`sample_log` (per-sample JSONL with resume), `math_eval` (CLI; answers are graded by `reward.math.grader`),
`prover_eval` (pass@k, CLI), `discovery` (test-time discovery in one home: the table of methods and protocols, the
best-of-k and reprompt sampler, the launcher `python -m sdpo_eval.discovery run`, the one report), `recheck`
(offline kernel re-check of rewarded proofs, CLI over `lean_env.recheck`), `report_recheck` (the out-of-process
re-check of what the discovery and pass@k reports count: cheats, unverified proofs), `curves` (training curves from
verl's file logger, CLI).
Heavy dependencies (torch, transformers, vLLM, matplotlib) are imported where used.
"""
