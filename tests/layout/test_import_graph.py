"""Imports go down: each package imports only the packages below it (read from the source with ast, no import).

sdpo_attempts (stdlib only) <- sdpo_ext (training); sdpo_options (stdlib only) <- sdpo_ext (its config fields) and
lean_env (Lean, no verl) <- reward <- sdpo_data <- sdpo_eval, and sdpo_eval also imports sdpo_attempts and sdpo_ext's
pure teacher contexts. Lazy imports inside functions count too. Inside sdpo_ext, the rule is by folder: every module
under sdpo_ext/loss/ and sdpo_ext/teacher/ is pure, it imports only the standard library, torch, numpy, sdpo_options
(stdlib only: the fields' `option`) and modules of sdpo_ext.loss / sdpo_ext.teacher (no verl, no transformers, no
glue). The other verl-free parts of sdpo_ext are held to what their
docstrings say they import (VERL_FREE).
"""
from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
OURS = {"sdpo_attempts", "sdpo_options", "lean_env", "reward", "sdpo_data", "sdpo_eval", "sdpo_ext"}
ALLOWED = {
    "sdpo_attempts": set(),
    "sdpo_options": set(),
    "lean_env": {"sdpo_options"},
    "reward": {"sdpo_options", "lean_env"},
    "sdpo_data": {"sdpo_options", "lean_env", "reward"},
    "sdpo_eval": {"sdpo_attempts", "sdpo_options", "lean_env", "reward", "sdpo_data"},
    "sdpo_ext": {"sdpo_attempts", "sdpo_options"},
}
# besides ALLOWED, modules of sdpo_ext a package may import (dotted prefixes): the reprompt baseline of set discovery
# samples from the very teacher contexts SDPO builds (sdpo_eval.discovery.sampler), the discovery report's start-up
# table reads the marks verl runs print (sdpo_ext.startup.timeline: stdlib only), and the sampler composes its recipe
# with the one helper the pre-flight and the tests use (sdpo_ext.startup.compose: verl and Hydra, imported lazily)
PURE_CORE_IMPORTS = {"sdpo_eval": ("sdpo_ext.teacher", "sdpo_ext.startup.timeline", "sdpo_ext.startup.compose")}
# the pure folders of sdpo_ext (docs/sdpo_math.md): the stdlib, torch, numpy, sdpo_options (stdlib only: a config
# field's `option`) and each other only, no verl
PURE_FOLDERS = ("sdpo_ext/loss", "sdpo_ext/teacher")
PURE_ALLOWED_TOP = set(sys.stdlib_module_names) | {"torch", "numpy", "sdpo_options"}
# the verl-free parts of the sdpo_ext glue: path -> the top-level packages and our modules (dotted prefixes) it may
# import; the README's layout table and each part's docstring say the same
VERL_FREE = {
    "sdpo_ext/attention": ({"torch", "transformers", "flash_attn"}, ("sdpo_ext.attention",)),
    "sdpo_ext/ttrl/problem_set.py": (set(), ("sdpo_attempts",)),
    "sdpo_ext/ttrl/modes.py": (set(), ()),
    "sdpo_ext/judged.py": (set(), ("sdpo_attempts.valid",)),
    "sdpo_ext/resolvers.py": ({"omegaconf"}, ("sdpo_ext.startup.small_host", "sdpo_ext.ttrl.modes")),
    "sdpo_ext/startup/small_host.py": ({"omegaconf", "ray"}, ()),
}


def imported_modules(path: Path) -> set[str]:
    """Dotted names of every module that `path` imports (absolute imports; relative ones stay in the package)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def imported_packages(path: Path) -> set[str]:
    """Top-level names of every module that `path` imports."""
    return {name.split(".")[0] for name in imported_modules(path)}


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_a_package_imports_only_the_packages_below_it(package):
    core = PURE_CORE_IMPORTS.get(package, ())
    wrong = {f"{path.relative_to(ROOT)} imports {name}"
             for path in sorted((ROOT / package).rglob("*.py"))
             for name in imported_modules(path)
             if name.split(".")[0] in OURS - ALLOWED[package] - {package} and not name.startswith(core or ("\0",))}
    assert not wrong, sorted(wrong)


@pytest.mark.parametrize("package", ["sdpo_attempts", "sdpo_options", "lean_env"])
def test_the_bottom_packages_do_not_import_verl(package):
    assert not any("verl" in imported_packages(path) for path in (ROOT / package).rglob("*.py"))


def test_sdpo_options_imports_only_the_stdlib():
    """Every package imports it, the pure core included, so it must stay free of any dependency."""
    wrong = {f"{path.relative_to(ROOT)} imports {name}" for path in sorted((ROOT / "sdpo_options").rglob("*.py"))
             for name in imported_modules(path)
             if name.split(".")[0] not in sys.stdlib_module_names and not name.startswith("sdpo_options")}
    assert not wrong, sorted(wrong)


def test_the_graph_check_sees_lazy_imports(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from sdpo_ext.trainer import SDPOTrainer\n    import reward.lean\n")
    assert imported_packages(module) == {"sdpo_ext", "reward"}


def _pure_home(name: str) -> bool:
    return any(name == folder.replace("/", ".") or name.startswith(folder.replace("/", ".") + ".")
               for folder in PURE_FOLDERS)


@pytest.mark.parametrize("folder", PURE_FOLDERS)
def test_the_pure_sdpo_folders_import_only_the_stdlib_torch_numpy_and_each_other(folder):
    paths = sorted((ROOT / folder).rglob("*.py"))
    assert len(paths) > 1, f"{folder} has no modules"
    wrong = {f"{path.relative_to(ROOT)} imports {name}" for path in paths for name in imported_modules(path)
             if name.split(".")[0] not in PURE_ALLOWED_TOP and not _pure_home(name)}
    assert not wrong, sorted(wrong)


@pytest.mark.parametrize("part", sorted(VERL_FREE))
def test_the_verl_free_parts_of_the_glue_import_only_what_they_claim(part):
    tops, ours = VERL_FREE[part]
    paths = sorted((ROOT / part).rglob("*.py")) if (ROOT / part).is_dir() else [ROOT / part]
    assert paths and all(path.exists() for path in paths), f"{part} has no modules"
    wrong = {f"{path.relative_to(ROOT)} imports {name}" for path in paths for name in imported_modules(path)
             if name.split(".")[0] not in set(sys.stdlib_module_names) | tops
             and not any(name == own or name.startswith(own + ".") for own in ours)}
    assert not wrong, sorted(wrong)


@pytest.mark.parametrize("module", ["sdpo_eval.math_eval", "sdpo_eval.curves"])
def test_the_math_and_plotting_commands_do_not_load_the_lean_package(module):
    """Their generic CLI checks live on the ground floor (`sdpo_options.cli_checks`, issue 58 item 7): importing the
    command, with everything it imports in turn, loads no module of lean_env."""
    import subprocess

    code = f"import sys, {module}; print(sorted(m for m in sys.modules if m.split('.')[0] == 'lean_env'))"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]", f"{module} loads {done.stdout.strip()}"


def test_one_helper_composes_verl_config():
    """Tests, the pre-flight and the tools compose a recipe through `sdpo_ext.startup.compose` only (issue 58 item
    7: there were three copies of Hydra's initialize/compose)."""
    home = ROOT / "sdpo_ext" / "startup" / "compose.py"
    copies = sorted(str(path.relative_to(ROOT)) for folder in (*OURS, "tests", "bench")
                    for path in (ROOT / folder).rglob("*.py")
                    if path not in (home, Path(__file__).resolve()) and "initialize_config_dir" in path.read_text())
    assert copies == [], copies
