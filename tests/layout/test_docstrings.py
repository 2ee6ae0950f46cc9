"""Docstrings that hold: every public class, function and method of the packages has one, and each package's
docstring is its table of contents: it names every module and subfolder it holds, in backticks (`name`, `name/` or a
dotted path ending in the name), so a module added or moved shows in its package's face."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOPS = ("sdpo_attempts", "sdpo_options", "lean_env", "reward", "sdpo_data", "sdpo_eval", "sdpo_ext", "recipes",
        "hydra_plugins")
PACKAGES = sorted(init.parent for top in TOPS for init in (ROOT / top).rglob("__init__.py"))


def undocumented(path: Path, root: Path = ROOT) -> list[str]:
    """The public classes, functions and methods of the module at `path` that have no docstring."""
    missing = []

    def walk(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            public = not getattr(node, "name", "_").startswith("_")
            if public and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if not ast.get_docstring(node):
                    missing.append(f"{path.relative_to(root)}:{node.lineno} {prefix}{node.name}")
                if isinstance(node, ast.ClassDef):
                    walk(node.body, f"{prefix}{node.name}.")

    walk(ast.parse(path.read_text()).body, "")
    return missing


@pytest.mark.parametrize("top", TOPS)
def test_every_public_class_and_function_has_a_docstring(top):
    missing = [name for path in sorted((ROOT / top).rglob("*.py")) for name in undocumented(path)]
    assert not missing, missing


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


def test_the_check_finds_a_public_method_without_a_docstring(tmp_path):
    module = tmp_path / "m.py"
    module.write_text('class A:\n    """Doc."""\n\n    def f(self):\n        pass\n\n    def _g(self):\n        pass\n')
    assert [name.split(" ")[1] for name in undocumented(module, tmp_path)] == ["A.f"]
