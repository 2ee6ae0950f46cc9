"""Offline kernel re-check of rewarded proofs with an external Lean tool (no verl imports).

For each rewarded proof the stored model output is screened again, written as standalone Lean files into a Lean
project the user provides, and checked by one of three tools (each read in its sources; one module each here):

* `comparator` (leanprover/comparator): `Challenge.lean` is the trusted header and the dataset statement with
  `sorry`, `Solution.lean` the header, the model's helpers and the statement with the model's proof. The tool builds
  both in a sandbox, exports them, checks that every constant the statement uses is the same in both, that the
  solution uses only the permitted axioms, and replays the solution into the kernel. Run as
  `lake env <comparator> <config.json>` in the project; it prints `Your solution is okay!` and exits 0, or exits 1
  with `uncaught exception: <reason>` on stderr. Its progress lines (`Building M`, `Exporting … from M`) tell which
  stage failed: a failure while building or exporting the trusted challenge is infra, not a verdict on the proof.
* `lean4checker` (leanprover/lean4checker; `leanchecker` ships with Lean >= 4.28 and has the same CLI): the exact
  file the online reward checked (header, reference axiom, helpers, statement, proof, axiom audit, statement check)
  is compiled with `lake env lean --json -o`, the messages are judged by `lean_env.judge` exactly as online, and
  `lake env lean4checker <module>` replays the module's declarations into the kernel: exit 0 confirms; exit 1 with
  `lean4checker found a problem in <module>` and `uncaught exception: <kernel error>` rejects.
* `safeverify` (GasStationManager/SafeVerify): the challenge and the solution are compiled to .olean files and
  `lake env safe_verify target.olean submission.olean` replays both into the kernel and compares the declarations'
  kinds and types and the axioms used.

`common` holds what the runners share (jobs, results, running a tool), `compile` reads `lean --json` output, and
`online` is the strict mode: the reward re-checks each proof it is about to pay for.

Contract: `recheck_one` never raises; every job gets one `RecheckResult` with status
  confirmed  the tool accepted the proof
  rejected   the tool (or today's screen, or the offline compile) refused it; `message` holds the reason
  infra      the tool could not give a verdict: not installed, crashed, timed out, printed something unexpected,
             or the trusted challenge failed; says nothing about the proof.
Each tool run is killed with its whole process group after `timeout_s`.

Files: each runner writes a job's files under the project in paths named by its key (its module docstring lists
them) and records them in a `JobFiles`. With `ToolConfig.keep_files` (the default, the offline CLI: one stable key
per log line, so a re-run overwrites them, and they are the evidence to inspect a rejected proof) they stay; without
it (the strict online mode, a fresh key per paid proof) the runner removes them when it returns or raises, whatever
the verdict, so no caller needs to know where they are. The shared parent folders stay.
"""
from __future__ import annotations

import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed

from lean_env.recheck.common import (
    DEFAULT_COMMANDS,
    DEFAULT_LIB,
    TOOLS,
    RecheckJob,
    RecheckResult,
    Status,
    ToolConfig,
    ToolRun,
    parse_command,
    run_tool,
)
from lean_env.recheck.comparator import classify_comparator, comparator_config, comparator_sources, run_comparator
from lean_env.recheck.compile import parse_lean_json
from lean_env.recheck.lean4checker import classify_lean4checker, run_lean4checker
from lean_env.recheck.safeverify import classify_safeverify, run_safeverify
from lean_env.screen import screen

__all__ = ["DEFAULT_COMMANDS", "DEFAULT_LIB", "TOOLS", "RecheckJob", "RecheckResult", "Status", "ToolConfig", "ToolRun",
           "classify_comparator", "classify_lean4checker", "classify_safeverify", "comparator_config",
           "comparator_sources", "parse_command", "parse_lean_json", "preflight", "recheck", "recheck_one", "run_tool"]
_RUNNERS = {"comparator": run_comparator, "lean4checker": run_lean4checker, "safeverify": run_safeverify}


LAKEFILE_LIB = {"lakefile.toml": '[[lean_lib]]\nname = "{lib}"\nglobs = ["{lib}.+"]',
                "lakefile.lean": "lean_lib {lib} where\n  globs := #[.submodules `{lib}]"}


def preflight(cfg: ToolConfig) -> None:
    """ValueError naming the fix when the project cannot host the re-check."""
    lakefiles = [cfg.project / name for name in LAKEFILE_LIB if (cfg.project / name).is_file()]
    if not lakefiles:
        raise ValueError(f"--project {cfg.project} has no lakefile.toml or lakefile.lean: point it at a Lean project "
                         "that requires Mathlib at the dataset's toolchain (see docs/lean.md, offline re-check)")
    if cfg.tool == "comparator" and cfg.lib not in lakefiles[0].read_text(errors="replace"):
        snippet = LAKEFILE_LIB[lakefiles[0].name].format(lib=cfg.lib)
        raise ValueError(f"comparator builds the files as modules of a library: add to {lakefiles[0]}:\n{snippet}")


def recheck_one(job: RecheckJob, cfg: ToolConfig) -> RecheckResult:
    """Screen the stored output again and run the tool on it; never raises."""
    start = time.monotonic()
    try:
        screened = screen(job.task.formal_statement, job.output, header=job.task.header)
        if not screened.ok:
            status, message = "rejected", f"today's screen rejects it ({screened.verdict.value}): {screened.reason}"
        else:
            status, message = _RUNNERS[cfg.tool](job, screened, cfg)
    except Exception as e:  # a bug or a file-system error is never a verdict on the proof
        status, message = "infra", f"re-check failed: {type(e).__name__}: {e}"
    return RecheckResult(job.key, status, message, time.monotonic() - start)


def recheck(jobs: Iterable[RecheckJob], cfg: ToolConfig, *, workers: int = 1,
            progress: bool = True) -> list[RecheckResult]:
    """Re-check every job (in input order) with at most `workers` tool runs at once."""
    from tqdm.auto import tqdm

    jobs = list(jobs)
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool, \
            tqdm(total=len(jobs), desc=f"recheck ({cfg.tool})", disable=not progress) as bar:
        futures = [pool.submit(recheck_one, job, cfg) for job in jobs]
        for _ in as_completed(futures):
            bar.update(1)
    return [future.result() for future in futures]
