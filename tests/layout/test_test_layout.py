"""The tests mirror the code: no two test files share a name, and under the mirrored packages (MIRRORED) every test
file sits in the folder of the code it tests and is named for one of that folder's modules:
`tests/<package>/<subpackage>/test_<module>[_<aspect>].py`, where the folder's own name stands for its `__init__.py`."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
MIRRORED = ("lean_env", "sdpo_attempts", "sdpo_options", "reward", "sdpo_data", "sdpo_eval", "sdpo_ext")


def misplaced(tests: Path, code: Path) -> list[str]:
    """The test files under `tests` with no folder of `code` to mirror, or named for no module of their folder."""
    wrong = []
    for path in sorted(tests.rglob("test_*.py")):
        folder = code / path.parent.relative_to(tests)
        if not (folder / "__init__.py").is_file():
            wrong.append(f"{path.relative_to(tests)}: no package {folder.relative_to(code.parent)}")
            continue
        subject = path.stem.removeprefix("test_")
        modules = [m.stem for m in folder.glob("*.py") if m.name != "__init__.py"] + [folder.name]
        if not any(subject == m or subject.startswith(m + "_") for m in modules):
            wrong.append(f"{path.relative_to(tests)}: names none of {sorted(modules)}")
    return wrong


def test_no_two_test_files_share_a_name():
    names = Counter(path.name for path in TESTS.rglob("test_*.py"))
    assert not [name for name, count in names.items() if count > 1]


@pytest.mark.parametrize("package", MIRRORED)
def test_a_mirrored_package_has_its_tests_in_the_folder_and_name_of_their_module(package):
    assert not misplaced(TESTS / package, ROOT / package)


def test_the_check_finds_a_test_named_for_no_module_and_one_in_no_package(tmp_path):
    code, tests = tmp_path / "pkg", tmp_path / "tests" / "pkg"
    (code / "sub").mkdir(parents=True)
    for name in ("__init__.py", "sub/__init__.py", "sub/reader.py"):
        (code / name).write_text("")
    (tests / "sub").mkdir(parents=True)
    (tests / "gone").mkdir()
    for name in ("sub/test_reader.py", "sub/test_reader_errors.py", "sub/test_sub.py", "sub/test_writer.py",
                 "gone/test_x.py"):
        (tests / name).write_text("")
    assert [line.split(":")[0] for line in misplaced(tests, code)] == ["gone/test_x.py", "sub/test_writer.py"]
