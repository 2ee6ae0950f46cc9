"""Evaluation: MATH accuracy, prover pass@k through the Lean reward, test-time discovery and training curves.

Modules: `stats` (Wilson/Newcombe intervals, discovery@k, bootstrap; pass@k is `sdpo_attempts.pass_at_k`), `engines`
(vLLM / transformers generation), `math_prompts`, `math_scoring` (accuracy, pass@k, maj@k, paired comparison),
`sample_log` (per-sample JSONL with resume), `math_eval` (CLI; answers are graded by `reward.math.grader`),
`prover_eval` (pass@k and best-of-k sampler, CLI), `discovery` (TTRL driver and report, CLI), `discovery_curves`
(the report's discovery@k, coverage and paired differences from attempt logs), `discovery_set` (one verl
run per method and seed over a whole problem set), `discovery_sampler` (the sampling baselines best-of-k and reprompt
over a problem set, CLI), `discovery_summary` (a report's plot, table and summary JSON),
`launch` (one process per run, its log and status), `run_checks` (the training start-up checks before a sweep's first
run, a failed run's first error line), `recheck` (offline kernel re-check of rewarded proofs, CLI over
`lean_env.recheck`), `report_recheck` (the out-of-process re-check of what the discovery and pass@k reports count:
cheats, unverified proofs), `curves` (training curves from verl's file logger, CLI).
Heavy dependencies (torch, transformers, vLLM, matplotlib) are imported where used.
"""
