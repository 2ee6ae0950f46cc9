"""Kimina Lean Server backend (httpx, async).

Endpoints: `POST /api/check` {"snippets":[{"id","code"}],"timeout","debug","reuse"} ->
{"results":[{"id","time","error"?,"response"?}]}; legacy `POST /verify` {"codes":[{"custom_id",
"proof"}],"timeout"} -> {"results":[{"custom_id","error","response":{…,"time"}}]}; `GET /health`.
The Lean answer is `results[i].response` (messages/sorries live there, not on the result).
Concurrent `run` calls are micro-batched (up to `batch_size`, after `linger_s`), at most
`max_concurrency` requests are in flight, and a failed request is retried with exponential
backoff. Classification: 401/403 -> INFRA at once; 429/5xx/499, connection errors, HTTP
timeouts and undecodable bodies -> retried, then INFRA; HTTP 200 with an `error` string ->
TIMEOUT if it says "timed out", else INFRA.
"""
from __future__ import annotations

import asyncio
import itertools
import os
import random
import time
from typing import Any, Literal, Sequence

import httpx

from lean_env.backends.common import parse_repl_response
from lean_env.types import Outcome, RunResult, Snippet

_RETRY_STATUS = {429, 499, 500, 502, 503, 504}


class KiminaBackend:
    name = "kimina"

    def __init__(self, url: str | None = None, api_key: str | None = None, *,
                 endpoint: Literal["check", "verify"] = "check", batch_size: int = 8, max_concurrency: int = 4,
                 retries: int = 3, backoff_s: float = 1.0, max_backoff_s: float = 10.0, linger_s: float = 0.01,
                 http_timeout_s: float | None = None, reuse: bool = True, transport: httpx.AsyncBaseTransport | None = None):
        if endpoint not in ("check", "verify"):
            raise ValueError("endpoint must be 'check' or 'verify'")
        self.url = (url or os.environ.get("LEAN_SERVER_API_URL") or "http://localhost:8000").rstrip("/")
        key = api_key if api_key is not None else os.environ.get("LEAN_SERVER_API_KEY")
        self.headers = {"Authorization": f"Bearer {key}"} if key else {}
        self.endpoint, self.batch_size, self.max_concurrency = endpoint, max(1, batch_size), max(1, max_concurrency)
        self.retries, self.backoff_s, self.max_backoff_s, self.linger_s = retries, backoff_s, max_backoff_s, linger_s
        self.http_timeout_s, self.reuse, self._transport = http_timeout_s, reuse, transport
        self._client: httpx.AsyncClient | None = None
        self._sem: asyncio.Semaphore | None = None
        self._pending: list[tuple[Snippet, float, asyncio.Future]] = []
        self._timer: asyncio.TimerHandle | None = None
        self._ids = itertools.count()
        self._tasks: set[asyncio.Task] = set()
        self.requests_sent = 0

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(base_url=self.url, headers=self.headers, transport=self._transport)
            self._sem = asyncio.Semaphore(self.max_concurrency)
        return self._client

    async def run(self, snippets: Sequence[Snippet], *, timeout_s: float) -> list[RunResult]:
        loop = asyncio.get_running_loop()
        futures = []
        for s in snippets:
            fut = loop.create_future()
            self._pending.append((s, timeout_s, fut))
            futures.append(fut)
        if len(self._pending) >= self.batch_size:
            self._flush()
        elif self._pending and self._timer is None:
            self._timer = loop.call_later(self.linger_s, self._flush)
        return list(await asyncio.gather(*futures))

    def _flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        pending, self._pending = self._pending, []
        by_timeout: dict[float, list] = {}
        for item in pending:
            by_timeout.setdefault(item[1], []).append(item)
        for timeout_s, items in by_timeout.items():
            for i in range(0, len(items), self.batch_size):
                task = asyncio.ensure_future(self._send(items[i: i + self.batch_size], timeout_s))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)

    async def _send(self, items: list, timeout_s: float) -> None:
        ids = [f"s{next(self._ids)}" for _ in items]
        try:
            results = await self._post_with_retries([it[0] for it in items], ids, timeout_s)
        except Exception as e:  # never lose a sample: every future gets a result
            results = [RunResult(it[0].id, Outcome.INFRA, 0.0, infra_detail=f"client error: {e!r}") for it in items]
        for (_, _, fut), res in zip(items, results):
            if not fut.done():
                fut.set_result(res)

    def _payload(self, snippets: Sequence[Snippet], ids: list[str], timeout_s: float) -> tuple[str, dict]:
        if self.endpoint == "check":
            return "/api/check", {"snippets": [{"id": i, "code": s.code} for i, s in zip(ids, snippets)],
                                  "timeout": timeout_s, "debug": False, "reuse": self.reuse}
        return "/verify", {"codes": [{"custom_id": i, "proof": s.code} for i, s in zip(ids, snippets)],
                           "timeout": timeout_s, "disable_cache": False}

    async def _post_with_retries(self, snippets: Sequence[Snippet], ids: list[str], timeout_s: float) -> list[RunResult]:
        client = self._http()
        assert self._sem is not None
        path, payload = self._payload(snippets, ids, timeout_s)
        http_timeout = self.http_timeout_s or timeout_s + 180.0   # server may import a header and wait for a REPL
        detail = ""
        for attempt in range(self.retries + 1):
            if attempt:
                await asyncio.sleep(min(self.max_backoff_s, self.backoff_s * 2 ** (attempt - 1)) * (0.5 + random.random() / 2))
            t0 = time.perf_counter()
            try:
                async with self._sem:
                    self.requests_sent += 1
                    resp = await client.post(path, json=payload, timeout=http_timeout)
            except httpx.TimeoutException as e:
                detail = f"HTTP timeout after {http_timeout:g} s ({type(e).__name__})"
                continue
            except httpx.TransportError as e:
                detail = f"connection error: {type(e).__name__}: {e}"
                continue
            if resp.status_code in (401, 403):
                detail = f"HTTP {resp.status_code}: unauthorized (check LEAN_SERVER_API_KEY)"
                break
            if resp.status_code in _RETRY_STATUS:
                detail = f"HTTP {resp.status_code}: {resp.text[:200]}"
                continue
            if resp.status_code != 200:
                detail = f"HTTP {resp.status_code}: {resp.text[:200]}"
                break
            try:
                body = resp.json()
                rows = {r.get("id", r.get("custom_id")): r for r in body["results"]}
            except (ValueError, KeyError, TypeError, AttributeError):
                detail = f"undecodable server answer: {resp.text[:200]!r}"
                continue
            elapsed = time.perf_counter() - t0
            return [self._decode(s, rows.get(i), elapsed) for s, i in zip(snippets, ids)]
        return [RunResult(s.id, Outcome.INFRA, 0.0, infra_detail=detail) for s in snippets]

    def _decode(self, snippet: Snippet, row: Any, elapsed: float) -> RunResult:
        if not isinstance(row, dict):
            return RunResult(snippet.id, Outcome.INFRA, elapsed, infra_detail="snippet missing from the server answer")
        response = row.get("response")
        t = row.get("time")
        if t is None and isinstance(response, dict):
            t = response.get("time")
        elapsed = float(t) if isinstance(t, (int, float)) else elapsed
        error = row.get("error")
        if error:
            outcome = Outcome.TIMEOUT if "timed out" in str(error).lower() else Outcome.INFRA
            return RunResult(snippet.id, outcome, elapsed, infra_detail=f"server: {str(error)[:300]}")
        if not isinstance(response, dict):
            return RunResult(snippet.id, Outcome.INFRA, elapsed, infra_detail="server answer has no response")
        if "env" not in response and "message" not in response:
            response = {**response, "env": None}   # Kimina drops `env`; keep it a command answer
        return parse_repl_response(snippet.id, response, elapsed, line_shift=snippet.header_lines)

    async def health(self) -> bool:
        try:
            resp = await self._http().get("/health", timeout=10.0)
            return resp.status_code == 200 and resp.json().get("status") == "ok"
        except (httpx.HTTPError, ValueError, AttributeError):
            return False

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None
