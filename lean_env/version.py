"""Which Lean a backend runs, asked of Lean itself: `#eval Lean.versionString` (works on the REPL and on Kimina).

Lean answers with one info message holding the string's repr, e.g. `"4.9.0"` (release), `"4.22.0-rc3"` (release
candidate). A recipe names the Lean its statements and model need (`v4.9.0`); `check_lean_version` compares the two
after dropping a leading `v`, exactly (an rc or another patch release is another Lean: Mathlib's names move
between them).
"""
from __future__ import annotations

import re

from lean_env.types import LeanBackend, Outcome, Snippet

VERSION_QUERY = "#eval Lean.versionString"
_VERSION = re.compile(r'\s*"v?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.\-]+)?)"\s*')


class LeanVersionError(RuntimeError):
    """The backend runs another Lean than the recipe names, or could not say which."""


def normalize(version: str) -> str:
    """`v4.9.0` and `4.9.0` -> `4.9.0`."""
    return version.strip().removeprefix("v")


async def backend_lean_version(backend: LeanBackend, *, header: str = "", timeout_s: float = 300.0) -> str:
    """The Lean version string the backend's Lean reports; LeanVersionError when it gives no readable answer."""
    (result,) = await backend.run([Snippet(id="lean-version", header=header, body=VERSION_QUERY + "\n")],
                                  timeout_s=timeout_s)
    if result.outcome is not Outcome.OK or result.repl_error is not None:
        raise LeanVersionError(f"could not ask the Lean backend which Lean it runs ({result.outcome.value}: "
                               f"{result.infra_detail or result.repl_error or ''})")
    for message in result.messages:
        m = _VERSION.fullmatch(message.text) if message.severity == "info" else None
        if m:
            return m.group(1)
    raise LeanVersionError(f"the Lean backend did not answer `{VERSION_QUERY}` with a version: "
                           f"{[m.text[:100] for m in result.messages]}")


def check_lean_version(found: str, expected: str) -> None:
    """LeanVersionError naming both versions and the two ways out, unless they are the same Lean."""
    if normalize(found) != normalize(expected):
        raise LeanVersionError(
            f"the Lean backend runs Lean {normalize(found)}, but the recipe's statements and model need Lean "
            f"{normalize(expected)} (reward key lean_version). Point the reward at a Lean {normalize(expected)} "
            "backend (docs/lean.md, 'Lean version'), or accept the mismatch explicitly with "
            "+reward.custom_reward_function.reward_kwargs.allow_lean_version_mismatch=true "
            "(a correct proof can then fail on renamed Mathlib lemmas).")
