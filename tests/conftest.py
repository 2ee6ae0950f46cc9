"""Suite-wide: `gpu`-marked tests skip cleanly on machines without CUDA; shared fixtures (Lean answers, the REPL
double, the fake kernel re-check tools, the SmolLM2-135M-Instruct GGUF
that sdpo_data.smollm2 finds or downloads); on a machine without a C++ compiler, torch.compile runs eagerly; torch's
CPU threads wait passively (sdpo_eval.engines.passive_cpu_threads)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

# Before torch loads OpenMP (it is not imported yet when pytest reads this file): on a busy 2-core box spinning threads
# made tests/sdpo_eval/test_engines.py's generation calls take 83 s instead of 27 s (load 5-6, --durations).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
# Under pytest-xdist (`-n 2`, the README's command) each worker gets its share of the cores for torch's threads,
# so two workers on 2 cores run one thread each instead of four threads fighting over two cores.
if os.environ.get("PYTEST_XDIST_WORKER_COUNT"):
    _cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    os.environ.setdefault("OMP_NUM_THREADS", str(max(1, _cores // int(os.environ["PYTEST_XDIST_WORKER_COUNT"]))))


def _cxx_works() -> bool:
    """Whether the C++ compiler torch's inductor would call ($CXX, else c++/g++/clang++) runs."""
    for cxx in ([os.environ["CXX"]] if os.environ.get("CXX") else ["c++", "g++", "clang++"]):
        try:
            if subprocess.run([cxx, "--version"], capture_output=True, timeout=30).returncode == 0:
                return True
        except (OSError, subprocess.TimeoutExpired):
            continue
    return False


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA GPU (skipped elsewhere)")
    # verl torch.compiles some CPU-side functions; inductor builds them with a C++ compiler. Setup needs none
    # (README), so without one the suite runs those functions eagerly: the same math, set before any worker starts
    if not _cxx_works():
        os.environ.setdefault("TORCHDYNAMO_DISABLE", "1")


def pytest_collection_modifyitems(config, items):
    try:
        import torch

        has_cuda = torch.cuda.is_available()
    except ImportError:
        has_cuda = False
    if has_cuda:
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


# ---------------------------------------------------------------- Lean

STATEMENT = "theorem t1 (x : ℝ) (h : x = 2) : x + 1 = 3 := by\n"


def _answer(proof: str, statement: str = "theorem t1 (x : ℝ) (h : x = 2) : x + 1 = 3 := by", pre: str = "") -> str:
    return f"<think>plan</think>\nHere it is:\n```lean4\n{pre}{statement}\n  {proof}\n```\n"


@pytest.fixture
def statement():
    return STATEMENT


@pytest.fixture
def answer():
    return _answer


@pytest.fixture
def fake_repl():
    return [sys.executable, "-m", "lean_env.testing.fake_repl"]


@pytest.fixture
def recheck_tools(tmp_path, monkeypatch):
    """(paths of the fake kernel re-check tools, now first on PATH (lean_env.testing.fake_lean_tools), a Lean project
    whose lean_lib `SdpoRecheck` takes the files a re-check writes)."""
    from lean_env.testing.fake_lean_tools import install

    bin_dir = tmp_path / "bin"
    paths = install(bin_dir)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    project = tmp_path / "project"
    project.mkdir()
    (project / "lakefile.toml").write_text('name = "ws"\n\n'
                                           '[[lean_lib]]\nname = "SdpoRecheck"\nglobs = ["SdpoRecheck.+"]\n')
    return paths, project


# ---------------------------------------------------------------- SmolLM2 (sdpo_data.smollm2 finds or downloads it)
@pytest.fixture(scope="session")
def smollm2_gguf() -> Path:
    from sdpo_data.smollm2 import smollm2_gguf as find_gguf

    return find_gguf()


@pytest.fixture(scope="session")
def smollm2_tokenizer(smollm2_gguf):
    """SmolLM2-135M-Instruct's real tokenizer and chat template."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(smollm2_gguf.parent, gguf_file=smollm2_gguf.name)
