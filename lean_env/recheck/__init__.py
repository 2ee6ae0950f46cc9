"""Offline kernel re-check of rewarded proofs with an external Lean tool (no verl imports).

`run` re-checks stored proofs (`preflight`, `recheck_one`, `recheck`; its docstring holds the contract and where a
job's files go) with one of three tools, one module each: `comparator` (leanprover/comparator), `lean4checker`
(leanprover/lean4checker, or `leanchecker` of Lean >= 4.28) and `safeverify` (GasStationManager/SafeVerify).
`common` holds what they share (jobs, results, `ToolSetup`: the settings of `lean_env.options.RecheckOptions`
resolved for a run, a process runner that never hangs), `compile` reads
`lean --json` output, and `online` is the strict mode: the reward re-checks each proof it is about to pay for.
This face hands on the names `sdpo_eval.recheck` and the tests use.
"""
from __future__ import annotations

from lean_env.recheck.common import (
    DEFAULT_COMMANDS,
    RecheckJob,
    RecheckResult,
    Status,
    ToolRun,
    ToolSetup,
    parse_command,
    run_tool,
)
from lean_env.recheck.comparator import classify_comparator, comparator_config, comparator_sources
from lean_env.recheck.compile import parse_lean_json
from lean_env.recheck.lean4checker import classify_lean4checker
from lean_env.recheck.run import preflight, recheck, recheck_one
from lean_env.recheck.safeverify import classify_safeverify

__all__ = ["DEFAULT_COMMANDS", "RecheckJob", "RecheckResult", "Status", "ToolRun", "ToolSetup",
           "classify_comparator", "classify_lean4checker", "classify_safeverify", "comparator_config",
           "comparator_sources", "parse_command", "parse_lean_json", "preflight", "recheck", "recheck_one", "run_tool"]
