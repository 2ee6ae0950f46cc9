"""The start-up check of vLLM's KV cache given in bytes (sdpo_ext.startup.kv_cache): it must hold one sequence of the
rollout's context, else the run stops before Ray with the fix; the 2026-12-07 probe's failure is the first case."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from sdpo_ext.startup.kv_cache import CONTEXT_KEY, KV_BYTES_KEY, kv_bytes_per_token, kv_cache_problems

# Qwen3-1.7B's sizes (the probe's random-weight model and Kimina-Prover-RL-1.7B)
QWEN3_1P7B = {"num_hidden_layers": 28, "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 128,
              "hidden_size": 2048, "max_position_embeddings": 40960}
TWO_GB = 2_000_000_000


def run_config(model_dir: Path, kv_bytes: int | None = TWO_GB, context: int | None = None, prompt: int = 2048,
               response: int = 8192) -> dict:
    vllm = {} if kv_bytes is None else {"kv_cache_memory_bytes": kv_bytes}
    return {"actor_rollout_ref": {"model": {"path": str(model_dir)},
                                  "rollout": {"max_model_len": context, "dtype": "bfloat16",
                                              "engine_kwargs": {"vllm": vllm}}},
            "data": {"max_prompt_length": prompt, "max_response_length": response}}


def model(tmp_path: Path, sizes: dict) -> Path:
    (tmp_path / "config.json").write_text(json.dumps(sizes))
    return tmp_path


def test_a_token_takes_what_vllm_reported_for_the_probe():
    """vLLM on 2026-12-07: 4.38 GiB for 40,960 tokens of the 1.7B shape."""
    per_token = kv_bytes_per_token(QWEN3_1P7B, "bfloat16")
    assert per_token == 2 * 28 * 8 * 128 * 2 == 114_688
    assert round(40960 * per_token / 2 ** 30, 2) == 4.38


def test_the_probes_context_in_a_two_gb_cache_is_refused_with_both_fixes(tmp_path):
    (problem,) = kv_cache_problems(run_config(model(tmp_path, QWEN3_1P7B)))
    assert problem.startswith(f"{KV_BYTES_KEY}=2000000000 cannot hold one sequence of 40960 tokens (the model's "
                              f"max_position_embeddings; {CONTEXT_KEY} unset), which needs 4697620480 bytes")
    assert problem.endswith(f"(set {CONTEXT_KEY}=10240 (prompt + response), or ++{KV_BYTES_KEY}=4697620480)")


def test_a_context_that_fits_passes_and_one_too_long_for_the_cache_names_the_bytes(tmp_path):
    folder = model(tmp_path, QWEN3_1P7B)
    assert kv_cache_problems(run_config(folder, context=10240)) == []
    (problem,) = kv_cache_problems(run_config(folder, context=None, response=24576))
    assert f"{CONTEXT_KEY}=26624 (prompt + response) with ++{KV_BYTES_KEY}=3053453312, or" in problem


def test_no_bytes_no_config_or_a_model_not_all_full_attention_is_not_checked(tmp_path):
    assert kv_cache_problems(run_config(model(tmp_path, QWEN3_1P7B), kv_bytes=None)) == []
    assert kv_cache_problems(run_config(tmp_path / "absent")) == []
    mixed = {**QWEN3_1P7B, "layer_types": ["linear_attention", "full_attention"] * 14}
    assert kv_cache_problems(run_config(model(tmp_path, mixed))) == []
    assert kv_bytes_per_token({"num_hidden_layers": 2}, "bfloat16") is None


def test_the_run_stops_before_ray_on_a_cache_too_small(tmp_path):
    """Through verl's main_ppo with the demo recipe and a model folder of the 1.7B shape (config only: the check
    reads no weights)."""
    (tmp_path / "m").mkdir()
    folder = model(tmp_path / "m", QWEN3_1P7B)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "SDPO_OUTPUT_DIR": str(tmp_path / "runs")}
    proc = subprocess.run([sys.executable, "-m", "sdpo_ext.startup.check", "+recipe=sdpo_demo",
                           f"actor_rollout_ref.model.path={folder}", f"+{KV_BYTES_KEY}={TWO_GB}"],
                          capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert f"- KVCache: {KV_BYTES_KEY}={TWO_GB} cannot hold one sequence of 40960 tokens" in proc.stderr
