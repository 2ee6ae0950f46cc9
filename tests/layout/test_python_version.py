"""The Python versions sdpo-lean runs on are stated once per place and agree: the package metadata
(`python_requires`), verl 0.9.1's own Requires-Python, and the README's setup command, which checks the running
Python before pip does (issue 50, item 5)."""
from __future__ import annotations

import ast
import importlib.metadata
import re
import subprocess
import sys
from pathlib import Path

from packaging.specifiers import SpecifierSet

ROOT = Path(__file__).resolve().parents[2]


def python_requires() -> SpecifierSet:
    tree = ast.parse((ROOT / "setup.py").read_text())
    (value,) = [k.value.value for node in ast.walk(tree) if isinstance(node, ast.Call)
                for k in node.keywords if k.arg == "python_requires"]
    return SpecifierSet(value)


def readme_check() -> str:
    """The README setup command's `python3 -c '...'` version check."""
    (code,) = re.findall(r"python3 -c '([^']*version_info[^']*)'", (ROOT / "README.md").read_text(encoding="utf-8"))
    return code


def test_the_package_needs_the_pythons_verl_needs():
    assert python_requires() == SpecifierSet(importlib.metadata.metadata("verl")["Requires-Python"])


def test_the_readme_names_the_same_versions_and_its_check_accepts_exactly_them():
    versions = [f"3.{minor}" for minor in range(6, 16)]
    allowed = [v for v in versions if f"{v}.0" in python_requires()]
    assert allowed == ["3.10", "3.11", "3.12"]
    assert "Python 3.10, 3.11 or 3.12" in (ROOT / "README.md").read_text(encoding="utf-8")
    code = readme_check()
    for version in versions:   # the check's own condition, on each version
        condition = code.split("sys.exit(None if ", 1)[1].split(" else ", 1)[0]
        assert eval(condition, {"sys": type("S", (), {"version_info": tuple(map(int, version.split(".")))})}) == \
            (version in allowed), version
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stderr == ""   # this Python passes it


def test_ci_runs_the_readme_check():
    assert readme_check() in (ROOT / ".ci" / "run").read_text()
