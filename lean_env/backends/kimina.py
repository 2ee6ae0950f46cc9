"""Kimina Lean Server backend (httpx, async), written against the server's real behaviour.

Endpoints: `POST /api/check` {"snippets":[{"id","code"}],"timeout","debug","reuse"} ->
{"results":[{"id","time","error"?,"response"?}]}; legacy `POST /verify` {"codes":[{"custom_id","proof"}],
"timeout","disable_cache"} -> {"results":[{"custom_id","error"?,"response"?:{…,"time"}}]} (error rows carry no
time); `GET /health`. Server behaviour this client is built for (kimina-lean-server @fb2393d, modelled by
`lean_env.testing.fake_kimina`):
- `timeout` is an integer field (2.5 -> HTTP 422). The client sends ceil(timeout_s), at least 1 s.
- One snippet whose REPL crashes fails the WHOLE request with HTTP 500; one that finds no free REPL within
  the server's MAX_WAIT (60 s) fails it with 429. Per-proof isolation: a request that fails as a whole
  (500, 499, 504, undecodable body, no answer within the HTTP timeout) is split into single-proof requests at
  once; a single proof that still fails after `crash_retries` re-runs is INFRA, every other proof gets its
  verdict. Splitting straight to singletons is bisection's last level reached in one round: with one bad
  proof in b, bisection re-runs about 2b proofs over log2(b) rounds, singletons re-run b in one round.
- 429 (and 502/503: a proxy in front of a restarting server) is retried as a whole with exponential backoff and
  jitter, at most `busy_retries` times; connection errors (server restarting) are retried the same way until
  `restart_wait_s` has passed. Then INFRA.
- 401/403/422/other 4xx: INFRA at once (configuration or client error; a retry cannot help).
- The server imports a fresh REPL's header under the request's timeout. A "header command timed out" answer
  is no verdict: the proof is re-sent once with ceil(max(timeout_s, import_timeout_s)), and the body time the
  server reports is then held to the proof limit client-side (TIMEOUT above it).
  Departure: on that re-send a hanging proof is killed only after the import limit.
- Limits from the server's size `server_repls` (its LEAN_SERVER_MAX_REPLS, which it does not report: /health
  answers only {"status": "ok"}, so it is configured, not discovered): at most 2 * server_repls snippets in
  flight (one running and one queued per REPL, so a queued snippet rarely waits out MAX_WAIT), in requests of
  at most min(batch_size, max(1, server_repls // 4)) snippets (a request holds its slots until its slowest
  proof ends; small requests keep REPLs busy). Measured in bench/lean/kimina_bench.py.
Concurrent `run` calls are micro-batched (after `linger_s`). Error rows: "timed out" -> TIMEOUT, others -> INFRA.
"""
from __future__ import annotations

import asyncio
import itertools
import math
import os
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import httpx

from lean_env.backends.common import parse_repl_response
from lean_env.types import Outcome, RunResult, Snippet

HEADER_TIMEOUT = "header command timed out"
_BATCH_FAILURE = {499, 500, 504}    # the request as a whole: a REPL crashed or the server gave up on it
_BUSY = {429, 502, 503}             # no REPL free, or a proxy in front of a (re)starting server


def wire_timeout(timeout_s: float) -> int:
    """Kimina's integer `timeout`: ceil(timeout_s), at least 1 (0 would time out every proof at once)."""
    return max(1, math.ceil(timeout_s))


@dataclass(frozen=True)
class _Failure:
    kind: Literal["batch", "busy", "down", "final"]
    detail: str


class KiminaBackend:
    """`LeanBackend` over a Kimina Lean Server (`url`, `api_key`); the options are `BackendOptions`' kimina fields and
    the behaviour is the module docstring's."""

    name = "kimina"

    def __init__(self, url: str | None = None, api_key: str | None = None, *,
                 endpoint: Literal["check", "verify"] = "check", batch_size: int = 8, server_repls: int = 8,
                 import_timeout_s: float = 300.0, crash_retries: int = 1, busy_retries: int = 6,
                 restart_wait_s: float = 120.0, backoff_s: float = 1.0, max_backoff_s: float = 10.0,
                 linger_s: float = 0.01, http_timeout_s: float | None = None, reuse: bool = True,
                 transport: httpx.AsyncBaseTransport | None = None):
        if endpoint not in ("check", "verify"):
            raise ValueError("endpoint must be 'check' or 'verify'")
        if batch_size < 1 or server_repls < 1:
            raise ValueError(f"batch_size and server_repls must be >= 1, got {batch_size}, {server_repls}")
        self.url = (url or os.environ.get("LEAN_SERVER_API_URL") or "http://localhost:8000").rstrip("/")
        key = api_key if api_key is not None else os.environ.get("LEAN_SERVER_API_KEY")
        self.headers = {"Authorization": f"Bearer {key}"} if key else {}
        self.endpoint, self.batch_size, self.server_repls = endpoint, batch_size, server_repls
        self.import_timeout_s, self.crash_retries, self.busy_retries = import_timeout_s, crash_retries, busy_retries
        self.restart_wait_s, self.backoff_s, self.max_backoff_s = restart_wait_s, backoff_s, max_backoff_s
        self.linger_s, self.http_timeout_s, self.reuse, self._transport = linger_s, http_timeout_s, reuse, transport
        self._client: httpx.AsyncClient | None = None
        self._pending: list[tuple[Snippet, float, asyncio.Future]] = []
        self._free_slots = 2 * server_repls
        self._request_size = min(batch_size, max(1, server_repls // 4))
        self._timer: asyncio.TimerHandle | None = None
        self._ids = itertools.count()
        self._tasks: set[asyncio.Task] = set()
        self.requests_sent = 0

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(base_url=self.url, headers=self.headers, transport=self._transport)
        return self._client

    async def run(self, snippets: Sequence[Snippet], *, timeout_s: float) -> list[RunResult]:
        """`LeanBackend.run`: the snippets' results in order, micro-batched with concurrent calls; never raises for one
        snippet's failure (INFRA or TIMEOUT instead)."""
        loop = asyncio.get_running_loop()
        futures = []
        for s in snippets:
            fut = loop.create_future()
            self._pending.append((s, timeout_s, fut))
            futures.append(fut)
        if len(self._pending) >= self._request_size:
            self._pump()
        elif self._pending and self._timer is None:
            self._timer = loop.call_later(self.linger_s, self._pump)
        return list(await asyncio.gather(*futures))

    def _pump(self) -> None:
        """Send requests (same timeout, at most `_request_size` snippets) while snippet slots are free."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        while self._pending and self._free_slots > 0:
            timeout_s = self._pending[0][1]
            n = min(self._request_size, self._free_slots)
            batch = [it for it in self._pending if it[1] == timeout_s][:n]
            taken = {id(it) for it in batch}
            self._pending = [it for it in self._pending if id(it) not in taken]
            self._free_slots -= len(batch)
            task = asyncio.ensure_future(self._send(batch, timeout_s))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _send(self, items: list, timeout_s: float) -> None:
        snippets = [it[0] for it in items]
        try:
            results = await self._settle(snippets, timeout_s)
        except Exception as e:  # noqa: BLE001  never lose a sample: every future gets a result
            results = [RunResult(s.id, Outcome.INFRA, 0.0, infra_detail=f"client error: {e!r}") for s in snippets]
        finally:
            self._free_slots += len(items)
            self._pump()
        for (_, _, fut), res in zip(items, results):
            if not fut.done():
                fut.set_result(res)

    async def _settle(self, snippets: list[Snippet], timeout_s: float,
                      body_limit_s: float | None = None) -> list[RunResult]:
        """A verdict for every proof that can get one; retry, split or give INFRA per the module docstring."""
        busy, crashes, downs, down_since = 0, 0, 0, None
        while True:
            got = await self._post(snippets, timeout_s)
            if isinstance(got, list):
                return await self._redo_header_timeouts(snippets, got, timeout_s, body_limit_s)
            if got.kind == "batch" and len(snippets) > 1:
                parts = await asyncio.gather(*(self._settle([s], timeout_s, body_limit_s) for s in snippets))
                return [r for part in parts for r in part]
            if got.kind == "batch" and crashes < self.crash_retries:
                crashes += 1
                await self._backoff(crashes)
                continue
            if got.kind == "busy" and busy < self.busy_retries:
                busy += 1
                await self._backoff(busy)
                continue
            if got.kind == "down":
                down_since = down_since or time.monotonic()
                downs += 1
                if time.monotonic() - down_since < self.restart_wait_s:
                    await self._backoff(downs)
                    continue
            alone = got.kind == "batch"
            detail = got.detail + (" (this proof alone fails the request)" if alone else "")
            return [RunResult(s.id, Outcome.INFRA, 0.0, infra_detail=detail, retries_spent=alone) for s in snippets]

    async def _redo_header_timeouts(self, snippets: list[Snippet], results: list[RunResult], timeout_s: float,
                                    body_limit_s: float | None) -> list[RunResult]:
        """Re-send proofs whose REPL's header import timed out, with the import limit;
        hold bodies to the proof limit."""
        if body_limit_s is not None:
            limit = wire_timeout(body_limit_s)
            return [RunResult(r.id, Outcome.TIMEOUT, r.elapsed_s,
                              infra_detail=f"body took {r.elapsed_s:g} s > {limit} s")
                    if r.outcome is Outcome.OK and r.elapsed_s > limit else r for r in results]
        redo = [i for i, r in enumerate(results) if r.infra_detail and HEADER_TIMEOUT in r.infra_detail]
        if not redo or self.import_timeout_s <= timeout_s:
            return results
        again = await self._settle([snippets[i] for i in redo], self.import_timeout_s, body_limit_s=timeout_s)
        results = list(results)
        for i, r in zip(redo, again):
            results[i] = r
        return results

    async def _backoff(self, attempt: int) -> None:
        """Exponential backoff with full jitter in [d/2, d], d = min(max_backoff_s, backoff_s * 2^(attempt-1))."""
        delay = min(self.max_backoff_s, self.backoff_s * 2 ** (attempt - 1))
        await asyncio.sleep(delay * (0.5 + random.random() / 2))

    def _payload(self, snippets: Sequence[Snippet], ids: list[str], timeout: int) -> tuple[str, dict]:
        if self.endpoint == "check":
            return "/api/check", {"snippets": [{"id": i, "code": s.code} for i, s in zip(ids, snippets)],
                                  "timeout": timeout, "debug": False, "reuse": self.reuse}
        return "/verify", {"codes": [{"custom_id": i, "proof": s.code} for i, s in zip(ids, snippets)],
                           "timeout": timeout, "disable_cache": not self.reuse}

    async def _post(self, snippets: Sequence[Snippet], timeout_s: float) -> list[RunResult] | _Failure:
        """One request -> results, or how it failed as a whole."""
        ids = [f"s{next(self._ids)}" for _ in snippets]
        timeout = wire_timeout(timeout_s)
        path, payload = self._payload(snippets, ids, timeout)
        # the server may wait MAX_WAIT (60 s) for a REPL, then import the header and run the body, each under `timeout`
        http_timeout = self.http_timeout_s or 2 * timeout + 90.0
        t0 = time.perf_counter()
        self.requests_sent += 1
        try:
            resp = await asyncio.wait_for(self._http().post(path, json=payload, timeout=http_timeout), http_timeout)
        except (TimeoutError, httpx.TimeoutException):
            return _Failure("batch", f"no answer within the HTTP timeout of {http_timeout:g} s")
        except httpx.TransportError as e:
            return _Failure("down", f"connection error: {type(e).__name__}: {e}")
        status = f"HTTP {resp.status_code}: {resp.text[:200]}"
        if resp.status_code in (401, 403):
            return _Failure("final", f"HTTP {resp.status_code}: unauthorized (check LEAN_SERVER_API_KEY)")
        if resp.status_code in _BUSY:
            return _Failure("busy", status)
        if resp.status_code in _BATCH_FAILURE:
            return _Failure("batch", status)
        if resp.status_code != 200:
            return _Failure("final", status)
        try:
            rows = {str(r.get("id", r.get("custom_id"))): r for r in resp.json()["results"]}
        except (ValueError, KeyError, TypeError, AttributeError):
            return _Failure("batch", f"undecodable server answer: {resp.text[:200]!r}")
        elapsed = time.perf_counter() - t0
        return [self._decode(s, rows.get(i), elapsed) for s, i in zip(snippets, ids)]

    def _decode(self, snippet: Snippet, row: Any, elapsed: float) -> RunResult:
        if not isinstance(row, dict):
            return RunResult(snippet.id, Outcome.INFRA, elapsed, infra_detail="snippet missing from the server answer")
        response = row.get("response")
        t = row.get("time")
        if t is None and isinstance(response, dict):
            t = response.get("time")
        elapsed = float(t) if isinstance(t, (int, float)) else elapsed   # /verify error rows carry no time
        error = row.get("error")
        if error:
            text = str(error)
            timed_out = "timed out" in text.lower() and HEADER_TIMEOUT not in text
            return RunResult(snippet.id, Outcome.TIMEOUT if timed_out else Outcome.INFRA, elapsed,
                             infra_detail=f"server: {text[:300]}")
        if not isinstance(response, dict):
            return RunResult(snippet.id, Outcome.INFRA, elapsed, infra_detail="server answer has no response")
        response = {k: v for k, v in response.items() if k != "time"}
        if "env" not in response and "message" not in response:
            response["env"] = None   # Kimina drops `env` (gc); keep it a command answer
        return parse_repl_response(snippet.id, response, elapsed, line_shift=snippet.header_lines)

    async def health(self) -> bool:
        """Whether `GET /health` answers `{"status": "ok"}` within 10 s."""
        try:
            resp = await self._http().get("/health", timeout=10.0)
            return resp.status_code == 200 and resp.json().get("status") == "ok"
        except (httpx.HTTPError, ValueError, AttributeError):
            return False

    async def aclose(self) -> None:
        """Close the HTTP client (a later `run` opens a new one)."""
        if self._client is not None:
            await self._client.aclose()
            self._client = None
