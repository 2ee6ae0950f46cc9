"""An in-process Kimina Lean Server double for `httpx.MockTransport`.

Speaks `/api/check`, `/verify` and `/health` with the real shapes (Lean answer under
`results[i].response`, lines relative to the submitted code, `time` for the body only,
timeouts as HTTP 200 + `error`). Lean semantics come from the same rules as the REPL double;
a rule outcome `hang` becomes "Lean REPL command timed out in … seconds", `crash` an `error`
string, `garbage` a non-JSON HTTP 200 body. `faults` is a queue of whole-request failures
consumed one per request: an HTTP status (401, 429, 500, …), "refused", "timeout" or "garbage".
"""
from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass, field

import httpx

from lean_env.testing.semantics import FakeLean, Rule


@dataclass
class FakeKimina:
    rules: list[Rule] = field(default_factory=list)
    api_key: str | None = None
    faults: list = field(default_factory=list)
    delay_s: float = 0.0
    requests: list[dict] = field(default_factory=list)

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self._handle)

    def _check_one(self, code: str) -> tuple[dict | None, str | None, float]:
        lines = code.split("\n")
        k = 0
        while k < len(lines) and (not lines[k].strip() or re.match(r"\s*import\b", lines[k])):
            k += 1
        lean = FakeLean(rules=self.rules)
        header_env = lean.command("\n".join(lines[:k]), None)[0]["env"] if k else None
        resp, fx = lean.command("\n".join(lines[k:]), header_env)
        if fx.action == "hang":
            return None, "Lean REPL command timed out in 30.0 seconds", 30.0
        if fx.action == "crash":
            return None, "Lean REPL process died unexpectedly", 0.1
        if fx.action == "garbage":
            return None, "garbage", 0.0
        for m in resp.get("messages", []):
            for key in ("pos", "endPos"):
                if m.get(key):
                    m[key] = {**m[key], "line": m[key]["line"] + k}
        for s in resp.get("sorries", []):
            for key in ("pos", "endPos"):
                if s.get(key):
                    s[key] = {**s[key], "line": s[key]["line"] + k}
        return resp, None, 0.05 + fx.delay_s

    async def _handle(self, request: httpx.Request) -> httpx.Response:
        if request.url.path in ("/health", "/health/", "/"):
            return httpx.Response(200, json={"status": "ok"})
        if self.api_key is not None:
            auth = request.headers.get("authorization", "")
            if auth.removeprefix("Bearer ").strip() != self.api_key:
                return httpx.Response(401, json={"detail": "Invalid API key"})
        if self.faults:
            fault = self.faults.pop(0)
            if fault == "refused":
                raise httpx.ConnectError("[Errno 111] Connection refused", request=request)
            if fault == "timeout":
                raise httpx.ReadTimeout("timed out", request=request)
            if fault == "garbage":
                return httpx.Response(200, text="<html>502 Bad Gateway</html>")
            return httpx.Response(int(fault), json={"detail": f"injected {fault}"})
        body = json.loads(request.content)
        self.requests.append(body)
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        if request.url.path == "/api/check":
            out = []
            for snip in body["snippets"]:
                resp, err, t = self._check_one(snip["code"])
                if err == "garbage":
                    return httpx.Response(200, text="not json {")
                row = {"id": snip["id"], "time": t}
                row.update({"error": err} if err else {"response": resp})
                out.append(row)
            return httpx.Response(200, json={"results": out})
        if request.url.path in ("/verify", "/one_pass_verify_batch"):
            out = []
            for code in body["codes"]:
                resp, err, t = self._check_one(code.get("proof") or code.get("code"))
                if err == "garbage":
                    return httpx.Response(200, text="not json {")
                out.append({"custom_id": code["custom_id"], "error": err,
                            "response": None if err else {**resp, "time": t}})
            return httpx.Response(200, json={"results": out})
        return httpx.Response(404, json={"detail": "Not Found"})
