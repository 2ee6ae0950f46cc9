"""Is the configured Lean backend there? A check of seconds, before anything waits on it.

Kimina: `GET <url>/health` answers `{"status": "ok"}` (the server's own health route, no auth needed;
kimina-lean-server `server/routers/health.py`), through `KiminaBackend.health` (10 s). REPL: the command's program
is on PATH (or a file), and the workspace folder, when given, exists. Without this a refused connection surfaced
only after the reward's retries (`reward.lean.cli verify` sat at 0 % for 6 minutes), and a missing `lake` inside a Ray
worker.
"""
from __future__ import annotations

import shlex
import shutil
from pathlib import Path
from typing import Optional

from lean_env.backends.kimina import KiminaBackend
from lean_env.options import BackendOptions
from lean_env.types import LeanBackend

START_A_SERVER = ("start a Kimina server (docs/lean.md) or pass --backend repl (reward.lean.cli) / "
                  "reward.custom_reward_function.reward_kwargs.backend=repl (training)")


def repl_problems(command: str, workspace: str | None) -> list[str]:
    """Why the REPL command cannot start here: its program or its workspace is missing."""
    try:
        program = shlex.split(command)[0]
    except (ValueError, IndexError):
        return [f"the REPL command {command!r} is empty or badly quoted (set repl_command / LEAN_REPL_COMMAND)"]
    problems = []
    if shutil.which(program) is None and not Path(program).is_file():
        problems.append(f"the REPL command's program `{program}` is not on PATH (install Lean with elan, or set "
                        "repl_command / LEAN_REPL_COMMAND; docs/lean.md)")
    if workspace and not Path(workspace).expanduser().is_dir():
        problems.append(f"the REPL workspace {workspace} is not a folder (a Lean project with Mathlib built: "
                        "set workspace / LEAN_WORKSPACE; docs/lean.md)")
    return problems


async def backend_problems(options: BackendOptions, backend: Optional[LeanBackend] = None,
                           fix: str = START_A_SERVER) -> list[str]:
    """What keeps `options` (resolved) from reaching Lean; [] when the backend is there. `backend`: the one the
    caller will use; a Kimina client is asked through it (its transport, its key), else one is made for the probe and
    closed. `fix`: how the caller's user starts a server or switches backend (its flags)."""
    if options.backend != "kimina":
        return repl_problems(options.repl_command, options.workspace)
    own = not isinstance(backend, KiminaBackend)
    kimina = KiminaBackend(options.url, options.api_key) if own else backend
    try:
        ok = await kimina.health()
    finally:
        if own:
            await kimina.aclose()
    return [] if ok else [f"the Kimina server at {options.url} does not answer GET /health with status ok "
                          f"({fix})"]
