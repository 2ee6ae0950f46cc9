"""The check a proof-checking command-line tool makes before it loads a model or starts work: the Lean backend it will
need answers (within seconds). The generic checks (outputs writable, inputs there, `error:` lines) are
`sdpo_options.cli_checks`.

Contract: returns the problems as `<what> (<fix>)` text; nothing is changed.
"""
from __future__ import annotations

import asyncio

from lean_env.options import BackendOptions

BACKEND_TIMEOUT_S = 15.0   # the probe's own limits are 10 s (Kimina /health); this bounds a hung name lookup too


def lean_backend_problems(options: BackendOptions, fix: str, timeout_s: float = BACKEND_TIMEOUT_S) -> list[str]:
    """What keeps the resolved `options` from reaching Lean, found in seconds (`lean_env.backends.probe`); `fix` is
    the way this tool switches or points the backend (its flag, the server's variables). Call it outside a running
    event loop."""
    from lean_env.backends.probe import backend_problems  # httpx: only for the tools that check proofs

    async def probe() -> list[str]:
        return await asyncio.wait_for(backend_problems(options, fix=fix), timeout_s)

    try:
        return asyncio.run(probe())
    except asyncio.TimeoutError:
        return [f"the Lean backend ({options.backend}) gave no answer within {timeout_s:g} s ({fix})"]
