"""Text generation engines behind one interface: vLLM on GPU, transformers on CPU (or GPU without vLLM).

    engine.generate(prompts, params, seeds=None) -> list[Completion]   # one completion per prompt, in order

A prompt is a raw string or a list of chat messages; messages are rendered with the model's chat
template (add_generation_prompt=True) and tokenised without adding special tokens again. Each prompt
gets its own seed (`seeds[i]`, else `params.seed + i`), so a sample is reproducible by (model, prompt,
seed, params) on the same engine, in whatever batch it runs. Both engines generate in batches. Model specs are
HF ids, local folders or a GGUF file.
"""
from __future__ import annotations

import importlib.util
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, Sequence, Union

from sdpo_options.flags import option

Prompt = Union[str, list]


@dataclass(frozen=True)
class SamplingParams:
    """How one generation samples: temperature (0: greedy), top-p, the token limit, the seed, stop strings."""

    temperature: float = 0.0          # 0 = greedy
    top_p: float = 1.0
    max_new_tokens: int = 1024
    seed: int = 0
    stop: tuple[str, ...] = ()


@dataclass(frozen=True)
class Completion:
    """One generated reply: its text, token count and finish reason."""

    text: str
    num_tokens: int
    finish_reason: str                # "stop" (EOS or stop string) or "length"


@dataclass(frozen=True)
class ModelSpec:
    """A model location: `path` is an HF id or folder; `gguf_file` names a GGUF file inside the folder."""

    path: str
    gguf_file: str | None = None

    @classmethod
    def parse(cls, model: str, gguf_file: str | None = None) -> "ModelSpec":
        """`model` may itself be a path to a .gguf file (split into folder + file name)."""
        if model.endswith(".gguf") and gguf_file is None:
            file = Path(model).expanduser()
            if not file.is_file():
                raise FileNotFoundError(f"GGUF file not found: {file}")
            return cls(str(file.parent), file.name)
        return cls(model, gguf_file)

    @property
    def label(self) -> str:
        """The model's name in reports: the path, with the GGUF file when there is one."""
        return f"{self.path}/{self.gguf_file}" if self.gguf_file else self.path


class Engine(Protocol):
    """A generation engine for one model (vLLM or transformers)."""

    spec: ModelSpec

    @property
    def has_chat_template(self) -> bool:
        """Whether the tokenizer has a chat template."""

    def generate(self, prompts: Sequence[Prompt], params: SamplingParams,
                 seeds: Sequence[int] | None = None) -> list[Completion]:
        """One completion per prompt, in order; prompt i is sampled with seeds[i] (default: params.seed + i)."""


def _seeds(n: int, params: SamplingParams, seeds: Sequence[int] | None) -> list[int]:
    if seeds is None:
        return [params.seed + i for i in range(n)]
    if len(seeds) != n:
        raise ValueError(f"got {len(seeds)} seeds for {n} prompts")
    return list(seeds)


def _cut_at_stop(text: str, stop: Sequence[str]) -> tuple[str, bool]:
    cuts = [text.index(s) for s in stop if s and s in text]
    return (text[: min(cuts)], True) if cuts else (text, False)


def _prompt_ids(tokenizer, prompt: Prompt) -> list[int]:
    if isinstance(prompt, str):
        return list(tokenizer(prompt)["input_ids"])
    text = tokenizer.apply_chat_template(list(prompt), add_generation_prompt=True, tokenize=False)
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


class SeededSampling:
    """A logits processor that samples row i with its own generator seeded by `seeds[i]`, so a sample does not
    depend on the other prompts of its batch. Gumbel-max: argmax(logits / T + G), G = -log(-log U), U ~ U(0, 1),
    draws from softmax(logits / T); tokens outside the top-p nucleus get -inf first. Used with greedy decoding."""

    def __init__(self, seeds: Sequence[int], temperature: float, top_p: float, device):
        import torch

        self.temperature, self.top_p = temperature, top_p
        self.generators = [torch.Generator(device=device).manual_seed(int(seed)) for seed in seeds]

    def __call__(self, input_ids, scores):
        import torch

        logits = scores.float() / self.temperature
        if self.top_p < 1.0:
            sorted_logits, order = torch.sort(logits, descending=True, dim=-1)
            mass_before = torch.softmax(sorted_logits, dim=-1).cumsum(-1) - torch.softmax(sorted_logits, dim=-1)
            drop = torch.zeros_like(logits, dtype=torch.bool).scatter(-1, order, mass_before >= self.top_p)
            logits = logits.masked_fill(drop, float("-inf"))
        uniform = torch.stack([torch.rand(logits.shape[-1], generator=g, device=logits.device)
                               for g in self.generators])
        return logits - torch.log(-torch.log(uniform.clamp(1e-20, 1.0 - 1e-7)))


class SamplesDone:
    """A stopping criterion that stops nothing: it moves `bar` on as each row of a batch first emits EOS (a sample
    done), so generation on CPU, minutes per batch, shows progress per sample rather than per batch."""

    def __init__(self, bar, eos: int | None, width: int):
        self.bar, self.eos, self.width, self.done = bar, eos, width, 0

    def __call__(self, input_ids, scores, **kwargs):
        import torch

        if self.eos is not None:
            ended = int((input_ids[:, self.width:] == self.eos).any(dim=1).sum())
            self.bar.update(ended - self.done)
            self.done = ended
        return torch.zeros(input_ids.shape[0], dtype=torch.bool, device=input_ids.device)


class TransformersEngine:
    """transformers `generate` on left-padded batches of `batch_size` prompts (meant for CPU and tests). Sampling
    uses `SeededSampling`, so each sample's seed fixes it whatever batch it lands in (up to padding numerics)."""

    def __init__(self, spec: ModelSpec, device: str | None = None, dtype: str = "auto", batch_size: int = 8):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.spec, self.batch_size = spec, batch_size
        kwargs = {"gguf_file": spec.gguf_file} if spec.gguf_file else {}
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.tokenizer = AutoTokenizer.from_pretrained(spec.path, **kwargs)
        torch_dtype = getattr(torch, dtype) if dtype != "auto" else ("auto" if self.device != "cpu" else torch.float32)
        self.model = AutoModelForCausalLM.from_pretrained(spec.path, dtype=torch_dtype, **kwargs).to(self.device).eval()

    @property
    def has_chat_template(self) -> bool:
        """Whether the tokenizer has a chat template."""
        return bool(getattr(self.tokenizer, "chat_template", None))

    def generate(self, prompts: Sequence[Prompt], params: SamplingParams,
                 seeds: Sequence[int] | None = None) -> list[Completion]:
        """`Engine.generate` with transformers' `generate`, in batches of `batch_size`."""
        from tqdm.auto import tqdm

        seeds = _seeds(len(prompts), params, seeds)
        out: list[Completion] = []
        with tqdm(total=len(prompts), desc="generate", unit="sample", leave=False, disable=len(prompts) < 2) as bar:
            for start in range(0, len(prompts), self.batch_size):
                end = start + self.batch_size
                out += self._generate_batch(prompts[start:end], params, seeds[start:end], bar)
        return out

    def _generate_batch(
        self, prompts: Sequence[Prompt], params: SamplingParams, seeds: Sequence[int], bar
    ) -> list[Completion]:
        import torch
        from transformers import StoppingCriteriaList

        eos = self.tokenizer.eos_token_id
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else eos
        rows = [_prompt_ids(self.tokenizer, prompt) for prompt in prompts]
        width = max(map(len, rows))
        ids = torch.tensor([[pad] * (width - len(r)) + r for r in rows], device=self.device)
        mask = torch.tensor([[0] * (width - len(r)) + [1] * len(r) for r in rows], device=self.device)
        sampled = params.temperature > 0
        sampler = [SeededSampling(seeds, params.temperature, params.top_p, self.device)] if sampled else []
        extra = {"stop_strings": list(params.stop), "tokenizer": self.tokenizer} if params.stop else {}
        progress = SamplesDone(bar, eos, width)
        with torch.no_grad():
            gen = self.model.generate(ids, attention_mask=mask, max_new_tokens=params.max_new_tokens, pad_token_id=pad,
                                      do_sample=False, temperature=None, top_p=None, top_k=None,
                                      logits_processor=sampler, stopping_criteria=StoppingCriteriaList([progress]),
                                      **extra)
        bar.update(len(rows) - progress.done)   # the rows that ran to the token limit
        out = []
        for row in gen[:, width:].tolist():
            new = row[:row.index(eos) + 1] if eos is not None and eos in row else row
            text, stopped = _cut_at_stop(self.tokenizer.decode(new, skip_special_tokens=True), params.stop)
            ended = stopped or (eos is not None and eos in new) or len(new) < params.max_new_tokens
            out.append(Completion(text=text, num_tokens=len(new), finish_reason="stop" if ended else "length"))
        return out


class EngineMissing(RuntimeError):
    """The generation engine asked for is not installed here: a missing backend (the CLIs exit 3), not bad input."""


class VllmEngine:
    """vLLM offline engine; all prompts go to vLLM at once, each with its own SamplingParams seed."""

    def __init__(self, spec: ModelSpec, tokenizer: str | None = None, tensor_parallel_size: int = 1,
                 gpu_memory_utilization: float = 0.85, max_model_len: int | None = None, dtype: str = "auto",
                 extra: dict | None = None):
        """`extra`: further keyword arguments of vllm.LLM (e.g. kv_cache_memory_bytes, enforce_eager); EngineMissing
        without vLLM."""
        if importlib.util.find_spec("vllm") is None:
            raise EngineMissing("the vLLM engine is not installed here (pip install vllm on a CUDA machine, or "
                                "generate with transformers: --engine transformers)")
        from vllm import LLM

        self.spec = spec
        model = str(Path(spec.path) / spec.gguf_file) if spec.gguf_file else spec.path
        self.llm = LLM(model=model, tokenizer=tokenizer or spec.path, tensor_parallel_size=tensor_parallel_size,
                       gpu_memory_utilization=gpu_memory_utilization, max_model_len=max_model_len, dtype=dtype,
                       **(extra or {}))
        self.tokenizer = self.llm.get_tokenizer()

    @property
    def has_chat_template(self) -> bool:
        """Whether the tokenizer has a chat template."""
        return bool(getattr(self.tokenizer, "chat_template", None))

    def generate(self, prompts: Sequence[Prompt], params: SamplingParams,
                 seeds: Sequence[int] | None = None) -> list[Completion]:
        """`Engine.generate` in one vLLM call."""
        from vllm import SamplingParams as VllmParams

        requests = [{"prompt_token_ids": _prompt_ids(self.tokenizer, p)} for p in prompts]
        per_prompt = [VllmParams(n=1, temperature=params.temperature, top_p=params.top_p,
                                 max_tokens=params.max_new_tokens, seed=seed, stop=list(params.stop) or None)
                      for seed in _seeds(len(prompts), params, seeds)]
        results = self.llm.generate(requests, sampling_params=per_prompt, use_tqdm=True)
        out = []
        for result in results:
            sample = result.outputs[0]
            out.append(Completion(text=sample.text, num_tokens=len(sample.token_ids),
                                  finish_reason="length" if sample.finish_reason == "length" else "stop"))
        return out


DTYPES = ("auto", "float32", "bfloat16", "float16")
ENGINES = ("auto", "vllm", "transformers")


@dataclass
class EngineOptions:
    """How the evaluation CLIs load and run a model; their flags are built from these fields (`sdpo_options.flags`)."""

    engine: str = option("auto", "generation engine; auto: vLLM with CUDA and vLLM installed, else transformers",
                         choices=ENGINES)
    tensor_parallel_size: int = option(1, "vLLM: GPUs per model")
    gpu_memory_utilization: float = option(0.85, "vLLM: share of GPU memory it may take")
    max_model_len: int | None = option(None, "vLLM: context length (None: the model's)")
    dtype: str = option("auto", "model weights and compute (auto: the checkpoint's on GPU, float32 on CPU)",
                        choices=DTYPES)
    tokenizer: str | None = option(None, "vLLM: the HF tokenizer of a GGUF model")
    batch_size: int = option(8, "transformers: prompts per padded batch (vLLM schedules its own batches)")

    def __post_init__(self) -> None:
        if self.batch_size < 1:
            raise ValueError(f"--batch-size must be >= 1, got {self.batch_size}")


def passive_cpu_threads() -> None:
    """OMP_WAIT_POLICY=PASSIVE, unless set, for the OpenMP runtime torch loads on first import (no effect once it has):
    torch's CPU threads then sleep between parallel regions instead of spinning. Measured on 2 cores under load 7-9
    (other processes): one batch of the README's MATH example took 196-357 s with torch's 2 spinning threads, 22 s
    passive and 18-43 s with 1 thread; the whole example 939 s spinning, 215 s passive. On a quiet machine (load 1-2)
    passive costs about 15% (72-75 s against 62 s)."""
    if "torch" not in sys.modules:
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def load_engine(spec: ModelSpec, options: EngineOptions | None = None) -> Engine:
    """vLLM when requested or (auto) when CUDA and vLLM are both available, else transformers."""
    passive_cpu_threads()
    options = options or EngineOptions()
    engine = options.engine
    if engine == "auto":
        import torch

        engine = "vllm" if torch.cuda.is_available() and importlib.util.find_spec("vllm") else "transformers"
    if engine == "vllm":
        return VllmEngine(spec, tokenizer=options.tokenizer, tensor_parallel_size=options.tensor_parallel_size,
                          gpu_memory_utilization=options.gpu_memory_utilization, max_model_len=options.max_model_len,
                          dtype=options.dtype)
    if engine == "transformers":
        return TransformersEngine(spec, dtype=options.dtype, batch_size=options.batch_size)
    raise ValueError(f"engine must be auto, vllm or transformers, got {engine!r}")
