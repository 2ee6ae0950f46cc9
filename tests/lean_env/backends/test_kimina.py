"""Kimina client against the faithful Kimina double: per-proof isolation, integer timeouts, limits, faults."""
import asyncio
import glob
import json
import os

import httpx
import pytest

from lean_env import Outcome, Snippet
from lean_env.backends.kimina import KiminaBackend, wire_timeout
from lean_env.testing.fake_kimina import FakeKimina
from lean_env.testing.semantics import load_rules

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "shared", "fixtures", "kimina_responses")
RULES = load_rules([{"match": "BAD", "outcome": "error", "message": "unsolved goals\n⊢ False"},
                    {"match": "HANG", "outcome": "hang"}, {"match": "CRASH", "outcome": "crash"},
                    {"match": "SLOW", "outcome": "valid", "delay_s": 2.0}])
SCALE = 0.002   # one simulated second lasts 2 ms


def snip(i, tactic="norm_num"):
    return Snippet(str(i), "import Mathlib\nimport Aesop\n",
                   f"\nopen Real\n\ntheorem t{i} : True := by\n  {tactic}\n\n#print axioms t{i}\n")


def kind(r):
    """What the client made of one proof: valid | error | timeout | infra."""
    if r.outcome is not Outcome.OK:
        return r.outcome.value
    if any(m.severity == "error" for m in r.messages):
        return "error"
    assert r.messages[-1].line == 7 and "depends on axioms" in r.messages[-1].text   # lines relative to the body
    return "valid"


def expected(tactic):
    return {"BAD": "error", "HANG": "timeout", "CRASH": "infra"}.get(tactic, "valid")


def fake(**kw):
    return FakeKimina(**{"rules": RULES, "time_scale": SCALE, "proof_s": 1.0, **kw})


def client(server, **kw):
    return KiminaBackend("http://kimina", transport=server.transport(),
                         **{"backoff_s": 0.001, "max_backoff_s": 0.01, **kw})


def run(backend, snippets, timeout_s=30, each=False):
    async def main():
        try:
            if each:   # concurrent single-proof calls, as the reward function makes them
                return [r for (r,) in await asyncio.gather(*(backend.run([s], timeout_s=timeout_s) for s in snippets))]
            return await backend.run(snippets, timeout_s=timeout_s)
        finally:
            await backend.aclose()
    return asyncio.run(main())


def test_wire_timeout_is_an_integer_ceiling():
    assert [wire_timeout(t) for t in (2.5, 3.0, 0.2, 0.0, 59.01)] == [3, 3, 1, 1, 60]


@pytest.mark.parametrize("endpoint", ["check", "verify"])
def test_crash_hang_and_more_proofs_than_repls_in_one_batch(endpoint):
    """One crashing and one hanging proof among 12, 3 REPLs, a fractional timeout: every other proof its verdict."""
    tactics = ["norm_num", "BAD", "CRASH", "norm_num", "HANG", "BAD",
               "norm_num", "SLOW", "norm_num", "BAD", "norm_num", "norm_num"]
    server = fake(api_key="k", max_repls=3)
    b = client(server, api_key="k", endpoint=endpoint, batch_size=12, server_repls=12)
    rs = run(b, [snip(i, t) for i, t in enumerate(tactics)], timeout_s=2.5)
    assert [r.id for r in rs] == [str(i) for i in range(12)]
    assert [kind(r) for r in rs] == [expected(t) for t in tactics]
    assert 500 in server.statuses and {q["timeout"] for q in server.requests} == {3}
    assert rs[2].infra_detail and "alone" in rs[2].infra_detail and rs[7].elapsed_s == 3.0


def test_fractional_limit_is_rounded_up():
    """SLOW takes 3 simulated s: within ceil(2.5) = 3, over 2."""
    rs = run(client(fake()), [snip(0, "SLOW"), snip(1)], timeout_s=2.5)
    assert [kind(r) for r in rs] == ["valid", "valid"] and rs[0].elapsed_s == 3.0
    rs = run(client(fake()), [snip(0, "SLOW"), snip(1)], timeout_s=2)
    assert [kind(r) for r in rs] == ["timeout", "valid"]


def test_client_keeps_at_most_twice_server_repls_in_flight():
    server = fake(max_repls=16)
    b = client(server, batch_size=8, server_repls=2)
    rs = run(b, [snip(i, "BAD" if i % 3 == 0 else "norm_num") for i in range(20)], each=True)
    assert [kind(r) for r in rs] == ["error" if i % 3 == 0 else "valid" for i in range(20)]
    assert server.pool.peak_busy == 4 and set(server.statuses) == {200}
    assert max(len(q["snippets"]) for q in server.requests) == 1   # max(1, 2 // 4)


def test_429_when_no_repl_is_free_is_retried_with_backoff():
    """A client configured for more REPLs than the server has: snippets queue past MAX_WAIT, the server answers 429."""
    server = fake(max_repls=2, max_wait_s=1.5)
    b = client(server, batch_size=4, server_repls=16, busy_retries=20, max_backoff_s=0.2)  # room for a loaded CI host
    rs = run(b, [snip(i) for i in range(32)], each=True)
    assert 429 in server.statuses and all(kind(r) == "valid" for r in rs)


def test_persistent_429_ends_infra_after_bounded_retries():
    server = fake(faults=[429] * 50)
    b = client(server, busy_retries=3)
    (r,) = run(b, [snip(0)])
    assert r.outcome is Outcome.INFRA and "429" in r.infra_detail and b.requests_sent == 4


@pytest.mark.parametrize("key", [None, "wrong"])
def test_wrong_or_missing_api_key_is_infra_without_retry(key, monkeypatch):
    monkeypatch.delenv("LEAN_SERVER_API_KEY", raising=False)
    server = fake(api_key="secret")
    b = client(server, api_key=key)
    rs = run(b, [snip(0), snip(1)])
    assert all(r.outcome is Outcome.INFRA and "401" in r.infra_detail for r in rs) and b.requests_sent == 1
    assert [kind(r) for r in run(client(server, api_key="secret"), [snip(0), snip(1, "BAD")])] == ["valid", "error"]


def test_server_restarted_mid_run_loses_no_verdict():
    server = fake(max_repls=2)
    b = client(server, batch_size=2, server_repls=2, max_backoff_s=0.02)
    tactics = ["BAD" if i % 4 == 0 else "norm_num" for i in range(24)]

    async def main():
        async def restart_soon():
            await asyncio.sleep(4 * SCALE)
            server.restart(down_s=30)   # 60 ms of refused connections
        try:
            restarter = asyncio.ensure_future(restart_soon())
            out = await asyncio.gather(*(b.run([snip(i, t)], timeout_s=30) for i, t in enumerate(tactics)))
            await restarter
            return [r for (r,) in out]
        finally:
            await b.aclose()
    rs = asyncio.run(main())
    assert [kind(r) for r in rs] == [expected(t) for t in tactics]
    assert server.pool.started_repls > 2   # the REPLs were really lost


def test_server_down_longer_than_restart_wait_is_infra():
    server = fake(faults=["refused"] * 1000)
    b = client(server, restart_wait_s=0.05)
    (r,) = run(b, [snip(0)])
    assert r.outcome is Outcome.INFRA and "connection" in r.infra_detail and b.requests_sent > 2


def test_header_import_gets_its_own_limit():
    """Import (20 s) longer than the proof limit (5 s): the proof is re-sent with import_timeout_s,
    its body held to 5 s."""
    server = fake(import_s=20.0)
    rs = run(client(server, import_timeout_s=60), [snip(0), snip(1, "BAD"), snip(2, "HANG")], timeout_s=5)
    assert [kind(r) for r in rs] == ["valid", "error", "timeout"]
    assert {q["timeout"] for q in server.requests} == {5, 60}
    (r,) = run(client(fake(import_s=20.0), import_timeout_s=5), [snip(0)], timeout_s=5)
    assert r.outcome is Outcome.INFRA and "header command timed out" in r.infra_detail


def test_slow_body_after_a_header_retry_is_a_timeout():
    server = fake(import_s=20.0)
    (r,) = run(client(server, import_timeout_s=60), [snip(0, "SLOW")], timeout_s=1)
    assert r.outcome is Outcome.TIMEOUT and "body took" in r.infra_detail


def test_http_timeout_splits_the_batch():
    """A server that never answers one request: the client stops waiting, the proofs are re-sent alone."""
    server = fake()
    calls = []
    inner = server.transport()

    async def handler(request):
        calls.append(request)
        if len(calls) == 1:
            await asyncio.sleep(10)
        return await inner.handle_async_request(request)
    b = KiminaBackend("http://k", transport=httpx.MockTransport(handler), http_timeout_s=0.05, backoff_s=0.001)
    rs = run(b, [snip(0), snip(1, "BAD")])
    assert [kind(r) for r in rs] == ["valid", "error"] and len(calls) == 3


def test_trace_and_info_messages_are_not_errors_or_infra():
    def handler(request):
        body = json.loads(request.content)
        msgs = [{"severity": "trace", "pos": {"line": 3, "column": 0}, "endPos": None,
                 "data": "[Meta.synthInstance] ✅"},
                {"severity": "info", "pos": {"line": 9, "column": 0}, "endPos": None,
                 "data": "'t0' depends on axioms: [propext]"}]
        return httpx.Response(200, json={"results": [
            {"id": s["id"], "time": 0.1, "response": {"env": 0, "messages": msgs}} for s in body["snippets"]]})
    (r,) = run(KiminaBackend("http://k", transport=httpx.MockTransport(handler)), [snip(0)])
    assert r.outcome is Outcome.OK and [m.severity for m in r.messages] == ["trace", "info"] and kind(r) == "valid"


def test_undecodable_answer_and_missing_row():
    def handler(request):
        return httpx.Response(200, json={"results": []})
    (r,) = run(KiminaBackend("http://k", transport=httpx.MockTransport(handler)), [snip(0)])
    assert r.outcome is Outcome.INFRA and "missing" in r.infra_detail
    server = fake(faults=["garbage", "garbage", "garbage"])
    rs = run(client(server, crash_retries=1), [snip(0), snip(1)])
    assert [kind(r) for r in rs] == ["valid", "valid"]   # whole-batch garbage -> split; one singleton retried


def test_real_verify_answers_decode():
    paths = sorted(glob.glob(os.path.join(FIXTURES, "*.json")))
    if not paths:
        pytest.skip("../shared/fixtures absent")
    answers = {}
    for i, path in enumerate(paths):
        with open(path) as f:
            answers[f"s{i}"] = json.load(f)

    def handler(request):
        body = json.loads(request.content)
        rows = []
        for code in body["codes"]:
            (row,) = answers[code["custom_id"]]["results"]
            rows.append({**row, "custom_id": code["custom_id"]})
        return httpx.Response(200, json={"results": rows})

    b = KiminaBackend("http://k", endpoint="verify", batch_size=len(paths), server_repls=len(paths),
                      transport=httpx.MockTransport(handler))
    rs = run(b, [Snippet(str(i), "", "x") for i in range(len(paths))])
    n_timeout = sum(r.outcome is Outcome.TIMEOUT for r in rs)
    assert n_timeout == sum(1 for a in answers.values() if a["results"][0]["error"])
    for r, a in zip(rs, answers.values()):
        row = a["results"][0]
        if not row["error"]:
            assert r.outcome is Outcome.OK and len(r.messages) == len(row["response"].get("messages", []))
            assert r.elapsed_s == row["response"]["time"]


def test_health_and_bearer_header(monkeypatch):
    seen = {}

    def handler(request):
        seen["auth"] = request.headers.get("authorization")
        return httpx.Response(200, json={"status": "ok"})
    monkeypatch.setenv("LEAN_SERVER_API_KEY", "env-key")
    b = KiminaBackend("http://k", transport=httpx.MockTransport(handler))

    async def main():
        try:
            return await b.health()
        finally:
            await b.aclose()
    assert asyncio.run(main()) and seen["auth"] == "Bearer env-key"


def test_caller_does_not_repeat_retries_the_backend_spent_on_a_crashing_proof():
    """verify's infra retries skip a proof that alone fails its request: the backend re-ran it already."""
    from lean_env.options import CheckOptions
    from lean_env.verify import run_with_retries

    server = fake(max_repls=2)
    b = client(server, crash_retries=1)

    async def main():
        try:
            check = CheckOptions(timeout_s=5, infra_retries=2, backoff_s=0.001)
            return await run_with_retries(b, snip(0, "CRASH"), check)
        finally:
            await b.aclose()
    result, attempts = asyncio.run(main())
    assert result.outcome is Outcome.INFRA and result.retries_spent and attempts == 1
    assert sum("CRASH" in json.dumps(q) for q in server.requests) == 2   # the first try and the backend's one retry
