"""The suite's pytest settings leave pytest-asyncio nothing to warn about on every run (issue 50): the default loop
scope of async fixtures is set, and the plugin version that reads it is the one required."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_async_fixture_loop_scope_is_set(request):
    assert request.config.getini("asyncio_default_fixture_loop_scope") == "function"
    assert '"pytest-asyncio>=0.24"' in (ROOT / "setup.py").read_text()   # the first version with the option


def test_a_run_prints_no_deprecation_warning(tmp_path):
    test = tmp_path / "test_nothing.py"
    test.write_text("def test_nothing():\n    pass\n")
    proc = subprocess.run([sys.executable, "-W", "always", "-m", "pytest", "-q", "-p", "no:randomly", "-c",
                           str(ROOT / "pyproject.toml"), "--rootdir", str(tmp_path), str(test)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0 and "DeprecationWarning" not in proc.stdout + proc.stderr, proc.stdout[-2000:]
