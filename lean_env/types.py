"""Value types shared by the Lean backends, the screen and the judge.

Positions in `RunResult.messages` are relative to `Snippet.body`: line 1 is the first
line of the body, columns are 0-based codepoints (the REPL's convention).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Literal, Mapping, Protocol, Sequence


class Outcome(str, Enum):
    """How a backend run ended, before any judging."""

    OK = "ok"            # Lean answered; messages/sorries are meaningful
    TIMEOUT = "timeout"  # the per-proof wall-clock limit was hit
    INFRA = "infra"      # server/REPL failure: the answer says nothing about the proof


class Verdict(str, Enum):
    """Final classification of one model output."""

    VALID = "valid"
    LEAN_ERROR = "lean_error"
    SORRY = "sorry"
    FORBIDDEN = "forbidden"
    STATEMENT_MISMATCH = "statement_mismatch"
    TRUNCATED = "truncated"
    NO_ANSWER = "no_answer"
    TIMEOUT = "timeout"
    INFRA = "infra"
    BAD_TASK = "bad_task"   # the ground truth is malformed: a data error, masked like infra


@dataclass(frozen=True)
class LeanMessage:
    """One message of Lean: severity, start and end position (body-relative lines, 0-based columns), text."""

    severity: Literal["trace", "info", "warning", "error"]
    line: int
    col: int
    end_line: int | None
    end_col: int | None
    text: str


@dataclass(frozen=True)
class Snippet:
    """One file to check: `header` holds only trusted `import` lines, `body` the rest."""

    id: str
    header: str
    body: str

    @property
    def code(self) -> str:
        """The whole file as Lean sees it (header lines, then body lines)."""
        return self.header + self.body

    @property
    def header_lines(self) -> int:
        """How many lines the header holds."""
        return self.header.count("\n")

    def __post_init__(self) -> None:
        if self.header and not self.header.endswith("\n"):
            object.__setattr__(self, "header", self.header + "\n")


@dataclass(frozen=True)
class RunResult:
    """What a backend returns for one snippet: outcome, time, Lean's messages and sorries, and what went wrong
    when the outcome is INFRA or TIMEOUT."""

    id: str
    outcome: Outcome
    elapsed_s: float
    messages: tuple[LeanMessage, ...] = ()
    n_sorries: int = 0
    sorry_lines: tuple[int, ...] = ()
    repl_error: str | None = None
    infra_detail: str | None = None
    retries_spent: bool = False  # the backend already re-ran this INFRA result itself; a caller's retry would repeat it
    raw: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)


class LeanBackend(Protocol):
    """Order-preserving checker: per-snippet failures become results, never exceptions."""

    name: str

    async def run(self, snippets: Sequence[Snippet], *, timeout_s: float) -> list[RunResult]:
        """The snippets' results, in order; a snippet's failure is its result (INFRA, TIMEOUT), never an exception."""

    async def health(self) -> bool:
        """Whether the backend answers a trivial check."""

    async def aclose(self) -> None:
        """Release the backend's processes and connections."""
