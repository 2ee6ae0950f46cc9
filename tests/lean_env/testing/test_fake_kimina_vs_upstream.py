"""The Kimina double against the upstream project's own test suite (protocol-level cases only).

Kimina: project-numina/kimina-lean-server @fb2393d `tests/test_api.py`, `test_split.py`, `test_header_offset.py`,
`test_manager.py`, and `tsts_old/test_api.py` (the `/verify` cases). Inputs are paraphrased, each case names its
upstream file; only what does not need Lean to elaborate is checked (counters, shapes, positions the double
computes, error forms, status codes). What is not modelled: test_fake_repl_vs_upstream.py.
"""
import asyncio

import httpx
import pytest

from lean_env import Outcome, Snippet
from lean_env.backends.kimina import KiminaBackend
from lean_env.testing.fake_kimina import FakeKimina
from lean_env.testing.kimina_pool import _shift, split_snippet


def p(line, column):
    return {"line": line, "column": column}


# ---- project-numina/kimina-lean-server @fb2393d -----------------------------------------------------------------

async def _post(server, path, body, headers=None):
    async with httpx.AsyncClient(transport=server.transport(), base_url="http://kimina") as c:
        return await c.post(path, json=body, headers=headers or {})


def post(server, path, body, headers=None):
    return asyncio.run(_post(server, path, body, headers))


def test_check_single_snippet_shape():
    # kimina tests/test_api.py::test_check_nat / test_single_snippet: header-less `#check` -> env 0, info at 1:0-1:6,
    # rows without diagnostics unless `debug` (the data "Nat : Type" needs Lean; the double checks a declared name)
    r = post(FakeKimina(), "/api/check", {"snippets": [{"id": "u", "code": "theorem t : True := trivial\n#check t"}]})
    assert r.status_code == 200
    (row,) = r.json()["results"]
    assert set(row) == {"id", "time", "response"} and row["id"] == "u"
    (info,) = row["response"]["messages"]
    assert row["response"]["env"] == 0 and (info["severity"], info["pos"], info["endPos"]) == ("info", p(2, 0), p(2, 6))


def test_mathlib_header_env_numbering_and_debug():
    # kimina tests/test_api.py::test_mathlib: the header is env 0, so the body answers env 1; a second request on
    # the one REPL answers env 2; `debug` adds diagnostics with the REPL's uuid
    server = FakeKimina(max_repls=1, max_uses=3)
    rows = [post(server, "/api/check", {"snippets": [{"id": str(i), "code": f"import Mathlib\ndef f := {i}"}],
                                        "debug": True}).json()["results"][0] for i in (1, 2)]
    assert [r["response"] for r in rows] == [{"env": 1}, {"env": 2}]
    assert rows[0]["diagnostics"]["repl_uuid"] == rows[1]["diagnostics"]["repl_uuid"]


def test_header_timeout_then_a_fresh_repl():
    # kimina tests/test_api.py::test_timeout: a header import over `timeout` -> HTTP 200, an error row naming
    # "timed out" with diagnostics.repl_uuid; the REPL is killed, so the next snippet runs on a new one (env 0)
    server = FakeKimina(max_repls=1, max_uses=2, import_s=3.0, time_scale=0.001)
    r = post(server, "/api/check", {"snippets": [{"id": "a", "code": "import Mathlib"}], "timeout": 1, "debug": True})
    assert r.status_code == 200
    (row,) = r.json()["results"]
    assert "timed out" in row["error"] and "response" not in row and "repl_uuid" in row["diagnostics"]
    r2 = post(server, "/api/check", {"snippets": [{"id": "b", "code": "theorem one : 1 + 1 = 2 := by rfl"}],
                                     "timeout": 5, "debug": True})
    (row2,) = r2.json()["results"]
    assert row2["response"] == {"env": 0}
    assert row2["diagnostics"]["repl_uuid"].replace("-", "") != row["diagnostics"]["repl_uuid"]


def test_exhausted_sequential_and_batched():
    # kimina tests/test_api.py::test_exhausted and ::test_exhausted_with_batch (max_repls 1, max_repl_uses 3)
    server = FakeKimina(max_repls=1, max_uses=3)
    ids = [post(server, "/api/check", {"snippets": [{"id": str(i), "code": f"def x{i} := {i}"}], "debug": True})
           .json()["results"][0]["diagnostics"]["repl_uuid"] for i in range(4)]
    assert ids[0] == ids[1] == ids[2] != ids[3]
    server = FakeKimina(max_repls=1, max_uses=3)
    rows = post(server, "/api/check", {"snippets": [{"id": str(i), "code": f"def x{i} := {i}"} for i in range(4)],
                                       "debug": True}).json()["results"]
    assert len({r["diagnostics"]["repl_uuid"] for r in rows}) == 2


def test_trailing_slash_and_bad_bodies():
    # kimina tests/test_api.py::test_check_trailing_slash, ::test_wrong_custom_id_on_check,
    # ::test_wrong_custom_ids_on_check; and the `Infotree` enum of client/kimina_client/models.py
    server = FakeKimina()
    r = post(server, "/api/check/", {"snippets": [{"id": "s", "code": "theorem t : True := trivial\n#check t"}]})
    assert r.status_code == 200 and "messages" in r.json()["results"][0]["response"]
    assert post(server, "/api/check", {"snippets": {"custom_id": "c", "code": "#check Nat"}}).status_code == 422
    mixed = [{"id": "a", "code": "#check Nat"}, {"custom_id": "b", "code": "import Mathlib\ndef f:= 1"}]
    assert post(server, "/api/check", {"snippets": mixed, "debug": True}).status_code == 422
    one = [{"id": "a", "code": "def f := 1"}]
    assert post(server, "/api/check", {"snippets": one, "infotree": "original"}).status_code == 200
    assert post(server, "/api/check", {"snippets": one, "infotree": "everything"}).status_code == 422
    assert post(server, "/api/check", {"snippets": one, "debug": "maybe"}).status_code == 422
    assert post(server, "/verify", {"codes": [{"custom_id": 1, "proof": "def f := 1"}],
                                    "infotree_type": "bad"}).status_code == 422


def test_two_headers_one_repl_slot():
    # kimina tests/test_api.py::test_repl_close_hangs: two headers, max_repls 1 -> two REPLs, no hang
    server = FakeKimina(max_repls=1, max_uses=10)
    rows = post(server, "/api/check", {"snippets": [{"id": "1", "code": "import Std.Data.HashMap\ndef a := 1"},
                                                    {"id": "2", "code": "import Lean.Elab.Exception\ndef b := 0"}],
                                       "debug": True}).json()["results"]
    assert len({r["diagnostics"]["repl_uuid"] for r in rows}) == 2


def test_manager_exhausted_and_reuse_false():
    # kimina tests/test_manager.py::test_exhausted (max_repls 0 -> no REPL -> 429) and ::test_get_repl_with_reuse
    server = FakeKimina(max_repls=0, max_wait_s=0.01)
    assert post(server, "/api/check", {"snippets": [{"id": "a", "code": "def f := 1"}]}).status_code == 429
    server = FakeKimina(max_repls=1, max_uses=3)
    first = [post(server, "/api/check", {"snippets": [{"id": "a", "code": "def f := 1"}], "debug": True, **kw})
             .json()["results"][0]["diagnostics"]["repl_uuid"] for kw in ({}, {}, {"reuse": False})]
    assert first[0] == first[1] != first[2]
    assert server.pool.free and len(server.pool.free) == 1 and not server.pool.busy


def test_max_repl_uses_zero_retires_after_one_body():
    # kimina server/repl.py `Repl.exhausted`: max_repl_uses 0 -> exhausted after the first body (only < 0 is unlimited)
    server = FakeKimina(max_repls=1, max_uses=0)
    ids = [post(server, "/api/check", {"snippets": [{"id": "a", "code": "def f := 1"}], "debug": True})
           .json()["results"][0]["diagnostics"]["repl_uuid"] for _ in range(2)]
    assert ids[0] != ids[1]


@pytest.mark.parametrize("code,header,body,count", [
    # kimina tests/test_split.py, one row per test
    ("import A\nimport Mathlib\nimport B", "import Mathlib\nimport A\nimport B", "", 3),
    ("import X\n\nimport Mathlib\nimport Y\n\ndef foo():\n    pass", "import Mathlib\nimport X\nimport Y",
     "def foo():\n    pass", 5),
    ("def bar():\n    return 1", "", "def bar():\n    return 1", 0),
    ("import Mathlib\nimport Mathlib\nimport Z\nimport Z\nZ", "import Mathlib\nimport Z", "Z", 4),
    ("import Mathlib", "import Mathlib", "", 1),
    ("import Mathlib  \n\ntheorem t : 1 + 1 = 2 := by rfl", "import Mathlib", "theorem t : 1 + 1 = 2 := by rfl", 2),
    ("import Mathlib\nimport Aesop\n\ntheorem t : 1 + 1 = 2 := by\n  sorry", "import Mathlib\nimport Aesop",
     "theorem t : 1 + 1 = 2 := by\n  sorry", 3),
    ("\n\nimport Mathlib\nimport Aesop\ntheorem t : 1 = 1 := by\n  sorry", "import Mathlib\nimport Aesop",
     "theorem t : 1 = 1 := by\n  sorry", 4),
    ("import Mathlib\n\nimport Aesop\n\ntheorem t : 1 = 1 := by\n  sorry", "import Mathlib\nimport Aesop",
     "theorem t : 1 = 1 := by\n  sorry", 4),
    ("import Mathlib.Tactic\nimport Aesop\nimport Mathlib.Data.Nat", "import Mathlib\nimport Aesop", "", 3),
])
def test_split_snippet(code, header, body, count):
    assert split_snippet(code) == (header, body, count)


def test_header_offset():
    # kimina tests/test_header_offset.py: messages and sorries move down by the offset; offset 0 changes nothing
    resp = {"messages": [{"severity": "error", "pos": p(2, 1), "endPos": p(3, 4), "data": "oops"}],
            "sorries": [{"pos": p(1, 0), "endPos": p(1, 5), "goal": "sorry"}]}
    _shift(resp, 4)
    assert (resp["messages"][0]["pos"]["line"], resp["messages"][0]["endPos"]["line"]) == (6, 7)
    assert (resp["sorries"][0]["pos"]["line"], resp["sorries"][0]["endPos"]["line"]) == (5, 5)
    resp = {"messages": [{"severity": "error", "pos": p(2, 1), "data": "oops"}]}
    _shift(resp, 0)
    assert resp["messages"][0]["pos"]["line"] == 2


def test_verify_rows():
    # kimina tsts_old/test_api.py::test_verify / ::test_verify_correct / ::test_verify_sorry, against the current
    # `/verify` route (server/routers/backward.py): rows {custom_id, response: {…, time}}, None `error` dropped
    server = FakeKimina()
    codes = [{"custom_id": str(i), "proof": "import Mathlib\n\ndef f := 2\nexample : f = 2 := rfl"} for i in range(5)]
    codes.append({"custom_id": "s", "proof": "import Mathlib\n\ntheorem a : 3 = 3 := by sorry\n"})
    r = post(server, "/verify", {"codes": codes, "timeout": 60})
    assert r.status_code == 200
    rows = r.json()["results"]
    assert all("error" not in row and {"env", "time"} <= set(row["response"]) for row in rows)
    assert rows[-1]["response"]["sorries"] and rows[-1]["response"]["messages"][0]["severity"] == "warning"


def test_auth():
    # kimina server/auth.py `require_key` (routers depend on it; /health does not)
    server = FakeKimina(api_key="k")
    body = {"snippets": [{"id": "a", "code": "def f := 1"}]}
    assert post(server, "/api/check", body).json() == {"detail": "Missing API key"}
    assert post(server, "/api/check", body, {"Authorization": "Bearer nope"}).json() == {"detail": "Invalid API key"}
    assert post(server, "/api/check", body, {"Authorization": "Bearer k"}).status_code == 200
    assert post(server, "/api/check", body, {"Authorization": "k"}).status_code == 200
    assert asyncio.run(_get_health(server)) == (200, {"status": "ok"})


async def _get_health(server):
    async with httpx.AsyncClient(transport=server.transport(), base_url="http://kimina") as c:
        r = await c.get("/health")
        return r.status_code, r.json()


def test_client_reads_timeout_rows_with_diagnostics():
    # kimina server/routers/check.py: a body timeout row carries `diagnostics` even without `debug`; our client
    # must still read it as a timeout
    server = FakeKimina(proof_s=5.0, time_scale=0.001)
    backend = KiminaBackend("http://kimina", transport=server.transport(), backoff_s=0.001)
    (res,) = asyncio.run(backend.run([Snippet("a", "import Mathlib\n", "theorem t : True := trivial\n")], timeout_s=1))
    asyncio.run(backend.aclose())
    assert res.outcome is Outcome.TIMEOUT
