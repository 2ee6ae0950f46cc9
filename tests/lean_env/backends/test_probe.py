"""The backend probe (lean_env.backends.probe), the Lean reward's preflight, and `reward.lean.cli verify` failing in
seconds with the fix when no Lean answers, instead of after every row's retries."""
from __future__ import annotations

import asyncio
import json
import sys
import time

import httpx

import reward.lean.score as rl
from lean_env.backends import factory
from lean_env.backends.kimina import KiminaBackend
from lean_env.backends.probe import backend_problems, repl_problems
from lean_env.options import BackendOptions
from lean_env.testing.fake_kimina import FakeKimina
from reward.lean import cli


def refused(request: httpx.Request) -> httpx.Response:
    raise httpx.ConnectError("[Errno 111] Connection refused", request=request)


def test_a_kimina_double_that_answers_health_passes_and_a_refused_one_names_the_fix():
    options = BackendOptions(backend="kimina").resolved()
    ok = KiminaBackend(options.url, transport=FakeKimina().transport())
    assert asyncio.run(backend_problems(options, ok)) == []
    down = KiminaBackend(options.url, transport=httpx.MockTransport(refused))
    (problem,) = asyncio.run(backend_problems(options, down))
    assert "does not answer GET /health" in problem and "start a Kimina server (docs/lean.md)" in problem


def test_a_repl_whose_program_or_workspace_is_missing_is_named(tmp_path):
    assert repl_problems(f"{sys.executable} -m lean_env.testing.fake_repl", str(tmp_path)) == []
    (program,) = repl_problems("lake-that-is-not-installed exe repl", None)
    assert "`lake-that-is-not-installed` is not on PATH" in program
    (workspace,) = repl_problems(f"{sys.executable} -m x", str(tmp_path / "absent"))
    assert "workspace" in workspace and "not a folder" in workspace
    assert "badly quoted" in repl_problems("'unclosed", None)[0]


def test_the_lean_rewards_preflight_checks_options_then_the_backend(tmp_path):
    assert rl.preflight({"backend": "repl", "repl_command": f"{sys.executable} -m lean_env.testing.fake_repl",
                         "lean_version": "v4.9.0", "server_repls": None}) == []
    (bad,) = rl.preflight({"backend": "repl", "timeout_ss": 3})
    assert "timeout_ss" in bad and "reward_kwargs" in bad
    (missing,) = rl.preflight({"backend": "repl", "repl_command": "lake-that-is-not-installed exe repl"})
    assert "not on PATH" in missing


def test_verify_with_no_server_fails_in_seconds_and_names_the_fix(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(factory, "make_backend",
                        lambda cfg: KiminaBackend(cfg.url, transport=httpx.MockTransport(refused)))
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({"formal_statement": "theorem t : 1 = 1 := by\n", "output": "x"}) + "\n")
    start = time.monotonic()
    assert cli.main(["verify", str(rows), "--backend", "kimina"]) == cli.EXIT_INFRA
    assert time.monotonic() - start < 15
    err = capsys.readouterr().err
    assert err.startswith("error: the Kimina server at") and "or pass --backend repl" in err
