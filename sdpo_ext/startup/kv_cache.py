"""Start-up check of the rollout's KV cache, before Ray: where vLLM's KV cache is given in bytes
(`actor_rollout_ref.rollout.engine_kwargs.vllm.kv_cache_memory_bytes`, as the discovery launcher gives each run of a
job that shares a GPU), it must hold one sequence of the rollout's context, or vLLM's engine stops minutes later, inside
Ray ("To serve at least one request with the model's max seq len (40960), 4.38 GiB KV cache is needed ...": a
Qwen3-1.7B-shape model in a 2 GB cache, 2026-12-07).

The context is `actor_rollout_ref.rollout.max_model_len`, or, unset, the model's `max_position_embeddings` (verl 0.9.1,
vllm_async_server). A token takes 2 (K and V) x layers x KV heads x head dim x the rollout dtype's bytes, vLLM's
figure for a model whose every layer is full attention; other models (sliding windows, linear attention) and models
whose config is not on this machine are not checked.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

KV_BYTES_KEY = "actor_rollout_ref.rollout.engine_kwargs.vllm.kv_cache_memory_bytes"
CONTEXT_KEY = "actor_rollout_ref.rollout.max_model_len"
DTYPE_BYTES = {"bfloat16": 2, "bf16": 2, "float16": 2, "fp16": 2, "half": 2, "float32": 4, "fp32": 4, "float": 4}


def kv_bytes_per_token(model_config: Mapping[str, Any], dtype: str) -> int | None:
    """The bytes one token's keys and values take in every layer, None for a model that is not all full attention or
    whose config lacks the sizes."""
    layer_types = model_config.get("layer_types") or []
    if any(kind != "full_attention" for kind in layer_types) or model_config.get("use_sliding_window"):
        return None
    try:
        layers = int(model_config["num_hidden_layers"])
        heads = int(model_config["num_attention_heads"])
        kv_heads = int(model_config.get("num_key_value_heads") or heads)
        head_dim = int(model_config.get("head_dim") or int(model_config["hidden_size"]) // heads)
    except (KeyError, TypeError, ValueError):
        return None
    return 2 * layers * kv_heads * head_dim * DTYPE_BYTES.get(str(dtype), 2)


def model_config(path: Any) -> dict | None:
    """The model's config.json from its folder or the Hugging Face cache, None where this machine has none."""
    folder = Path(str(path)).expanduser()
    file: Path | str | None = folder / "config.json" if folder.is_dir() else None
    if file is None and str(path).count("/") == 1:
        from huggingface_hub import try_to_load_from_cache

        cached = try_to_load_from_cache(str(path), "config.json")
        file = cached if isinstance(cached, str) else None
    try:
        return json.loads(Path(file).read_text()) if file else None
    except (OSError, ValueError):
        return None


def kv_cache_problems(config: Mapping[str, Any]) -> list[str]:
    """Why vLLM's KV cache, given in bytes, cannot hold one sequence of the rollout's context, with the fix."""
    rollout = (config.get("actor_rollout_ref") or {}).get("rollout") or {}
    kv_bytes = ((rollout.get("engine_kwargs") or {}).get("vllm") or {}).get("kv_cache_memory_bytes")
    model = model_config(((config.get("actor_rollout_ref") or {}).get("model") or {}).get("path"))
    if kv_bytes is None or model is None:
        return []
    per_token = kv_bytes_per_token(model, rollout.get("dtype", "bfloat16"))
    context = rollout.get("max_model_len") or model.get("max_position_embeddings")
    if per_token is None or not context:
        return []
    need = int(context) * per_token
    if need <= int(kv_bytes):
        return []
    data = config.get("data") or {}
    longest = int(data.get("max_prompt_length") or 0) + int(data.get("max_response_length") or 0)
    fix = f"++{KV_BYTES_KEY}={need}"
    if 0 < longest < int(context):  # the longest sequence a rollout makes: a smaller context is enough
        shorter = f"{CONTEXT_KEY}={longest} (prompt + response)"
        if longest * per_token > int(kv_bytes):
            shorter += f" with ++{KV_BYTES_KEY}={longest * per_token}"
        fix = f"{shorter}, or {fix}"
    where = CONTEXT_KEY if rollout.get("max_model_len") else f"the model's max_position_embeddings; {CONTEXT_KEY} unset"
    return [f"{KV_BYTES_KEY}={kv_bytes} cannot hold one sequence of {context} tokens ({where}), which needs {need} "
            f"bytes at {per_token} a token: vLLM's engine would stop at its start (set {fix})"]
