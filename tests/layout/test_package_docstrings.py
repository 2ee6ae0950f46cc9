"""Each package's docstring is its table of contents: it names every module and subfolder it holds, in backticks
(`name`, `name/` or a dotted path ending in the name), so a module added or moved shows in its package's face."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOPS = ("sdpo_attempts", "lean_env", "reward", "sdpo_data", "sdpo_eval", "sdpo_ext", "recipes", "hydra_plugins")
PACKAGES = sorted(init.parent for top in TOPS for init in (ROOT / top).rglob("__init__.py"))


def parts(package: Path) -> list[str]:
    """The modules (`*.py` but `__init__`) and the subfolders holding code or recipes of `package`."""
    names = [path.stem for path in package.glob("*.py") if path.name != "__init__.py"]
    names += [path.name for path in package.iterdir()
              if path.is_dir() and not path.name.startswith(("_", ".")) and
              any(path.glob("*.py")) | any(path.glob("*.yaml"))]
    return sorted(names)


def named(docstring: str, name: str) -> bool:
    return re.search(rf"`(?:[\w.]*\.)?{re.escape(name)}/?`", docstring) is not None


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_package_docstring_names_each_of_its_modules(package):
    docstring = ast.get_docstring(ast.parse((package / "__init__.py").read_text())) or ""
    missing = [name for name in parts(package) if not named(docstring, name)]
    assert docstring and not missing, f"{package.relative_to(ROOT)}/__init__.py does not name {missing}"


def test_the_check_finds_a_module_the_docstring_leaves_out(tmp_path):
    (tmp_path / "__init__.py").write_text('"""Holds `kept` and `sub/`."""\n')
    for name in ("kept.py", "left.py"):
        (tmp_path / name).write_text("")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "__init__.py").write_text("")
    docstring = ast.get_docstring(ast.parse((tmp_path / "__init__.py").read_text()))
    assert [name for name in parts(tmp_path) if not named(docstring, name)] == ["left"]
