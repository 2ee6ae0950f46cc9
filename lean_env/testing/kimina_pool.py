"""The REPL side of the Kimina double: header split, a fixed REPL pool, and one snippet's run.

Modelled on project-numina/kimina-lean-server @fb2393d (2026-01-11): `server/split.py`
(`split_snippet`), `server/manager.py` (`Manager.get_repl`/`release_repl`/`destroy_repl`),
`server/repl.py` (`Repl.send_timeout`, `_read_response`) and `server/routers/check.py` (`run_checks.run_one`).
Observable behaviour kept:
- header = leading blank/`import` lines (stripped); any `import Mathlib…` collapses to one `import Mathlib`;
  positions in the answer are shifted back by the number of header lines;
- a free REPL with the same header is reused; else a new one is started while fewer than `max_repls` exist;
  else the least recently used free REPL is evicted; else the snippet waits up to `max_wait_s` -> `NoFreeRepl` (429);
- a fresh REPL imports its header under the request's `timeout` ("Lean REPL header command timed out in T
  seconds", `time` = T); the body then gets the same `timeout` again ("Lean REPL command timed out in T seconds");
  a timed-out REPL is killed;
- a REPL that dies (EOF) or prints non-JSON raises `ReplCrash` ("JSON decode error"), which the route turns
  into HTTP 500 for the whole request; the REPL is killed;
- `time` is the body's wall time, rounded to 6 digits; with `max_uses` >= 0 a REPL retires after that many bodies
  (the header is not counted: `Repl.exhausted`);
- a timed-out row always carries `diagnostics: {"repl_uuid": <hex>}`; with `debug` a row that ran carries
  `{"repl_uuid": <dashed uuid>, "cpu_max", "memory_max"}` (`routers/check.py`, `Repl.send`).
Time is simulated: a simulated second lasts `time_scale` real seconds, and the answers report simulated seconds.
"""
from __future__ import annotations

import asyncio
import itertools
import uuid
from dataclasses import dataclass, field

from lean_env.testing.semantics import FakeLean, Rule


class NoFreeRepl(Exception):
    """No REPL became free within `max_wait_s` (the server answers 429)."""


class ReplCrash(Exception):
    """The REPL died or printed non-JSON (the server answers 500 for the whole request)."""


def split_snippet(code: str) -> tuple[str, str, int]:
    """code -> (header, body, header_line_count), as Kimina's `split_snippet`."""
    lines = code.splitlines()
    i = 0
    while i < len(lines) and (not lines[i].strip() or lines[i].strip().startswith("import ")):
        i += 1
    imports = [x.strip() for x in lines[:i] if x.strip().startswith("import ")]
    others = list(dict.fromkeys(x for x in imports if not x.startswith("import Mathlib")))
    header = (["import Mathlib"] if any(x.startswith("import Mathlib") for x in imports) else []) + others
    return "\n".join(header), "\n".join(lines[i:]), i


@dataclass(eq=False)
class FakeRepl:
    """One REPL of the double's pool: the header it imported and how often it was used."""

    header: str
    lean: FakeLean
    uid: int
    uuid: uuid.UUID = field(default_factory=uuid.uuid4)
    started: bool = False
    uses: int = 0
    last_used: float = 0.0


@dataclass
class ReplPool:
    """The server's REPL pool (`Manager`): at most `max_repls`, reused by header, recycled after `max_uses`."""

    rules: list[Rule] = field(default_factory=list)
    max_repls: int = 4
    max_wait_s: float = 60.0      # LEAN_SERVER_MAX_WAIT
    max_uses: int = -1            # LEAN_SERVER_MAX_REPL_USES (-1: unlimited)
    import_s: float = 0.0         # simulated header import time of a fresh REPL
    proof_s: float = 0.0          # simulated body time added to a rule's delay_s
    time_scale: float = 1.0
    lean_version: str = "4.9.0"   # the server's LEAN_SERVER_LEAN_VERSION, as `#eval Lean.versionString` answers it
    free: list[FakeRepl] = field(default_factory=list)
    busy: set[FakeRepl] = field(default_factory=set)
    started_repls: int = 0
    peak_busy: int = 0
    _cond: asyncio.Condition | None = None
    _uids: itertools.count = field(default_factory=itertools.count)

    def reset(self) -> None:
        """A server restart: every REPL is gone."""
        self.free.clear()
        self.busy.clear()
        self._cond = None

    def _condition(self) -> asyncio.Condition:
        if self._cond is None:
            self._cond = asyncio.Condition()
        return self._cond

    async def _sleep(self, simulated_s: float) -> None:
        await asyncio.sleep(max(0.0, simulated_s) * self.time_scale)

    async def get(self, header: str, reuse: bool) -> FakeRepl:
        """A free REPL for `header` (reused when `reuse`), a new one while there is room, or wait; NoFreeRepl after
        `max_wait_s`."""
        cond = self._condition()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.max_wait_s * self.time_scale
        async with cond:
            while True:
                match = next((r for r in self.free if r.header == header), None) if reuse else None
                if match is None and len(self.free) + len(self.busy) >= self.max_repls and self.free:
                    self.free.remove(min(self.free, key=lambda r: r.last_used))   # evict the LRU free REPL
                if match is not None:
                    self.free.remove(match)
                elif len(self.free) + len(self.busy) < self.max_repls:
                    match = FakeRepl(header, FakeLean(rules=self.rules, lean_version=self.lean_version),
                                     next(self._uids))
                    self.started_repls += 1
                if match is not None:
                    self.busy.add(match)
                    self.peak_busy = max(self.peak_busy, len(self.busy))
                    return match
                remaining = deadline - loop.time()
                try:
                    await asyncio.wait_for(cond.wait(), timeout=max(remaining, 0.0))
                except TimeoutError:
                    raise NoFreeRepl(f"Timed out after {self.max_wait_s}s while waiting for a REPL") from None

    async def _drop(self, repl: FakeRepl, *, keep: bool) -> None:
        cond = self._condition()
        async with cond:
            if repl in self.busy:
                self.busy.discard(repl)
                repl.last_used = asyncio.get_running_loop().time()
                if keep and not (self.max_uses >= 0 and repl.uses >= self.max_uses):
                    self.free.append(repl)
            cond.notify(1)

    async def release(self, repl: FakeRepl) -> None:
        """Give `repl` back to the pool (or drop it once it has been used `max_uses` times)."""
        await self._drop(repl, keep=True)

    async def destroy(self, repl: FakeRepl) -> None:
        """Drop `repl` from the pool (it crashed or timed out)."""
        await self._drop(repl, keep=False)

    async def run_one(self, snippet_id: str, code: str, timeout: float, reuse: bool, debug: bool = False) -> dict:
        """One snippet -> a ReplResponse dict {id, time, error | response}; raises NoFreeRepl or ReplCrash."""
        header, body, shift = split_snippet(code)
        repl = await self.get(header, reuse)
        try:
            if not repl.started:
                repl.started = True
                if header.strip():
                    if self.import_s > timeout:
                        await self._sleep(timeout)
                        await self.destroy(repl)
                        return {"id": snippet_id, "time": timeout, "diagnostics": {"repl_uuid": repl.uuid.hex},
                                "error": f"Lean REPL header command timed out in {timeout} seconds"}
                    await self._sleep(self.import_s)
                    repl.lean.command(header, None)   # the header becomes env 0
            # Kimina sends `env: 0` once the REPL has run anything: a header-less REPL's first body becomes env 0.
            env = 0 if header.strip() or repl.uses else None
            resp, fx = repl.lean.command(body, env)
            duration = self.proof_s + fx.delay_s
            if fx.action == "hang" or duration > timeout:
                await self._sleep(timeout)
                await self.destroy(repl)
                return {"id": snippet_id, "time": timeout, "diagnostics": {"repl_uuid": repl.uuid.hex},
                        "error": f"Lean REPL command timed out in {timeout} seconds"}
            await self._sleep(duration)
            if fx.action in ("crash", "garbage"):
                await self.destroy(repl)
                raise ReplCrash("JSON decode error")
            repl.uses += 1
            await self.release(repl)
        except asyncio.CancelledError:   # client disconnected (499): the server kills the REPL
            await asyncio.shield(self.destroy(repl))
            raise
        _shift(resp, shift)
        row = {"id": snippet_id, "time": round(duration, 6), "response": resp}
        if debug:
            row["diagnostics"] = {"repl_uuid": str(repl.uuid), "cpu_max": 0.0, "memory_max": 0}
        return row


def _shift(resp: dict, offset: int) -> None:
    """Move answer positions down by `offset` header lines (Kimina's `_apply_header_offset`)."""
    if offset <= 0:
        return
    if not resp.get("messages"):
        return   # as the server: sorries are shifted only when there are messages
    for item in resp["messages"] + (resp.get("sorries") or []):
        for key in ("pos", "endPos"):
            if item.get(key):
                item[key] = {**item[key], "line": item[key]["line"] + offset}

