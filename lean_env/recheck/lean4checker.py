"""lean4checker (leanprover/lean4checker; `leanchecker` in Lean >= 4.28, same CLI) as the re-check tool.

The exact file the online reward checked is compiled with `lake env lean --json -o` and its messages are judged by
`lean_env.judge` as online; then `lake env lean4checker <module>` replays the module's declarations into the kernel.
It prints `Searching for modules matching: [M]` and `Found 1 modules to check`; exit 0 confirms; a kernel failure
prints `lean4checker found a problem in M` and `uncaught exception: <kernel error>` on stderr, exit 1.

Files: the job writes `<cfg.scratch>/<lib>/<key>.lean` and its `.olean`. They stay when `cfg.keep_files` and are
removed when `run_lean4checker` returns or raises otherwise.
"""
from __future__ import annotations

import os
from pathlib import Path

from lean_env.assemble import CheckPlan, build_check
from lean_env.judge import judge
from lean_env.recheck.common import (
    NOT_COMPILED,
    UNCAUGHT,
    JobFiles,
    RecheckJob,
    Status,
    ToolRun,
    ToolSetup,
    exhausted,
    failed_to_run,
    run_tool,
)
from lean_env.recheck.compile import Compiled, compile_module
from lean_env.screen import ScreenResult
from lean_env.types import Outcome, RunResult, Verdict


def classify_lean4checker(run: ToolRun, module: str, timeout_s: float) -> tuple[Status, str]:
    """lean4checker's outcome: exit 0 confirms; `found a problem in <module>` rejects with the kernel's reason."""
    failed = failed_to_run(run, "lean4checker", timeout_s)
    if failed:
        return "infra", failed
    if run.returncode == 0:
        return "confirmed", "the kernel replayed every declaration"
    if f"found a problem in {module}" in run.stderr:
        m = UNCAUGHT.search(run.stderr)
        reason = (m.group(1).strip() if m else run.tail())[:2000]
        return exhausted("lean4checker", reason) or ("rejected", reason)
    return "infra", f"lean4checker exited {run.returncode}: {run.tail()}"


def _judge_compiled(plan: CheckPlan, source: Path, olean: Path, root: Path, cfg: ToolSetup
                    ) -> tuple[Status, str] | None:
    """Compile the checked file and judge its messages as the online reward does; None when VALID and compiled."""
    compiled = compile_module(source, olean, root, cfg, plan.snippet.header_lines)
    if not isinstance(compiled, Compiled):
        return compiled
    trusted = [m for m in compiled.errors() if m.line <= plan.visible_offset]
    if trusted:   # the imports, the header or the reference statement fail here: the project, not the proof
        line, text = trusted[0].line, trusted[0].text[:500]
        return "infra", f"the trusted header or statement fails in this project (line {line}): {text}"
    judgement = judge(RunResult("recheck", Outcome.OK, 0.0, compiled.messages), plan)
    if judgement.verdict is not Verdict.VALID:
        errors = "; ".join(f"line {m.line}: {m.text[:300]}" for m in judgement.errors[:3])
        lead = NOT_COMPILED if judgement.verdict is Verdict.LEAN_ERROR else "offline Lean"
        return "rejected", (f"{lead}: {judgement.verdict.value}: {judgement.detail}"
                            + (f" ({errors})" if errors else ""))
    if not compiled.olean_written:
        return "infra", f"lean wrote no .olean without reporting an error: {compiled.tail}"
    return None


def run_lean4checker(job: RecheckJob, screened: ScreenResult, cfg: ToolSetup) -> tuple[Status, str]:
    """Compile and judge the checked file, then replay its module (see the module docstring for the files' fate)."""
    root = cfg.scratch
    module = f"{cfg.lib}.{job.key}"
    with JobFiles(cfg.keep_files) as files:
        source = files.file(root / cfg.lib / f"{job.key}.lean")
        olean = files.file(source.with_suffix(".olean"))
        source.parent.mkdir(parents=True, exist_ok=True)
        plan = build_check(screened, job.task.header, job.key)
        source.write_text(plan.snippet.code)
        failed = _judge_compiled(plan, source, olean, root, cfg)
        if failed is not None:
            return failed
        env = {**os.environ, "LEAN_PATH": os.pathsep.join(p for p in (str(root), os.environ.get("LEAN_PATH")) if p)}
        run = run_tool(cfg.lake_env(*cfg.tool_command, module), cwd=cfg.project, timeout_s=cfg.timeout_s, env=env)
    return classify_lean4checker(run, module, cfg.timeout_s)
