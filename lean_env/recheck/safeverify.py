"""SafeVerify (GasStationManager/SafeVerify; branch `minif2f-deepseek-check` targets Lean v4.9) as the re-check tool.

The challenge (trusted header, dataset statement `:= sorry`) and the solution (header, helpers, statement, proof) are
compiled to .olean files with `lake env lean -o`, then `lake env safe_verify target.olean submission.olean` replays
both into the kernel, checks that each target declaration has a submission declaration of the same kind and type
(a sorried `def` may change its value), and that only propext, Quot.sound and Classical.choice are used. It writes
to stderr: `Replaying <file>` per replay, `<name> used disallowed axioms. […]`, `Found a problem in <file> with
declaration <name>: <failure>`, and ends with `SafeVerify check passed.` (exit 0) or `uncaught exception: <reason>`
(exit 1).

Files: the job writes the folder `<cfg.scratch>/<lib>/<key>/` ({Target,Submission}.lean and their .olean files). It
stays when `cfg.keep_files` and is removed when `run_safeverify` returns or raises otherwise.
"""
from __future__ import annotations

import re
from pathlib import Path

from lean_env.recheck.common import (
    NOT_COMPILED,
    JobFiles,
    RecheckJob,
    Status,
    ToolRun,
    ToolSetup,
    exhausted,
    run_tool,
    uncaught_reason,
)
from lean_env.recheck.comparator import comparator_sources
from lean_env.recheck.compile import Compiled, compile_module
from lean_env.screen import ScreenResult

SAFEVERIFY_OK = "SafeVerify check passed."
# reasons that judge the submission; any other exception (a missing .olean, an import check, …) is infra
_VERDICT_REASONS = ("SafeVerify check failed", "kernel verification failed", "unsafe constant", "partial constant",
                    "suspicious Nat literal", "(kernel)")
_FINDING = re.compile(r"^(?:Found a problem in .*|.* used disallowed axioms\..*)$", re.MULTILINE)
_REPLAYING = re.compile(r"^Replaying (.+)$", re.MULTILINE)


def classify_safeverify(run: ToolRun, target: Path, timeout_s: float) -> tuple[Status, str]:
    """SafeVerify's outcome: exit 0 with its success line confirms; a check or kernel failure on the submission
    rejects with its findings; a failure while replaying the trusted target, or any other exception, is infra."""
    reason = uncaught_reason(run, "SafeVerify", SAFEVERIFY_OK, run.stderr, timeout_s)
    if not isinstance(reason, str):
        return reason
    if (gave_up := exhausted("SafeVerify", reason)) is not None:
        return gave_up
    replaying = _REPLAYING.findall(run.stderr)
    if not reason.startswith(_VERDICT_REASONS) or (replaying and replaying[-1].strip() == str(target)
                                                   and not reason.startswith("SafeVerify check failed")):
        return "infra", f"SafeVerify could not judge the proof: {reason[:1000]}"
    findings = "; ".join(_FINDING.findall(run.stderr))
    return "rejected", (f"{findings}; {reason}" if findings else reason)[:2000]


def _compiled_olean(source: Path, root: Path, cfg: ToolSetup, trusted: bool) -> Path | tuple[Status, str]:
    compiled = compile_module(source, source.with_suffix(".olean"), root, cfg)
    if not isinstance(compiled, Compiled):
        return compiled
    errors = compiled.errors()
    if errors and trusted:
        return "infra", f"the trusted challenge fails in this project (line {errors[0].line}): {errors[0].text[:500]}"
    if errors:
        return "rejected", f"{NOT_COMPILED}: " + "; ".join(
            f"line {m.line}: {m.text[:300]}" for m in errors[:3])
    if not compiled.olean_written:
        return "infra", f"lean wrote no .olean without reporting an error: {compiled.tail}"
    return source.with_suffix(".olean")


def run_safeverify(job: RecheckJob, screened: ScreenResult, cfg: ToolSetup) -> tuple[Status, str]:
    """Compile the target and the submission, then run SafeVerify on both (see the module docstring for the files)."""
    root = cfg.scratch
    with JobFiles(cfg.keep_files) as files:
        folder = files.folder(root / cfg.lib / job.key)
        oleans = []
        for name, text, trusted in zip(("Target", "Submission"), comparator_sources(screened, job.task.header),
                                       (True, False)):
            source = folder / f"{name}.lean"
            source.write_text(text)
            olean = _compiled_olean(source, root, cfg, trusted)
            if not isinstance(olean, Path):
                return olean
            oleans.append(olean)
        run = run_tool(cfg.lake_env(*cfg.tool_command, *map(str, oleans)), cwd=cfg.project, timeout_s=cfg.timeout_s)
    return classify_safeverify(run, oleans[0], cfg.timeout_s)
