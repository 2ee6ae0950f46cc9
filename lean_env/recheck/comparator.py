"""leanprover/comparator as the re-check tool (its Main.lean, read for the CLI, config and output used here).

`lake env comparator config.json` in the project builds `Challenge` and `Solution` in a landrun sandbox, exports them
with lean4export, checks that every constant the statement uses is the same in both, that the solution uses only
`permitted_axioms`, and replays the solution into the kernel. It prints `Building M` / `Exporting #[…] from M` per
stage and `Your solution is okay!` (exit 0), or exits 1 with `uncaught exception: <reason>` on stderr.

Files: the job writes the folder `<project>/<lib>/<key>/` (Challenge.lean, Solution.lean, config.json). It stays
when `cfg.keep_files` and is removed when `run_comparator` returns or raises otherwise. What `lake build` writes under
the project's `.lake` for these modules is lake's and is not removed.
"""
from __future__ import annotations

import json
import re

from lean_env.assemble import arrange, split_header
from lean_env.judge import ALLOWED_AXIOMS
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
from lean_env.screen import ScreenResult

COMPARATOR_OK = "Your solution is okay!"
# a Lean diagnostic at a source position, as lake prints it (`error: <file>.lean:3:2: …`, `<file>.lean:3:2: error: …`)
_LEAN_ERROR = re.compile(r"^(?:error: \S+\.lean:\d+:\d+:|\S+\.lean:\d+:\d+: error:)", re.MULTILINE)
_STAGE = re.compile(r"^(?:Building (\S+)|Exporting .* from (\S+))\s*$", re.MULTILINE)


def comparator_sources(screened: ScreenResult, header: str) -> tuple[str, str]:
    """(Challenge.lean, Solution.lean): the trusted header and the dataset statement with `sorry`; the trusted header,
    the model's helpers and the statement with the model's proof (laid out as the online check lays them out)."""
    st = screened.statement
    assert st is not None
    imports, rest = split_header(header)
    head, chain, before_visible, visible = arrange(screened)
    trusted = imports + rest.rstrip("\n") + "\n\n" + head
    return trusted + chain + st.core + " :=\n  sorry\n", trusted + before_visible + visible


def comparator_config(module: str, name: str, kind: str) -> dict:
    """comparator's JSON config; a `def` statement is a definition hole (its type and universes must match)."""
    holes = [name] if kind == "def" else []
    return {"challenge_module": f"{module}.Challenge", "solution_module": f"{module}.Solution",
            "theorem_names": [] if holes else [name], "definition_names": holes,
            "permitted_axioms": sorted(ALLOWED_AXIOMS)}


def classify_comparator(run: ToolRun, challenge_module: str, timeout_s: float) -> tuple[Status, str]:
    """comparator's outcome. Exit 0 with its success line confirms. Otherwise its `uncaught exception: <reason>` and
    its last progress line decide: a failure while building or exporting the trusted challenge, or a constant missing
    from the challenge, is infra; the solution failing to build rejects when lake printed a Lean error at a source
    position, and is infra when the build stopped without one (Lean crashed or was killed: issue 57); exporting
    the built solution failing is infra (a lean4export problem); a failure after both exports (statements differ,
    an illegal axiom, the kernel rejects) rejects with comparator's reason."""
    reason = uncaught_reason(run, "comparator", COMPARATOR_OK, run.stdout, timeout_s)
    if not isinstance(reason, str):
        return reason
    if (gave_up := exhausted("comparator", reason)) is not None:
        return gave_up
    stages = [("build", b) if b else ("export", e) for b, e in _STAGE.findall(run.stdout)]
    if not stages:
        return "infra", f"comparator failed before building anything: {reason}"
    stage, module = stages[-1]
    if module == challenge_module or "in challenge" in reason or reason.startswith("Challenge constant"):
        return "infra", f"the trusted challenge failed ({stage} {module}): {reason}; {run.tail(600)}"
    if reason.startswith("Child exited") and stage == "build":   # a Lean error in the solution, or a crash: infra
        if _LEAN_ERROR.search(run.stdout + "\n" + run.stderr) is None:
            return "infra", f"building the solution stopped with no Lean error (a crash, not a verdict): {reason}"
        return "rejected", f"{NOT_COMPILED}: {run.tail(1200)}"
    if reason.startswith("Child exited"):
        return "infra", f"exporting the solution failed: {reason}; {run.tail(600)}"
    return "rejected", reason[:2000]


def run_comparator(job: RecheckJob, screened: ScreenResult, cfg: ToolSetup) -> tuple[Status, str]:
    """Write the job's folder (see the module docstring for when it is removed) and run comparator on it."""
    module = f"{cfg.lib}.{job.key}"
    with JobFiles(cfg.keep_files) as files:
        folder = files.folder(cfg.project / cfg.lib / job.key)
        challenge, solution = comparator_sources(screened, job.task.header)
        (folder / "Challenge.lean").write_text(challenge)
        (folder / "Solution.lean").write_text(solution)
        config = folder / "config.json"
        config.write_text(json.dumps(comparator_config(module, job.task.name, screened.statement.kind), indent=2))
        run = run_tool(cfg.lake_env(*cfg.tool_command, str(config)), cwd=cfg.project, timeout_s=cfg.timeout_s)
    return classify_comparator(run, f"{module}.Challenge", cfg.timeout_s)
