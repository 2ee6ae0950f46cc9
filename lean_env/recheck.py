"""Offline kernel re-check of rewarded proofs with an external Lean tool (no verl imports).

For each rewarded proof the stored model output is screened again, written as standalone Lean files into a Lean
project the user provides, and checked by one of two tools (both read in their sources, see docs/lean.md):

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

Contract: `recheck_one` never raises; every job gets one `RecheckResult` with status
  confirmed  the tool accepted the proof
  rejected   the tool (or today's screen, or the offline compile) refused it; `message` holds the reason
  infra      the tool could not give a verdict: not installed, crashed, timed out, printed something unexpected,
             or the trusted challenge failed; says nothing about the proof.
Each tool run is killed with its whole process group after `timeout_s`.
"""
from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Literal, Sequence

from lean_env.assemble import CheckPlan, arrange, build_check, split_header
from lean_env.judge import ALLOWED_AXIOMS, judge
from lean_env.screen import ScreenResult, screen
from lean_env.types import LeanMessage, Outcome, RunResult, Verdict
from lean_env.verify import Task

Status = Literal["confirmed", "rejected", "infra"]
TOOLS = ("comparator", "lean4checker")
DEFAULT_LIB = "SdpoRecheck"
COMPARATOR_OK = "Your solution is okay!"
_UNCAUGHT = re.compile(r"uncaught exception:\s*(.*)", re.S)
_STAGE = re.compile(r"^(?:Building (\S+)|Exporting .* from (\S+))\s*$", re.M)
_SEVERITY = {"information": "info", "warning": "warning", "error": "error"}


@dataclass(frozen=True)
class RecheckJob:
    key: str          # unique, becomes part of a Lean module name: letters, digits, `_`
    task: Task
    output: str       # the stored model output that was rewarded


@dataclass(frozen=True)
class RecheckResult:
    key: str
    status: Status
    message: str
    elapsed_s: float = 0.0


@dataclass(frozen=True)
class ToolRun:
    returncode: int | None   # None: not started or killed after the timeout
    stdout: str
    stderr: str
    timed_out: bool = False
    error: str = ""          # why it could not start

    def tail(self, n: int = 1500) -> str:
        return (self.stdout + "\n" + self.stderr).strip()[-n:]


@dataclass(frozen=True)
class ToolConfig:
    """How to reach the user's Lean project and tool."""

    tool: str                       # "comparator" | "lean4checker"
    project: Path                   # lake project (lakefile, Mathlib) whose toolchain matches the dataset's
    tool_command: Sequence[str]     # e.g. ["comparator"], ["lean4checker", "--fresh"], ["leanchecker"]
    lake_command: Sequence[str] = ("lake",)
    lib: str = DEFAULT_LIB          # comparator: a lean_lib of the project holding `<lib>.<key>.{Challenge,Solution}`
    timeout_s: float = 1800.0

    def __post_init__(self) -> None:
        if self.tool not in TOOLS:
            raise ValueError(f"tool must be one of {TOOLS}, got {self.tool!r}")
        if not re.fullmatch(r"[A-Z][A-Za-z0-9_]*", self.lib):
            raise ValueError(f"lib must be a Lean module name component such as {DEFAULT_LIB}, got {self.lib!r}")


def run_tool(argv: Sequence[str], *, cwd: Path, timeout_s: float, env: dict[str, str] | None = None) -> ToolRun:
    """Run `argv` in its own process group; on timeout SIGKILL the group. Never raises."""
    try:
        proc = subprocess.Popen(list(argv), cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, errors="replace", start_new_session=True)
    except OSError as e:
        return ToolRun(None, "", "", error=f"cannot run {argv[0]!r}: {e}")
    try:
        out, err = proc.communicate(timeout=timeout_s)
        return ToolRun(proc.returncode, out, err)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            out, err = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:   # a grandchild left the group and holds the pipes
            out, err = "", ""
        return ToolRun(None, out or "", err or "", timed_out=True)


def _failed_to_run(run: ToolRun, what: str, timeout_s: float) -> str | None:
    if run.error:
        return run.error
    if run.timed_out:
        return f"{what} timed out after {timeout_s:g} s"
    return None


# --- comparator ------------------------------------------------------------------------------------------------

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
    from the challenge, is infra; the solution failing to build rejects (lake's errors are in the output); exporting
    the built solution failing is infra (a lean4export problem); a failure after both exports (statements differ,
    an illegal axiom, the kernel rejects) rejects with comparator's reason."""
    failed = _failed_to_run(run, "comparator", timeout_s)
    if failed:
        return "infra", failed
    if run.returncode == 0:
        if COMPARATOR_OK in run.stdout:
            return "confirmed", COMPARATOR_OK
        return "infra", f"comparator exited 0 without `{COMPARATOR_OK}`: {run.tail(300)}"
    m = _UNCAUGHT.search(run.stderr)
    if m is None:
        return "infra", f"comparator exited {run.returncode} without a reason: {run.tail()}"
    reason = m.group(1).strip()
    stages = [("build", b) if b else ("export", e) for b, e in _STAGE.findall(run.stdout)]
    if not stages:
        return "infra", f"comparator failed before building anything: {reason}"
    stage, module = stages[-1]
    if module == challenge_module or "in challenge" in reason or reason.startswith("Challenge constant"):
        return "infra", f"the trusted challenge failed ({stage} {module}): {reason}; {run.tail(600)}"
    if reason.startswith("Child exited") and stage == "build":
        return "rejected", f"the solution does not compile: {run.tail(1200)}"
    if reason.startswith("Child exited"):
        return "infra", f"exporting the solution failed: {reason}; {run.tail(600)}"
    return "rejected", reason[:2000]


def _kind(screened: ScreenResult) -> str:
    """The statement's declaration keyword (`theorem`, `lemma` or `def`)."""
    st = screened.statement
    assert st is not None
    return st.core[:len(st.core) - len(st.signature)].split()[-2]


def _comparator(job: RecheckJob, screened: ScreenResult, cfg: ToolConfig) -> tuple[Status, str]:
    module = f"{cfg.lib}.{job.key}"
    folder = cfg.project / cfg.lib / job.key
    folder.mkdir(parents=True, exist_ok=True)
    challenge, solution = comparator_sources(screened, job.task.header)
    (folder / "Challenge.lean").write_text(challenge)
    (folder / "Solution.lean").write_text(solution)
    config = folder / "config.json"
    config.write_text(json.dumps(comparator_config(module, job.task.name, _kind(screened)), indent=2))
    run = run_tool([*cfg.lake_command, "env", *cfg.tool_command, str(config)], cwd=cfg.project,
                   timeout_s=cfg.timeout_s)
    return classify_comparator(run, f"{module}.Challenge", cfg.timeout_s)


# --- lean4checker ----------------------------------------------------------------------------------------------

def parse_lean_json(stdout: str, header_lines: int) -> list[LeanMessage] | None:
    """Messages of `lean --json` (one JSON object per line), positions made relative to the snippet body; None when
    no line is a message."""
    messages = []
    for line in stdout.splitlines():
        try:
            obj = json.loads(line)
            pos, end = obj["pos"], obj.get("endPos") or {}
            messages.append(LeanMessage(_SEVERITY[obj["severity"]], int(pos["line"]) - header_lines,
                                        int(pos["column"]), end.get("line") and int(end["line"]) - header_lines,
                                        end.get("column"), str(obj.get("data", ""))))
        except (ValueError, KeyError, TypeError):
            continue
    return messages or None


def classify_lean4checker(run: ToolRun, module: str, timeout_s: float) -> tuple[Status, str]:
    """lean4checker's outcome: exit 0 confirms; `found a problem in <module>` rejects with the kernel's reason."""
    failed = _failed_to_run(run, "lean4checker", timeout_s)
    if failed:
        return "infra", failed
    if run.returncode == 0:
        return "confirmed", "the kernel replayed every declaration"
    if f"found a problem in {module}" in run.stderr:
        m = _UNCAUGHT.search(run.stderr)
        return "rejected", (m.group(1).strip() if m else run.tail())[:2000]
    return "infra", f"lean4checker exited {run.returncode}: {run.tail()}"


def _compile(plan: CheckPlan, source: Path, olean: Path, root: Path, cfg: ToolConfig) -> tuple[Status, str] | None:
    """Compile the checked file and judge its messages as the online reward does; None when VALID."""
    run = run_tool([*cfg.lake_command, "env", "lean", "--json", f"--root={root}", "-o", str(olean), str(source)],
                   cwd=cfg.project, timeout_s=cfg.timeout_s)
    failed = _failed_to_run(run, "lean", cfg.timeout_s)
    if failed:
        return "infra", failed
    messages = parse_lean_json(run.stdout, plan.snippet.header_lines)
    if messages is None:
        return "infra", f"lean printed no messages (exit {run.returncode}): {run.tail()}"
    trusted = [m for m in messages if m.severity == "error" and m.line <= plan.visible_offset]
    if trusted:   # the imports, the header or the reference statement fail here: the project, not the proof
        return "infra", f"the trusted header or statement fails in this project (line {trusted[0].line}): " \
                        f"{trusted[0].text[:500]}"
    judgement = judge(RunResult("recheck", Outcome.OK, 0.0, tuple(messages)), plan)
    if judgement.verdict is not Verdict.VALID:
        errors = "; ".join(f"line {m.line}: {m.text[:300]}" for m in judgement.errors[:3])
        return "rejected", f"offline Lean: {judgement.verdict.value}: {judgement.detail}" + (f" ({errors})" if errors else "")
    if run.returncode != 0 or not olean.exists():
        return "infra", f"lean exited {run.returncode} without an error message or .olean: {run.tail()}"
    return None


def _lean4checker(job: RecheckJob, screened: ScreenResult, cfg: ToolConfig) -> tuple[Status, str]:
    root = cfg.project / ".sdpo_recheck"
    module = f"{cfg.lib}.{job.key}"
    source = root / cfg.lib / f"{job.key}.lean"
    olean = source.with_suffix(".olean")
    source.parent.mkdir(parents=True, exist_ok=True)
    olean.unlink(missing_ok=True)
    plan = build_check(screened, job.task.header, job.key)
    source.write_text(plan.snippet.code)
    compiled = _compile(plan, source, olean, root, cfg)
    if compiled is not None:
        return compiled
    env = {**os.environ, "LEAN_PATH": os.pathsep.join(p for p in (str(root), os.environ.get("LEAN_PATH")) if p)}
    run = run_tool([*cfg.lake_command, "env", *cfg.tool_command, module], cwd=cfg.project, timeout_s=cfg.timeout_s,
                   env=env)
    return classify_lean4checker(run, module, cfg.timeout_s)


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


# --- driver ----------------------------------------------------------------------------------------------------

def recheck_one(job: RecheckJob, cfg: ToolConfig) -> RecheckResult:
    """Screen the stored output again and run the tool on it; never raises."""
    start = time.monotonic()
    try:
        screened = screen(job.task.formal_statement, job.output, header=job.task.header)
        if not screened.ok:
            status, message = "rejected", f"today's screen rejects it ({screened.verdict.value}): {screened.reason}"
        elif cfg.tool == "comparator":
            status, message = _comparator(job, screened, cfg)
        else:
            status, message = _lean4checker(job, screened, cfg)
    except Exception as e:  # a bug or a file-system error is never a verdict on the proof
        status, message = "infra", f"re-check failed: {type(e).__name__}: {e}"
    return RecheckResult(job.key, status, message, time.monotonic() - start)


def recheck(jobs: Iterable[RecheckJob], cfg: ToolConfig, *, workers: int = 1, progress: bool = True) -> list[RecheckResult]:
    """Re-check every job (in input order) with at most `workers` tool runs at once."""
    from tqdm.auto import tqdm

    jobs = list(jobs)
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool, \
            tqdm(total=len(jobs), desc=f"recheck ({cfg.tool})", disable=not progress) as bar:
        futures = [pool.submit(recheck_one, job, cfg) for job in jobs]
        results = []
        for future in futures:
            results.append(future.result())
            bar.update(1)
    return results


def parse_command(text: str) -> list[str]:
    """A tool command line (shell-split); ValueError when empty."""
    argv = shlex.split(text)
    if not argv:
        raise ValueError("empty tool command")
    return argv
