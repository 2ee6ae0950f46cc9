"""Running the offline kernel re-check: the project's preflight, one job (`recheck_one`) and many (`recheck`).

For each rewarded proof the stored model output is screened again, written as standalone Lean files into the Lean
project the user provides, and checked by one of three tools (`lean_env.recheck.comparator`, `.lean4checker`,
`.safeverify`; each module's docstring says how the tool is run and read).

Contract: `recheck_one` never raises; every job gets one `RecheckResult` with status
  confirmed  the tool accepted the proof
  rejected   the tool (or today's screen, or the offline compile) refused it; `message` holds the reason
  infra      the tool could not give a verdict: not installed, crashed, timed out, printed something unexpected,
             or the trusted challenge failed; says nothing about the proof.
Each tool run is killed with its whole process group after `timeout_s`.

Files: each runner writes a job's files under the project in paths named by its key (its module docstring lists
them) and records them in a `JobFiles`. With `ToolSetup.keep_files` (the offline CLI and the reports: one stable key
per log line or counted proof, so a re-run overwrites them, and they are the evidence to inspect a rejected proof)
they stay; without it (the strict online mode, a fresh key per paid proof) the runner removes them when it returns or
raises, whatever the verdict, so no caller needs to know where they are. The shared parent folders stay.
"""
from __future__ import annotations

import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed

from lean_env.recheck.common import NOT_COMPILED, RecheckJob, RecheckResult, ToolSetup
from lean_env.recheck.comparator import run_comparator
from lean_env.recheck.lean4checker import run_lean4checker
from lean_env.recheck.safeverify import run_safeverify
from lean_env.screen import screen

_RUNNERS = {"comparator": run_comparator, "lean4checker": run_lean4checker, "safeverify": run_safeverify}


LAKEFILE_LIB = {"lakefile.toml": '[[lean_lib]]\nname = "{lib}"\nglobs = ["{lib}.+"]',
                "lakefile.lean": "lean_lib {lib} where\n  globs := #[.submodules `{lib}]"}


def preflight(cfg: ToolSetup) -> None:
    """ValueError naming the fix when the project cannot host the re-check."""
    lakefiles = [cfg.project / name for name in LAKEFILE_LIB if (cfg.project / name).is_file()]
    if not lakefiles:
        raise ValueError(f"recheck_project {cfg.project} has no lakefile.toml or lakefile.lean: point it at a "
                         "Lean project requiring Mathlib at the dataset's toolchain (docs/lean.md, offline re-check)")
    if cfg.tool == "comparator" and cfg.lib not in lakefiles[0].read_text(errors="replace"):
        snippet = LAKEFILE_LIB[lakefiles[0].name].format(lib=cfg.lib)
        raise ValueError(f"comparator builds the files as modules of a library: add to {lakefiles[0]}:\n{snippet}")


def recheck_one(job: RecheckJob, cfg: ToolSetup) -> RecheckResult:
    """Screen the stored output again and run the tool on it; never raises."""
    start = time.monotonic()
    try:
        screened = screen(job.task.formal_statement, job.output, header=job.task.header)
        if not screened.ok:
            status, message = "rejected", f"today's screen rejects it ({screened.verdict.value}): {screened.reason}"
        else:
            status, message = _RUNNERS[cfg.tool](job, screened, cfg)
            if cfg.ported and status == "rejected" and message.startswith(NOT_COMPILED):
                # a lemma renamed or a tactic changed since the proof's toolchain is not a cheat
                status, message = "infra", f"on the ported toolchain (recheck_ported): {message}"
    except Exception as e:  # a bug or a file-system error is never a verdict on the proof
        status, message = "infra", f"re-check failed: {type(e).__name__}: {e}"
    return RecheckResult(job.key, status, message, time.monotonic() - start)


def recheck(jobs: Iterable[RecheckJob], cfg: ToolSetup, *, workers: int = 1,
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
