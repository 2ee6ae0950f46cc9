"""Generation engines: model specs, per-sample seeds and stop strings (SmolLM2 on CPU; vLLM on GPU)."""
from __future__ import annotations

import pytest

from sdpo_eval.engines import EngineOptions, ModelSpec, SamplingParams, TransformersEngine, load_engine


def test_model_spec_parse(tmp_path):
    gguf = tmp_path / "m.Q4.gguf"
    gguf.write_bytes(b"GGUF")
    assert ModelSpec.parse(str(gguf)) == ModelSpec(str(tmp_path), "m.Q4.gguf")
    assert ModelSpec.parse("org/model") == ModelSpec("org/model", None)
    assert ModelSpec.parse(str(tmp_path), "m.Q4.gguf").label == f"{tmp_path}/m.Q4.gguf"
    with pytest.raises(FileNotFoundError):
        ModelSpec.parse(str(tmp_path / "absent.gguf"))
    with pytest.raises(ValueError, match="backend"):
        load_engine(ModelSpec("x"), EngineOptions(backend="tgi"))


@pytest.fixture(scope="module")
def smol(smollm2_gguf):
    return TransformersEngine(ModelSpec.parse(str(smollm2_gguf)), device="cpu")


def test_seeds_reproduce_samples_and_stop_strings_cut(smol):
    chat = [{"role": "user", "content": "Tell me a word."}]
    params = SamplingParams(temperature=1.0, top_p=1.0, max_new_tokens=6, seed=0)
    a, b, c = smol.generate([chat, chat, chat], params, seeds=[11, 11, 12])
    assert a == b and a.num_tokens <= 6
    d, = smol.generate([chat], params, seeds=[12])
    assert c == d
    with pytest.raises(ValueError, match="seeds"):
        smol.generate([chat], params, seeds=[1, 2])
    greedy = SamplingParams(max_new_tokens=12)
    full, = smol.generate(["The capital of France is"], greedy)
    cut_at = full.text.strip().split()[0]
    stopped, = smol.generate(["The capital of France is"], SamplingParams(max_new_tokens=12, stop=(cut_at,)))
    assert cut_at not in stopped.text and stopped.finish_reason == "stop" and full.text.startswith(stopped.text)
    assert smol.has_chat_template


@pytest.mark.gpu
def test_vllm_engine_generates_with_seeds(smollm2_gguf):
    pytest.importorskip("vllm")
    from sdpo_eval.engines import VllmEngine

    engine = VllmEngine(ModelSpec.parse(str(smollm2_gguf)), tokenizer=str(smollm2_gguf.parent), gpu_memory_utilization=0.3)
    chat = [{"role": "user", "content": "Say hi."}]
    a, b = engine.generate([chat, chat], SamplingParams(temperature=1.0, max_new_tokens=8), seeds=[3, 3])
    assert a.text == b.text and 0 < a.num_tokens <= 8
