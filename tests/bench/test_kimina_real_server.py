"""The Kimina client's acceptance checks against the real kimina-lean-server code (skipped unless it is installed).

Set KIMINA_SERVER_DIR (a checkout of project-numina/kimina-lean-server) and KIMINA_SERVER_PYTHON (a Python with its
dependencies); see bench/lean/kimina_real_server.py. Takes about 30 s.
"""
import argparse
import importlib.util
import os
import tempfile

import pytest

from tests.bench.bench_scripts import BENCH

SERVER_DIR, SERVER_PYTHON = os.environ.get("KIMINA_SERVER_DIR"), os.environ.get("KIMINA_SERVER_PYTHON")
pytestmark = pytest.mark.skipif(not (SERVER_DIR and SERVER_PYTHON and os.path.isdir(SERVER_DIR)
                                     and os.path.exists(SERVER_PYTHON)),
                                reason="set KIMINA_SERVER_DIR and KIMINA_SERVER_PYTHON to run the real server's code")


def test_every_other_proof_gets_its_verdict_on_the_real_server():
    path = BENCH / "lean" / "kimina_real_server.py"
    spec = importlib.util.spec_from_file_location("kimina_real_server", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    with tempfile.TemporaryDirectory() as work:
        out = bench.scenarios(argparse.Namespace(server_dir=SERVER_DIR, server_python=SERVER_PYTHON), work)
    assert (out["probe_fractional_timeout"]["status"], out["probe_wrong_key"]["status"],
            out["probe_one_crash_in_batch"]["status"]) == (422, 401, 500)
    assert {name: r["ok"] for name, r in out.items() if "ok" in r} == {
        name: True for name in ("crash_hang_more_proofs_than_repls_fractional_timeout", "wrong_api_key",
                                "no_free_repl_429", "header_import_longer_than_proof_limit",
                                "server_restarted_mid_run")}
    assert out["no_free_repl_429"]["answers"].get("429", 0) > 0
    assert out["server_restarted_mid_run"]["answers"].get("refused", 0) > 0
