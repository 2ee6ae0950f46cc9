"""The Kimina double behaves as kimina-lean-server @fb2393d does (routes, models, status codes, REPL pool)."""
import asyncio

import httpx
import pytest

from lean_env.testing.fake_kimina import FakeKimina
from lean_env.testing.kimina_pool import split_snippet
from lean_env.testing.semantics import load_rules

RULES = load_rules([{"match": "HANG", "outcome": "hang"}, {"match": "CRASH", "outcome": "crash"}])
CODE = "import Mathlib.Tactic\nimport Aesop\n\ntheorem t : True := by\n  trivial\n#print axioms t\n"


def call(server, method, path, body=None, headers=None):
    async def main():
        async with httpx.AsyncClient(base_url="http://k", transport=server.transport()) as c:
            return await c.request(method, path, json=body, headers=headers)
    return asyncio.run(main())


def check(server, snippets, timeout=30, **kw):
    return call(server, "POST", "/api/check", {"snippets": snippets, "timeout": timeout, **kw})


def test_split_collapses_mathlib_and_counts_header_lines():
    assert split_snippet("import Mathlib.Data.Real\n\nimport Aesop\nimport Aesop\ntheorem x := 1\n") == (
        "import Mathlib\nimport Aesop", "theorem x := 1", 4)


def test_routes_health_404_405():
    s = FakeKimina(api_key="k")
    assert [call(s, "GET", p).json() for p in ("/health", "/health/", "/")] == [{"status": "ok"}] * 3
    assert call(s, "GET", "/nope").status_code == 404 and call(s, "GET", "/api/check").status_code == 405


@pytest.mark.parametrize("headers,detail", [(None, "Missing API key"),
                                            ({"Authorization": "Bearer x"}, "Invalid API key")])
def test_auth_is_checked_before_the_body(headers, detail):
    r = call(FakeKimina(api_key="k"), "POST", "/api/check", {"timeout": 2.5}, headers)
    assert r.status_code == 401 and r.json() == {"detail": detail}
    ok = call(FakeKimina(api_key="k"), "POST", "/api/check", {"snippets": [{"id": "a", "code": CODE}]},
              {"Authorization": "k"})   # `Bearer ` is optional
    assert ok.status_code == 200


@pytest.mark.parametrize("timeout,status", [(2.5, 422), (-1, 422), ("x", 422), (True, 422),
                                            (2.0, 200), ("3", 200), (0, 200)])
def test_timeout_is_an_integer_field(timeout, status):
    r = check(FakeKimina(), [{"id": "a", "code": CODE}], timeout=timeout)
    assert r.status_code == status
    if status == 422:
        assert r.json()["detail"][0]["loc"] == ["body", "timeout"]


@pytest.mark.parametrize("snippets", [[], [{"id": "a", "code": "x"}, {"id": "a", "code": "y"}],
                                      [{"id": 1, "code": "x"}], [{"code": "x"}]])
def test_bad_snippet_lists_are_422(snippets):
    assert check(FakeKimina(), snippets).status_code == 422


def test_verify_item_without_proof_or_code_is_an_unhandled_500():
    r = call(FakeKimina(), "POST", "/verify", {"codes": [{"custom_id": 1}]})
    assert r.status_code == 500 and r.text == "Internal Server Error"


def test_check_rows_and_header_shift():
    r = check(FakeKimina(), [{"id": "a", "code": CODE}]).json()["results"][0]
    assert set(r) == {"id", "time", "response"} and r["response"]["messages"][0]["pos"]["line"] == 6


def test_verify_error_rows_carry_no_time():
    s = FakeKimina(rules=RULES, time_scale=0.001)
    r = call(s, "POST", "/verify", {"codes": [{"custom_id": 7, "proof": CODE}, {"custom_id": "h", "code": "HANG"}],
                                    "timeout": 2})
    ok, hang = r.json()["results"]
    assert ok["custom_id"] == "7" and "time" in ok["response"] and "error" not in ok
    assert hang == {"custom_id": "h", "error": "Lean REPL command timed out in 2.0 seconds"}


def test_one_crash_fails_the_whole_request_with_500_and_kills_its_repl():
    s = FakeKimina(rules=RULES, max_repls=3)
    r = check(s, [{"id": "a", "code": CODE}, {"id": "b", "code": "CRASH"}, {"id": "c", "code": CODE}])
    assert r.status_code == 500 and r.json() == {"detail": "JSON decode error"}
    assert len(s.pool.free) == 2   # the crashed REPL is gone, the others were released


def test_no_free_repl_within_max_wait_is_429_for_the_whole_request():
    s = FakeKimina(max_repls=1, max_wait_s=1.0, proof_s=2.0, time_scale=0.01)
    r = check(s, [{"id": "a", "code": CODE}, {"id": "b", "code": CODE}])
    assert r.status_code == 429 and r.json() == {"detail": "No available REPLs"}
    r = check(FakeKimina(max_repls=1, max_wait_s=3.0, proof_s=2.0, time_scale=0.01),
              [{"id": "a", "code": CODE}, {"id": "b", "code": CODE}])
    assert r.status_code == 200   # the second snippet waited for the REPL


def test_header_import_shares_the_request_timeout():
    s = FakeKimina(import_s=10.0, time_scale=0.001)
    (row,) = check(s, [{"id": "a", "code": CODE}], timeout=5).json()["results"]
    uuid = row.pop("diagnostics")["repl_uuid"]   # timeout rows always name the REPL (routers/check.py)
    assert row == {"id": "a", "time": 5.0, "error": "Lean REPL header command timed out in 5.0 seconds"} and uuid
    (row,) = check(s, [{"id": "a", "code": CODE}], timeout=15).json()["results"]
    assert "response" in row and row["time"] == 0.0   # `time` is the body's only


def test_reuse_evicts_lru_free_repl_with_another_header():
    s = FakeKimina(max_repls=1)
    check(s, [{"id": "a", "code": CODE}])
    check(s, [{"id": "b", "code": "import Aesop\n#check Nat\n"}])
    check(s, [{"id": "c", "code": "import Aesop\n#check Nat\n"}])
    assert s.pool.started_repls == 2 and [r.header for r in s.pool.free] == ["import Aesop"]


def test_headerless_first_body_becomes_env_zero_for_the_next():
    """Kimina's env-0 leak: a header-less REPL runs later bodies on top of the first one."""
    s = FakeKimina(max_repls=1)
    check(s, [{"id": "a", "code": "theorem leak : True := trivial"}])
    (row,) = check(s, [{"id": "b", "code": "#print axioms leak"}]).json()["results"]
    assert "depends on axioms" in row["response"]["messages"][0]["data"]


def test_client_disconnect_kills_the_repls_of_its_request():
    s = FakeKimina(rules=RULES, max_repls=2, time_scale=0.01)

    async def main():
        async with httpx.AsyncClient(base_url="http://k", transport=s.transport()) as c:
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(c.post("/api/check", json={"snippets": [{"id": "h", "code": "HANG"}]}), 0.05)
            await asyncio.sleep(0.01)
    asyncio.run(main())
    assert not s.pool.busy and not s.pool.free
