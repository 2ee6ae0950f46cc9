"""Kimina client against httpx.MockTransport: the Kimina double, real recorded answers, faults."""
import asyncio
import glob
import json
import os

import httpx
import pytest

from lean_env import Outcome, Snippet
from lean_env.backends.kimina import KiminaBackend
from lean_env.testing.fake_kimina import FakeKimina
from lean_env.testing.semantics import load_rules

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "fixtures", "kimina_responses")
RULES = load_rules([{"match": "BAD", "outcome": "error", "message": "unsolved goals\n⊢ False"},
                    {"match": "HANG", "outcome": "hang"}, {"match": "CRASH", "outcome": "crash"}])


def snip(i, tactic="norm_num"):
    return Snippet(str(i), "import Mathlib\nimport Aesop\n", f"\nopen Real\n\ntheorem t{i} : True := by\n  {tactic}\n\n#print axioms t{i}\n")


def run(backend, snippets, timeout_s=30):
    async def main():
        try:
            return await backend.run(snippets, timeout_s=timeout_s)
        finally:
            await backend.aclose()
    return asyncio.run(main())


@pytest.mark.parametrize("endpoint", ["check", "verify"])
def test_both_endpoints_lines_relative_to_body(endpoint):
    fake = FakeKimina(rules=RULES, api_key="k")
    b = KiminaBackend("http://kimina", "k", endpoint=endpoint, transport=fake.transport())
    ok, bad, hang, crash = run(b, [snip(0), snip(1, "BAD"), snip(2, "HANG"), snip(3, "CRASH")])
    assert ok.outcome is Outcome.OK and ok.messages[-1].line == 7 and "depends on axioms" in ok.messages[-1].text
    assert bad.outcome is Outcome.OK and [m.severity for m in bad.messages][0] == "error"
    assert hang.outcome is Outcome.TIMEOUT and crash.outcome is Outcome.INFRA
    key = "snippets" if endpoint == "check" else "codes"
    assert len(fake.requests) == 1 and len(fake.requests[0][key]) == 4


def test_real_verify_answers_decode():
    paths = sorted(glob.glob(os.path.join(FIXTURES, "*.json")))
    if not paths:
        pytest.skip("../shared/fixtures absent")
    answers = {f"s{i}": json.load(open(p)) for i, p in enumerate(paths)}

    def handler(request):
        body = json.loads(request.content)
        rows = []
        for code in body["codes"]:
            (row,) = answers[code["custom_id"]]["results"]
            rows.append({**row, "custom_id": code["custom_id"]})
        return httpx.Response(200, json={"results": rows})

    b = KiminaBackend("http://k", endpoint="verify", batch_size=len(paths), transport=httpx.MockTransport(handler))
    rs = run(b, [Snippet(str(i), "", "x") for i in range(len(paths))])
    n_timeout = sum(r.outcome is Outcome.TIMEOUT for r in rs)
    assert n_timeout == sum(1 for a in answers.values() if a["results"][0]["error"])
    for r, a in zip(rs, answers.values()):
        row = a["results"][0]
        if not row["error"]:
            assert r.outcome is Outcome.OK and len(r.messages) == len(row["response"].get("messages", []))
            assert r.elapsed_s == row["response"]["time"]


def test_401_is_infra_without_retry():
    fake = FakeKimina(api_key="secret")
    b = KiminaBackend("http://k", "wrong", transport=fake.transport(), backoff_s=0.01)
    (r,) = run(b, [snip(0)])
    assert r.outcome is Outcome.INFRA and "401" in r.infra_detail and b.requests_sent == 1


@pytest.mark.parametrize("fault", [429, 500, 503, "refused", "timeout", "garbage"])
def test_transient_faults_are_retried(fault):
    fake = FakeKimina(faults=[fault, fault])
    b = KiminaBackend("http://k", transport=fake.transport(), retries=3, backoff_s=0.01)
    (r,) = run(b, [snip(0)])
    assert r.outcome is Outcome.OK and b.requests_sent == 3


def test_persistent_failure_gives_infra_for_every_snippet():
    fake = FakeKimina(faults=[500] * 10)
    b = KiminaBackend("http://k", transport=fake.transport(), retries=2, backoff_s=0.01, batch_size=2)
    rs = run(b, [snip(i) for i in range(5)])
    assert [r.id for r in rs] == [str(i) for i in range(5)]
    assert all(r.outcome is Outcome.INFRA and "500" in r.infra_detail for r in rs)


def test_concurrent_calls_are_batched_and_bounded():
    fake = FakeKimina(delay_s=0.05)
    b = KiminaBackend("http://k", transport=fake.transport(), batch_size=8, max_concurrency=2)

    async def main():
        try:
            return await asyncio.gather(*(b.run([snip(i)], timeout_s=30) for i in range(20)))
        finally:
            await b.aclose()
    rs = [r for (r,) in asyncio.run(main())]
    assert [r.id for r in rs] == [str(i) for i in range(20)] and all(r.outcome is Outcome.OK for r in rs)
    assert len(fake.requests) == 3 and sorted(len(q["snippets"]) for q in fake.requests) == [4, 8, 8]


def test_missing_snippet_in_answer_is_infra():
    def handler(request):
        return httpx.Response(200, json={"results": []})
    (r,) = run(KiminaBackend("http://k", transport=httpx.MockTransport(handler)), [snip(0)])
    assert r.outcome is Outcome.INFRA


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
