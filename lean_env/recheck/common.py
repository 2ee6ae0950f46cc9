"""Shared parts of the re-check: jobs, results, the resolved tool settings (`ToolSetup`, from `RecheckOptions`), the
files a job writes, and a process runner that never hangs."""
from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from lean_env.options import RecheckOptions
from lean_env.verify import Task

Status = Literal["confirmed", "rejected", "infra"]
NOT_COMPILED = "the solution does not compile"  # how every tool's runner starts the reason of a compile failure
DEFAULT_COMMANDS = {"comparator": "comparator", "lean4checker": "lean4checker", "safeverify": "safe_verify"}
UNCAUGHT = re.compile(r"uncaught exception:\s*(.*)", re.DOTALL)   # how a Lean `main` that throws reports (exit 1)


@dataclass(frozen=True)
class RecheckJob:
    """One rewarded proof to re-check: a unique `key`, its task and the stored model output."""

    key: str          # unique, becomes part of a Lean module name: letters, digits, `_`
    task: Task
    output: str       # the stored model output that was rewarded


@dataclass(frozen=True)
class RecheckResult:
    """A job's outcome: `status` confirmed, rejected or infra (see `lean_env.recheck`), the reason, the time taken."""

    key: str
    status: Status
    message: str
    elapsed_s: float = 0.0


@dataclass(frozen=True)
class ToolRun:
    """What one external tool run gave: exit code, output, whether it timed out, why it could not start."""

    returncode: int | None   # None: not started or killed after the timeout
    stdout: str
    stderr: str
    timed_out: bool = False
    error: str = ""          # why it could not start

    def tail(self, n: int = 1500) -> str:
        """The last `n` characters of stdout and stderr, for a message."""
        return (self.stdout + "\n" + self.stderr).strip()[-n:]


@dataclass(frozen=True)
class ToolSetup:
    """The resolved re-check settings of one run: `RecheckOptions` (their one home) with the project path expanded,
    the command lines split and the tool's default command filled in; built only by `from_options`."""

    tool: str                       # one of RECHECK_TOOLS
    project: Path                   # lake project (lakefile, Mathlib) whose toolchain matches the dataset's
    tool_command: Sequence[str]     # e.g. ["comparator"], ["lean4checker", "--fresh"], ["safe_verify"]
    lake_command: Sequence[str]
    lib: str                        # comparator: a lean_lib of the project holding `<lib>.<key>.{Challenge,Solution}`
    timeout_s: float
    keep_files: bool                # leave each job's files in the project (offline: to inspect); False: the runner
                                    # removes them when it returns, whatever the outcome (the strict online mode)
    ported: bool = False            # the project's toolchain is not the proofs' (RecheckOptions.recheck_ported)

    @classmethod
    def from_options(cls, options: RecheckOptions, *, keep_files: bool) -> ToolSetup:
        """The setup of `options` (ValueError for a missing project or an empty command line)."""
        if not options.recheck_project:
            raise ValueError("recheck_project is not set (a Lean project with Mathlib at the dataset's toolchain; "
                             "docs/lean.md, offline re-check)")
        command = options.recheck_command or DEFAULT_COMMANDS[options.recheck_tool]
        return cls(options.recheck_tool, Path(options.recheck_project).expanduser().resolve(),
                   parse_command(command), parse_command(options.recheck_lake), options.recheck_lib,
                   float(options.recheck_timeout_s), keep_files, options.recheck_ported)

    @property
    def scratch(self) -> Path:
        """The project folder the lean4checker and SafeVerify runners compile their files under."""
        return self.project / ".sdpo_recheck"

    def lake_env(self, *argv: str) -> list[str]:
        """`lake env ARGV…`: runs ARGV with the project's LEAN_PATH."""
        return [*self.lake_command, "env", *argv]


class JobFiles:
    """The files and folders one job writes, as a context manager: a runner records each path before it creates it,
    and on exit (a verdict, infra, or an exception) every recorded path is removed unless `keep`. Removal never
    raises: a file that cannot be removed must not turn a verdict into an error.

        with JobFiles(cfg.keep_files) as files:
            folder = files.folder(cfg.project / cfg.lib / job.key)
            files.file(folder / "x.lean").write_text(...)
    """

    def __init__(self, keep: bool) -> None:
        self.keep = keep
        self.paths: list[Path] = []

    def file(self, path: Path) -> Path:
        """`path`, recorded; the caller creates it (or has a tool create it)."""
        self.paths.append(path)
        return path

    def folder(self, path: Path) -> Path:
        """`path`, recorded and created with its parents (the parents are shared by jobs and stay)."""
        self.paths.append(path)
        path.mkdir(parents=True, exist_ok=True)
        return path

    def __enter__(self) -> JobFiles:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.keep:
            return
        for path in reversed(self.paths):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                try:
                    path.unlink(missing_ok=True)
                except OSError:
                    pass


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


def failed_to_run(run: ToolRun, what: str, timeout_s: float) -> str | None:
    """Why `run` gave no verdict (could not start, timed out), or None when the tool ran to its end."""
    if run.error:
        return run.error
    if run.timed_out:
        return f"{what} timed out after {timeout_s:g} s"
    return None


# the checker gave up for lack of a resource (the kernel's recursion or heartbeat limit, memory): no verdict (issue 57)
_EXHAUSTED = re.compile(r"deep recursion|deterministic timeout|maximum recursion depth|out of memory|stack overflow",
                        re.IGNORECASE)


def exhausted(tool: str, reason: str) -> tuple[Status, str] | None:
    """Infra when `reason` says the checker ran out of a resource rather than judged the proof, else None."""
    if _EXHAUSTED.search(reason) is None:
        return None
    return "infra", f"{tool} ran out of a resource, which says nothing about the proof: {reason[:500]}"


def uncaught_reason(run: ToolRun, tool: str, ok_line: str, ok_output: str,
                    timeout_s: float) -> tuple[Status, str] | str:
    """What every tool whose Lean `main` throws on failure shares: infra when it did not run or timed out; exit 0
    confirms only with its success line `ok_line` in `ok_output`; else its `uncaught exception:` reason, returned as
    a str for the tool's own classification (infra when it gave none)."""
    failed = failed_to_run(run, tool, timeout_s)
    if failed:
        return "infra", failed
    if run.returncode == 0:
        if ok_line in ok_output:
            return "confirmed", ok_line
        return "infra", f"{tool} exited 0 without `{ok_line}`: {run.tail(300)}"
    m = UNCAUGHT.search(run.stderr)
    if m is None:
        return "infra", f"{tool} exited {run.returncode} without a reason: {run.tail()}"
    return m.group(1).strip()


def parse_command(text: str) -> list[str]:
    """A tool command line (shell-split); ValueError when empty."""
    argv = shlex.split(text)
    if not argv:
        raise ValueError("empty tool command")
    return argv
