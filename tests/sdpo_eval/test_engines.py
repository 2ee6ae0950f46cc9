"""Generation engines: model specs, per-sample seeds and stop strings (SmolLM2 on CPU; vLLM on GPU)."""
from __future__ import annotations

import pytest

from sdpo_eval.engines import (
    EngineOptions,
    ModelSpec,
    SamplesDone,
    SamplingParams,
    SeededSampling,
    TransformersEngine,
    load_engine,
)


def test_model_spec_parse(tmp_path):
    gguf = tmp_path / "m.Q4.gguf"
    gguf.write_bytes(b"GGUF")
    assert ModelSpec.parse(str(gguf)) == ModelSpec(str(tmp_path), "m.Q4.gguf")
    assert ModelSpec.parse("org/model") == ModelSpec("org/model", None)
    assert ModelSpec.parse(str(tmp_path), "m.Q4.gguf").label == f"{tmp_path}/m.Q4.gguf"
    with pytest.raises(FileNotFoundError):
        ModelSpec.parse(str(tmp_path / "absent.gguf"))
    with pytest.raises(ValueError, match="engine"):
        load_engine(ModelSpec("x"), EngineOptions(engine="tgi"))


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


def test_seeded_sampling_draws_from_the_tempered_nucleus():
    """Gumbel-max over logits / T matches softmax(logits / T); tokens outside top-p are never drawn."""
    import torch

    logits = torch.log(torch.tensor([[0.5, 0.3, 0.15, 0.05]]))
    draws = torch.stack([SeededSampling([seed], 1.0, 1.0, "cpu")(None, logits).argmax(-1) for seed in range(4000)])
    frequencies = torch.bincount(draws.flatten(), minlength=4).float() / 4000
    assert torch.allclose(frequencies, torch.tensor([0.5, 0.3, 0.15, 0.05]), atol=0.03)
    nucleus = {int(SeededSampling([seed], 1.0, 0.7, "cpu")(None, logits).argmax()) for seed in range(300)}
    assert nucleus == {0, 1}
    same = [SeededSampling([7, 7], 2.0, 1.0, "cpu")(None, logits.repeat(2, 1)).argmax(-1) for _ in range(2)]
    assert torch.equal(same[0], same[1]) and same[0][0] == same[0][1]


def test_batched_generation_matches_one_at_a_time(smol, monkeypatch):
    """Prompts of different lengths (left padding) give the same greedy and seeded samples in a batch as alone."""
    engine = smol
    monkeypatch.setattr(engine, "batch_size", 3)
    prompts = ["The capital of France is", [{"role": "user", "content": "Name a colour."}], "1, 2, 3,"]
    for params in (SamplingParams(max_new_tokens=5), SamplingParams(temperature=1.0, max_new_tokens=5)):
        batched = engine.generate(prompts, params, seeds=[1, 2, 3])
        alone = [engine.generate([p], params, seeds=[s])[0] for p, s in zip(prompts, [1, 2, 3])]
        assert [c.text for c in batched] == [c.text for c in alone]


@pytest.mark.gpu
def test_vllm_engine_generates_with_seeds(smollm2_gguf):
    pytest.importorskip("vllm")
    from sdpo_eval.engines import VllmEngine

    engine = VllmEngine(ModelSpec.parse(str(smollm2_gguf)), tokenizer=str(smollm2_gguf.parent),
                        gpu_memory_utilization=0.3)
    chat = [{"role": "user", "content": "Say hi."}]
    a, b = engine.generate([chat, chat], SamplingParams(temperature=1.0, max_new_tokens=8), seeds=[3, 3])
    assert a.text == b.text and 0 < a.num_tokens <= 8


class Bar:
    def __init__(self, *args, **kwargs):
        self.total, self.updates = kwargs.get("total"), []

    def update(self, n):
        self.updates.append(n)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_progress_moves_per_sample_as_each_row_ends():
    """Rows 0 and 2 emit EOS (9) at steps 1 and 3, row 1 never: one tick per finished row, none stops generation."""
    import torch

    bar, prompt = Bar(), torch.ones(3, 2, dtype=torch.long)
    done = SamplesDone(bar, eos=9, width=2)
    for step in ([9, 5, 5], [0, 5, 5], [0, 5, 9]):
        prompt = torch.cat([prompt, torch.tensor(step)[:, None]], dim=1)
        assert not done(prompt, None).any()
    assert bar.updates == [1, 0, 1] and done.done == 2


def test_generate_counts_samples_not_batches(smol, monkeypatch):
    import tqdm.auto

    bars = []
    monkeypatch.setattr(tqdm.auto, "tqdm", lambda *a, **k: bars.append(Bar(*a, **k)) or bars[-1])
    monkeypatch.setattr(smol, "batch_size", 2)
    chat = [{"role": "user", "content": "Say yes."}]
    smol.generate([chat] * 3, SamplingParams(max_new_tokens=4))
    (bar,) = bars
    assert bar.total == 3 and sum(bar.updates) == 3


@pytest.mark.parametrize("given, expected", [(None, "PASSIVE"), ("ACTIVE", "ACTIVE")])
def test_the_engine_loads_torch_with_passive_cpu_threads_unless_told_otherwise(given, expected):
    """Spinning OpenMP threads made CPU generation 5-10x slower on a busy 2-core box (engines.passive_cpu_threads)."""
    import os
    import subprocess
    import sys

    code = ("import os, sys\nfrom sdpo_eval.engines import EngineOptions, ModelSpec, load_engine\ntry:\n"
            "    load_engine(ModelSpec('x'), EngineOptions(engine='none'))\nexcept ValueError:\n    pass\n"
            "print(os.environ.get('OMP_WAIT_POLICY'), 'torch' in sys.modules)")
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    env.update({"OMP_WAIT_POLICY": given} if given else {})
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert proc.stdout.split() == [expected, "False"], proc.stderr[-2000:]
