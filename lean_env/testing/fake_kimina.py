"""An in-process Kimina Lean Server double for `httpx.MockTransport`, faithful to the real server's HTTP behaviour.

Modelled on project-numina/kimina-lean-server @fb2393d (2026-01-11): `server/main.py` (routes),
`server/routers/check.py` (`/api/check`), `server/routers/backward.py` (`/verify`, `/one_pass_verify_batch`),
`server/routers/health.py`, `server/auth.py`, `server/settings.py` and the request models in
`client/kimina_client/models.py` (`CheckRequest`, `VerifyRequestBody`, `ReplResponse`, `extend`).
The REPL pool lives in `lean_env.testing.kimina_pool`. Observable behaviour kept:
- `GET /health`, `/health/`, `/` -> 200 {"status": "ok"} without auth; unknown path 404, wrong method 405;
- with an API key set, a missing `Authorization` header -> 401 "Missing API key", a wrong one -> 401 "Invalid API
  key" (`Bearer ` optional); auth is checked before the body;
- 422 with FastAPI's `detail` list for a body the models reject: `timeout` is an int >= 0 (2.5 is rejected, 2.0
  and "2" pass), `snippets` non-empty with unique string ids, `codes[i]` needs `custom_id` (str|int);
- all snippets of a request run concurrently; the first snippet that finds no free REPL within `max_wait_s`
  makes the WHOLE request 429, one whose REPL crashes makes it 500 {"detail": "JSON decode error"}; the other
  snippets of that request keep running on the server (their REPLs stay busy) but their answers are lost;
- `infotree` (`infotree_type` on `/verify`) is null or one of full|tactics|original|substantive, `debug`/`reuse`/
  `disable_cache` are pydantic lax bools; anything else is 422 (the double does not produce infotrees);
- `/api/check` rows: {id, time, response} or {id, time, error, diagnostics} (None fields dropped; `debug` adds
  diagnostics to every row); `/verify` rows: {custom_id, response: {…, time}} or {custom_id, error} (an error row
  carries no time, no row carries diagnostics);
- a client that stops waiting (HTTP timeout) cancels its request's runs; their REPLs are killed (the 499 path).
Test hooks (not server behaviour): `restart(down_s)` drops every REPL, fails the requests in flight with a
closed connection and refuses connections for `down_s` simulated seconds; `faults` is a queue of whole-request
failures consumed one per authorised request ("refused", "garbage", or an HTTP status).
"""
from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

import httpx

from lean_env.testing.kimina_pool import NoFreeRepl, ReplCrash, ReplPool
from lean_env.testing.semantics import Rule

_HEALTH = ("/health", "/health/", "/")
_INFOTREES = (None, "full", "tactics", "original", "substantive")
_TRUE = (True, 1, "1", "true", "t", "yes", "y", "on")    # pydantic v2 lax bool (strings case-insensitive)
_FALSE = (False, 0, "0", "false", "f", "no", "n", "off")


def _bool_field(body: dict, key: str, default: bool, loc: tuple) -> tuple[bool, dict | None]:
    value = body.get(key, default)
    probe = value.lower() if isinstance(value, str) else value   # 1 == 1.0 == True: ints and floats 0/1 pass
    if probe in _TRUE:
        return True, None
    if probe in _FALSE:
        return False, None
    return default, {"type": "bool_parsing", "loc": [*loc, key], "input": value,
                     "msg": "Input should be a valid boolean, unable to interpret input"}
_ROUTES = ("/api/check", "/api/check/", "/verify", "/one_pass_verify_batch")


def _detail(status: int, detail: Any) -> httpx.Response:
    return httpx.Response(status, json={"detail": detail})


def _int_field(body: dict, key: str, default: int, loc: tuple) -> tuple[int | None, dict | None]:
    """Pydantic v2 lax `int` with ge=0: ints, integral floats and integer strings pass."""
    value = body.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None, {"type": "int_type", "loc": [*loc, key], "msg": "Input should be a valid integer", "input": value}
    if isinstance(value, float) and not value.is_integer():
        return None, {"type": "int_from_float", "loc": [*loc, key], "input": value,
                      "msg": "Input should be a valid integer, got a number with a fractional part"}
    try:
        number = int(value)
    except ValueError:
        return None, {"type": "int_parsing", "loc": [*loc, key], "input": value,
                      "msg": "Input should be a valid integer, unable to parse string as an integer"}
    if number < 0:
        return None, {"type": "greater_than_equal", "loc": [*loc, key], "input": value,
                      "msg": "Input should be greater than or equal to 0"}
    return number, None


def _validate(path: str, body: Any) -> tuple[list[tuple[str, str | None]], int, bool, bool, list[dict]]:
    """Request body -> (snippets [(id, code)], timeout, reuse, debug, errors); code None: a /verify item without
    content."""
    loc = ("body",)
    if not isinstance(body, dict):
        return [], 0, True, False, [{"type": "model_attributes_type", "loc": list(loc),
                                     "msg": "Input should be an object"}]
    errors: list[dict] = []
    checked = path.startswith("/api/check")
    timeout, err = _int_field(body, "timeout", 30 if checked else 300, loc)
    errors += [err] if err else []
    if checked:
        list_key, id_key, code_keys, tree_key = "snippets", "id", ("code",), "infotree"
        reuse, err = _bool_field(body, "reuse", True, loc)
        errors += [err] if err else []
        debug, err = _bool_field(body, "debug", False, loc)
    else:
        list_key, id_key, code_keys, tree_key, debug = "codes", "custom_id", ("proof", "code"), "infotree_type", False
        no_cache, err = _bool_field(body, "disable_cache", False, loc)
        reuse = not no_cache
    errors += [err] if err else []
    if body.get(tree_key) not in _INFOTREES:
        errors.append({"type": "enum", "loc": [*loc, tree_key], "input": body.get(tree_key),
                       "msg": "Input should be 'full', 'tactics', 'original' or 'substantive'"})
    items = body.get(list_key)
    snippets: list[tuple[str, str | None]] = []
    if not isinstance(items, list):
        errors.append({"type": "missing" if items is None else "list_type", "loc": [*loc, list_key],
                       "msg": "Field required" if items is None else "Input should be a valid list"})
        items = []
    for i, item in enumerate(items):
        ident = item.get(id_key) if isinstance(item, dict) else None
        code = next((item[k] for k in code_keys if isinstance(item, dict) and isinstance(item.get(k), str)), None)
        id_ok = isinstance(ident, str) or (id_key == "custom_id" and isinstance(ident, int)
                                           and not isinstance(ident, bool))
        if id_ok and code is None and id_key == "custom_id":   # the model allows it; the route then fails
            snippets.append((str(ident), None))
            continue
        if not id_ok or code is None:
            errors.append({"type": "string_type" if ident is not None else "missing", "loc": [*loc, list_key, i],
                           "msg": f"snippet needs a string {id_key!r} and {' or '.join(map(repr, code_keys))}"})
            continue
        snippets.append((str(ident), code))
    if id_key == "id" and not errors:
        if not snippets:
            errors.append({"type": "value_error", "loc": list(loc), "msg": "Value error, `snippets` must be non empty"})
        elif len({s for s, _ in snippets}) != len(snippets):
            errors.append({"type": "value_error", "loc": list(loc),
                           "msg": "Value error, `snippets` must have unique ids"})
    return snippets, timeout or 0, reuse, debug, errors


@dataclass
class FakeKimina:
    """The Kimina server double: its settings mirror the server's environment variables; `transport()` serves it."""

    rules: list[Rule] = field(default_factory=list)
    api_key: str | None = None     # LEAN_SERVER_API_KEY
    max_repls: int = 4             # LEAN_SERVER_MAX_REPLS
    max_wait_s: float = 60.0       # LEAN_SERVER_MAX_WAIT
    max_uses: int = -1             # LEAN_SERVER_MAX_REPL_USES
    import_s: float = 0.0          # simulated header import time
    proof_s: float = 0.0           # simulated body time (plus a rule's delay_s)
    time_scale: float = 1.0        # real seconds per simulated second
    lean_version: str = "4.9.0"    # LEAN_SERVER_LEAN_VERSION (the real image 2.0.0 defaults to v4.26.0)
    faults: list = field(default_factory=list)
    requests: list[dict] = field(default_factory=list)
    statuses: list[int] = field(default_factory=list)
    pool: ReplPool = field(init=False)
    _down_until: float = 0.0
    _generation: int = 0

    def __post_init__(self) -> None:
        self.pool = ReplPool(rules=self.rules, max_repls=self.max_repls, max_wait_s=self.max_wait_s,
                             max_uses=self.max_uses, import_s=self.import_s, proof_s=self.proof_s,
                             time_scale=self.time_scale, lean_version=self.lean_version)

    def transport(self) -> httpx.MockTransport:
        """An `httpx.MockTransport` that answers the server's routes."""
        return httpx.MockTransport(self._handle)

    def restart(self, down_s: float) -> None:
        """Test hook: the server process restarts now and listens again after `down_s` simulated seconds."""
        self._generation += 1
        self.pool.reset()
        self._down_until = asyncio.get_running_loop().time() + down_s * self.time_scale

    async def _handle(self, request: httpx.Request) -> httpx.Response:
        if asyncio.get_running_loop().time() < self._down_until:
            raise httpx.ConnectError("[Errno 111] Connection refused", request=request)
        response = await self._route(request)
        self.statuses.append(response.status_code)
        return response

    async def _route(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if path in _HEALTH:
            if request.method != "GET":
                return _detail(405, "Method Not Allowed")
            return httpx.Response(200, json={"status": "ok"})
        if path not in _ROUTES:
            return _detail(404, "Not Found")
        if request.method != "POST":
            return _detail(405, "Method Not Allowed")
        if self.api_key is not None:
            auth = request.headers.get("authorization")
            if not auth:
                return _detail(401, "Missing API key")
            if auth.removeprefix("Bearer ").strip() != self.api_key:
                return _detail(401, "Invalid API key")
        if self.faults:
            fault = self.faults.pop(0)
            if fault == "refused":
                raise httpx.ConnectError("[Errno 111] Connection refused", request=request)
            if fault == "garbage":
                return httpx.Response(200, text="<html>502 Bad Gateway</html>")
            return _detail(int(fault), f"injected {fault}")
        try:
            body = json.loads(request.content)
        except ValueError:
            return _detail(422, [{"type": "json_invalid", "loc": ["body", 0], "msg": "JSON decode error"}])
        snippets, timeout, reuse, debug, errors = _validate(path, body)
        if errors:
            return _detail(422, errors)
        self.requests.append(body)
        if any(code is None for _, code in snippets):   # `Code.get_proof_content` raises: an unhandled ValueError
            return httpx.Response(500, text="Internal Server Error")
        return await self._run(path, snippets, float(timeout), reuse, debug)

    async def _run(self, path: str, snippets: list, timeout: float, reuse: bool, debug: bool) -> httpx.Response:
        generation = self._generation
        tasks = [asyncio.ensure_future(self.pool.run_one(i, code, timeout, reuse, debug)) for i, code in snippets]
        failure: httpx.Response | None = None
        try:
            rows = await asyncio.gather(*tasks)   # the first failure fails the request; the others run on
        except NoFreeRepl:
            failure = _detail(429, "No available REPLs")
        except ReplCrash as e:
            failure = _detail(500, str(e))
        except asyncio.CancelledError:
            for task in tasks:
                task.cancel()
            raise
        if generation != self._generation:
            raise httpx.RemoteProtocolError("Server disconnected without sending a response.")
        if failure is not None:
            return failure
        if path.startswith("/api/check"):
            return httpx.Response(200, json={"results": rows})
        out = []
        for row in rows:
            item: dict[str, Any] = {"custom_id": row["id"]}
            if "error" in row:
                item["error"] = row["error"]
            else:
                item["response"] = {**row["response"], "time": row["time"]}
            out.append(item)
        return httpx.Response(200, json={"results": out})
