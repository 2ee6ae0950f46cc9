"""The reward asks the backend which Lean it runs (`#eval Lean.versionString`) and stops on a mismatch with the
recipe's `lean_version`, against the REPL double and the Kimina double."""
from __future__ import annotations

import asyncio
import json
import sys
from functools import partial

import pytest

import reward.lean.score as rl
from lean_env.backends import factory
from lean_env.backends.kimina import KiminaBackend
from lean_env.backends.repl import ReplPool
from lean_env.testing.fake_kimina import FakeKimina
from lean_env.version import LeanVersionError, backend_lean_version
from tests.reward.lean.lean_scores import score_all

STATEMENT = "theorem t1 (x : ℝ) (h : x = 2) : x + 1 = 3 := by\n"
GT = json.dumps({"name": "t1", "formal_statement": STATEMENT})


def repl(version: str) -> dict:
    return {"backend": "repl",
            "repl_command": f"{sys.executable} -m lean_env.testing.fake_repl --lean-version {version}",
            "timeout_s": 5.0, "backoff_s": 0.01}


@pytest.fixture(autouse=True)
def _fresh_cache():
    rl._lean_versions.clear()
    yield
    rl._lean_versions.clear()


score = partial(score_all, GT)


@pytest.mark.parametrize("version", ["4.9.0", "4.26.0", "4.22.0-rc3"])
def test_the_repl_double_answers_the_version_query_as_lean_does(version):
    async def main():
        pool = ReplPool(command=repl(version)["repl_command"])
        try:
            return await backend_lean_version(pool)
        finally:
            await pool.aclose()
    assert asyncio.run(main()) == version


def test_repl_mismatch_stops_with_the_fix_and_the_override_accepts_it(answer):
    with pytest.raises(LeanVersionError, match=r"runs Lean 4\.26\.0.*need Lean 4\.9\.0.*allow_lean_version_mismatch"):
        score([answer("norm_num")], lean_version="v4.9.0", **repl("4.26.0"))
    rl._lean_versions.clear()
    (d,) = score([answer("norm_num")], lean_version="v4.9.0", allow_lean_version_mismatch=True, **repl("4.26.0"))
    assert d["verdict"] == "valid"
    rl._lean_versions.clear()
    (d,) = score([answer("norm_num")], lean_version="v4.9.0", **repl("4.9.0"))
    assert d["verdict"] == "valid"
    with pytest.raises(LeanVersionError, match="4.9.0-rc1"):   # a release candidate is another Lean
        rl.require_lean_version(lean_version="v4.9.0", **repl("4.9.0-rc1"))


def test_the_version_is_asked_once_per_process_and_config(answer, monkeypatch):
    asked = []
    real = rl._query_version

    async def counting(backend, cfg):
        asked.append(cfg.backend)
        return await real(backend, cfg)
    monkeypatch.setattr(rl, "_query_version", counting)
    async def concurrently():
        try:
            return await asyncio.gather(*(rl.compute_score("lean", answer("norm_num"), GT, {}, lean_version="v4.9.0",
                                                           **repl("4.9.0")) for _ in range(4)))
        finally:
            await factory.aclose_backends()
    outs = asyncio.run(concurrently()) + score([answer("norm_num")], lean_version="v4.9.0", **repl("4.9.0"))
    assert [d["verdict"] for d in outs] == ["valid"] * 5 and asked == ["repl"]


@pytest.mark.parametrize("server_version,ok", [("4.9.0", True), ("4.15.0", False)])
def test_kimina_mismatch_stops(monkeypatch, answer, server_version, ok):
    fake = FakeKimina(lean_version=server_version)
    monkeypatch.setattr(factory, "make_backend", lambda cfg: KiminaBackend(cfg.url, transport=fake.transport()))
    if ok:
        (d,) = score([answer("norm_num")], backend="kimina", lean_version="v4.9.0")
        assert d["verdict"] == "valid"
    else:
        with pytest.raises(LeanVersionError, match=r"runs Lean 4\.15\.0"):
            score([answer("norm_num")], backend="kimina", lean_version="v4.9.0")
        with pytest.raises(LeanVersionError, match=r"runs Lean 4\.15\.0"):
            rl.require_lean_version(backend="kimina", lean_version="v4.9.0")
    # the query went with the proofs' imports (a header-less first snippet would become Kimina's shared env)
    query = next(s for r in fake.requests for s in r.get("snippets", []) if "Lean.versionString" in s["code"])
    assert query["code"].startswith("import Mathlib")


def test_a_backend_that_cannot_answer_at_start_stops_the_start_but_not_a_running_reward(monkeypatch, answer):
    fake = FakeKimina(faults=[500] * 100)
    monkeypatch.setattr(factory, "make_backend",
                        lambda cfg: KiminaBackend(cfg.url, transport=fake.transport(), backoff_s=0.01,
                                                        restart_wait_s=0.05, max_backoff_s=0.01))
    with pytest.raises(LeanVersionError, match="could not ask"):
        rl.require_lean_version(backend="kimina", lean_version="v4.9.0")
    (d,) = score([answer("norm_num")], backend="kimina", lean_version="v4.9.0", backoff_s=0.01)
    assert d["infra"] == 1.0   # masked as before; the version is asked again on the next proof
    assert rl._lean_versions == {}


def test_unchecked_without_lean_version(answer):
    (d,) = score([answer("norm_num")], **repl("4.26.0"))
    assert d["verdict"] == "valid" and rl._lean_versions == {}
