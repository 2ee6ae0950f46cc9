"""Lean checking options, each default written once: how a backend is built and how one proof is checked.

`BackendOptions` is everything that builds a backend (frozen, so it is the backend cache key); `CheckOptions` is what
one `verify` call needs (limits and retries); `RecheckOptions` is the strict online mode (every paid proof re-checked
by an external kernel tool, `lean_env.recheck`); `LeanOptions` adds the per-run settings (Lean version check,
concurrency). The flat keyword names of the four (`option_fields`) are verl's `reward_kwargs` of `reward.lean` and
the flags of `python -m reward.lean.cli verify`.
Each field is an `option` (`sdpo_options.flags`: default and doc written once; the CLI's flags are built from them).
A backend field whose default is None and whose metadata names an env var falls back to that variable, then to its
`fallback` (`BackendOptions.resolved`).
"""
from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lean_env.rules import HEADER_MAX_HEARTBEATS
from sdpo_options.flags import block, check_types, option, options_of, unknown_names

BACKENDS = ("kimina", "repl", "repl-ray")


@dataclass(frozen=True)
class BackendOptions:
    """How the Lean backend is built and sized; equal options share one backend."""

    backend: str | None = option(None, "kimina (HTTP server) | repl (local `lake exe repl`) | repl-ray",
                                 env="LEAN_BACKEND", fallback="kimina", choices=BACKENDS)
    url: str | None = option(None, "Kimina base URL", env="LEAN_SERVER_API_URL", fallback="http://localhost:8000")
    api_key: str | None = option(None, "Kimina API key", env="LEAN_SERVER_API_KEY")
    endpoint: str = option("check", "Kimina: check (/api/check) or verify (legacy /verify)")
    batch_size: int = option(8, "Kimina snippets per request")
    server_repls: int = option(8, "Kimina: the server's LEAN_SERVER_MAX_REPLS; cap on snippets in flight")
    repl_command: str | None = option(None, "command starting one REPL", env="LEAN_REPL_COMMAND",
                                      fallback="lake exe repl")
    workspace: str | None = option(None, "Mathlib workspace (cwd of the REPL)", env="LEAN_WORKSPACE")
    num_repls: int = option(1, "REPL processes per pool")
    max_uses: int = option(500, "recycle a REPL after this many proofs")
    max_rss_mb: float | None = option(None, "recycle a REPL whose process tree exceeds this RSS (None: never)")
    mem_limit_mb: int | None = option(None, "RLIMIT_AS per REPL process (None: unlimited)")
    import_timeout_s: float = option(300.0, "header import limit for a fresh REPL (Kimina: re-send limit after a "
                                            "header timeout); also the Lean version query's limit")
    ray_actors: int = option(1, "repl-ray: number of Ray actors each holding a pool")

    def __post_init__(self) -> None:
        check_types(self, "Lean reward")

    def resolved(self) -> BackendOptions:
        """These options with every unset env-backed field read from its env var, then its fallback."""
        updates = {}
        for f in dataclasses.fields(self):
            if f.metadata["env"]:
                updates[f.name] = getattr(self, f.name) or os.environ.get(f.metadata["env"]) or f.metadata["fallback"]
        out = dataclasses.replace(self, **updates)
        if out.backend not in BACKENDS:
            raise ValueError(f"backend must be 'kimina', 'repl' or 'repl-ray', got {out.backend!r}")
        return out


@dataclass(frozen=True)
class CheckOptions:
    """Limits and retries of one proof check (`lean_env.verify.verify`)."""

    timeout_s: float = option(60.0, "per-proof Lean wall-clock limit")
    infra_retries: int = option(2, "re-runs after an infrastructure failure")
    timeout_retries: int = option(1, "re-runs after a timeout")
    backoff_s: float = option(1.0, "first retry delay, doubled per retry")
    statement_check: bool = option(True, "the kernel confirms the theorem's type is the dataset statement's")
    max_heartbeats: int = option(HEADER_MAX_HEARTBEATS, "maxHeartbeats of the model's code (set where its section "
                                                        "opens; the dataset headers set 0, i.e. no bound); 0: the "
                                                        "header's")

    def __post_init__(self) -> None:
        check_types(self, "Lean reward")
        if not isinstance(self.max_heartbeats, int) or self.max_heartbeats < 0:
            raise ValueError(f"max_heartbeats must be a whole number >= 0 (0: the header's), "
                             f"got {self.max_heartbeats!r}")


RECHECK_TOOLS = ("comparator", "lean4checker", "safeverify")   # the runners of lean_env.recheck
RECHECK_LIB = re.compile(r"[A-Z][A-Za-z0-9_]*")   # a Lean module name component: the prefix of a job's modules


@dataclass(frozen=True)
class RecheckOptions:
    """The one home of the re-check settings (`lean_env.recheck`, the comparator/SafeVerify approach): the strict
    online mode, where each proof the fast path finds VALID is re-checked in a separate Lean process by an external
    kernel tool before it is paid (a rejection scores 0; a tool that cannot give a verdict makes the sample INFRA:
    masked, never feedback, never trained on), the offline re-check of stored proofs (`python -m sdpo_eval.recheck`)
    and the re-check of what the discovery and pass@k reports count (`sdpo_eval.report_recheck`). The CLIs build
    their `--recheck-*` flags from these fields; `lean_env.recheck.ToolSetup.from_options` resolves them for a run.

    `recheck_timeout_s` is 600 s for all three uses: a real tool run is 5-15 s of `import Mathlib` per compiled file
    plus the proof's own time (comparator, which also builds and exports both modules: tens of seconds to minutes;
    docs/lean.md, 8), so 10 minutes leaves a wide margin, and a run past it is infra (unverified), never a verdict,
    so a slow host raises it (`--recheck-timeout-s 1800`, the offline CLI's old default) instead of losing proofs.

    Examples:
        `strict_recheck=True, recheck_project="~/recheck-ws", recheck_tool="safeverify",
        recheck_command="/opt/SafeVerify/.lake/build/bin/safe_verify"`
    """

    strict_recheck: bool = option(False, "re-check every VALID proof with an external kernel tool before paying it")
    recheck_tool: str = option("safeverify", "re-check tool: comparator | lean4checker | safeverify (the reports: "
                                             "comparator | safeverify)", choices=RECHECK_TOOLS)
    recheck_project: str | None = option(None, "re-check: Lean project (lakefile, Mathlib at the dataset's "
                                               "toolchain; docs/lean.md, offline re-check)")
    recheck_command: str | None = option(None, "re-check: the tool's command line, run under `lake env` (None: "
                                               "comparator, lean4checker or safe_verify on PATH; e.g. 'leanchecker' "
                                               "on Lean >= 4.28 or the built binary's path)")
    recheck_lake: str = option("lake", "re-check: the lake command line (the tools run under `lake env`)")
    recheck_lib: str = option("SdpoRecheck", "re-check: module prefix of the files a job writes (comparator: a "
                                             "lean_lib of the project)")
    recheck_timeout_s: float = option(600.0, "re-check: wall-clock limit of one tool run (then infra)")
    recheck_workers: int = option(1, "re-check: tool runs at once (per reward process in strict mode; each loads "
                                     "Mathlib; comparator: 1)")
    recheck_ported: bool = option(False, "re-check: the project's toolchain is not the one the proofs were found on "
                                         "(statements ported): a proof that does not compile there is unverified "
                                         "(infra), never a cheat")

    def __post_init__(self) -> None:
        check_types(self, "Lean reward")
        if self.recheck_tool not in RECHECK_TOOLS:
            raise ValueError(f"recheck_tool must be one of {RECHECK_TOOLS}, got {self.recheck_tool!r}")
        if self.strict_recheck and not self.recheck_project:
            raise ValueError("strict_recheck needs recheck_project (a Lean project with Mathlib at the dataset's "
                             "toolchain; see docs/lean.md, offline re-check)")
        if self.recheck_workers < 1 or (self.recheck_tool == "comparator" and self.recheck_workers != 1):
            raise ValueError("recheck_workers must be at least 1, and 1 for comparator (it runs `lake build`)")
        if not RECHECK_LIB.fullmatch(self.recheck_lib):
            raise ValueError(f"recheck_lib must be a Lean module name component such as SdpoRecheck, got "
                             f"{self.recheck_lib!r}")


@dataclass(frozen=True)
class LeanOptions:
    """All Lean reward options: the backend, the per-proof check, and the per-run settings below."""

    backend_options: BackendOptions = block(BackendOptions, "how the Lean backend is built and sized")
    check: CheckOptions = block(CheckOptions, "limits and retries of one proof check")
    recheck: RecheckOptions = block(RecheckOptions, "the external kernel re-check (strict mode, offline, reports)")
    lean_version: str | None = option(None, "the Lean the statements and model need (e.g. v4.9.0); checked once; "
                                            "None: unchecked")
    allow_lean_version_mismatch: bool = option(False, "run on another Lean anyway (logged), instead of stopping")
    max_concurrency: int = option(8, "verify_many samples in flight")

    def __post_init__(self) -> None:
        check_types(self, "Lean reward")

    @classmethod
    def from_kwargs(cls, kwargs: Mapping[str, Any]) -> LeanOptions:
        """Options from flat keys (`option_fields`); a None value keeps the default; unknown keys raise."""
        known = {f.name for _, f in option_fields()}
        unknown = set(kwargs) - known
        if unknown:
            raise ValueError(unknown_names("Lean reward option", unknown, known))
        given = {k: v for k, v in kwargs.items() if v is not None}
        parts = {owner: {f.name: given[f.name] for f in dataclasses.fields(owner) if f.name in given}
                 for owner in (BackendOptions, CheckOptions, RecheckOptions)}
        own = {f.name: given[f.name] for owner, f in option_fields() if owner is cls and f.name in given}
        return cls(backend_options=BackendOptions(**parts[BackendOptions]).resolved(),
                   check=CheckOptions(**parts[CheckOptions]), recheck=RecheckOptions(**parts[RecheckOptions]), **own)


OWNERS = (BackendOptions, CheckOptions, RecheckOptions, LeanOptions)
"""The dataclasses whose `option` fields are the flat Lean options, in order."""


def option_fields() -> list[tuple[type, dataclasses.Field]]:
    """(owning dataclass, field) of every flat option, in declaration order; names are unique across the four."""
    return [(owner, f) for owner in OWNERS for f in options_of(owner)]
