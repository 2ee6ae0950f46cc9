"""Rollout phase of the step-time benchmark (issue 18), run on the GPU machine: one vLLM engine, configured as verl
0.9.1's rollout server is for the kimina recipes, samples n replies for each prompt at each response length and records
the seconds each length took. The token ids it writes are the batch that bench/step_time/step_phases.py trains on.

    python bench/step_time/step_generate.py --model-dir /tmp/qwen3_1p7b_random --data-dir /tmp/step_data \\
        --lengths 2048 8192 --out $OUT/rollouts.pt

The rollout does the same work for every algorithm (same model, prompts, sampling and lengths), so it is measured once
per length here and added to each algorithm's training phases. Engine arguments: those verl's vLLMHttpServer passed in
the full-pipeline runs of bench/step_time/run_step_time.sh (bf16, max_num_seqs 256, chunked prefill with 16,384 batched
tokens, prefix caching, cudagraph_mode FULL_AND_PIECEWISE, seed 42) and the kimina recipes' gpu_memory_utilization
(0.5). Each sample is its own request, as verl's agent loop sends them. Excluded: the agent loop's HTTP round trips and
the Lean reward (the screen rejects random text in microseconds).
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path


def chat_prompts(data_dir: Path, model_dir: Path,
                 n_prompts: int) -> tuple[list[list[int]], list[list[dict]], list[str]]:
    """The first `n_prompts` rows of the benchmark's training file: token ids (chat-templated as verl's dataset
    does), messages and ground truths."""
    import pandas as pd
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    rows = pd.read_parquet(data_dir / "minif2f_kimina_valid.parquet").head(n_prompts)
    messages = [[dict(m) for m in row] for row in rows["prompt"]]
    ids = [list(tokenizer.apply_chat_template(m, add_generation_prompt=True, tokenize=True, return_dict=False))
           for m in messages]
    return ids, messages, [row["ground_truth"] for row in rows["reward_model"]]


def write_rollouts(result: dict, out: Path, **about) -> dict:
    """`result` to `out` (torch.save: what step_phases.py reads) and its summary to out.json: everything but the
    prompts and the token ids, plus `about`. Returns the summary."""
    import torch

    out.parent.mkdir(parents=True, exist_ok=True)
    torch.save(result, out)
    summary = {k: v for k, v in result.items() if k not in ("prompt_ids", "messages", "ground_truths", "lengths")}
    summary.update(about)
    summary["lengths"] = {n: {k: v for k, v in row.items() if k not in ("response_ids", "finish_reasons")}
                          for n, row in result["lengths"].items()}
    out.with_suffix(".json").write_text(json.dumps(summary, indent=1))
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model-dir", type=Path, required=True)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--lengths", type=int, nargs="+", required=True, help="response token budgets")
    parser.add_argument("--prompts", type=int, default=8)
    parser.add_argument("--n", type=int, default=8, help="samples per prompt")
    parser.add_argument("--temperature", type=float, default=1.0, help="the kimina recipes' training value")
    parser.add_argument("--top-p", type=float, default=1.0, help="the kimina recipes' training value")
    parser.add_argument("--gpu-memory-utilization", type=float, default=0.5, help="the kimina recipes' value")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()

    from vllm import LLM, SamplingParams
    from vllm.inputs import TokensPrompt

    prompt_ids, messages, ground_truths = chat_prompts(args.data_dir, args.model_dir, args.prompts)
    t0 = time.perf_counter()
    llm = LLM(model=str(args.model_dir), dtype="bfloat16", max_model_len=40960, max_num_seqs=256,
              enable_chunked_prefill=True, max_num_batched_tokens=16384, enable_prefix_caching=True,
              gpu_memory_utilization=args.gpu_memory_utilization, seed=42,
              compilation_config={"cudagraph_mode": "FULL_AND_PIECEWISE"})
    engine_s = time.perf_counter() - t0
    requests = [TokensPrompt(prompt_token_ids=ids) for ids in prompt_ids for _ in range(args.n)]
    llm.generate(requests, SamplingParams(max_tokens=16, temperature=args.temperature, top_p=args.top_p),
                 use_tqdm=False)  # warm-up, untimed
    result = {"engine_start_s": round(engine_s, 1), "prompt_ids": prompt_ids, "messages": messages,
              "ground_truths": ground_truths, "lengths": {}}
    for length in args.lengths:
        params = SamplingParams(max_tokens=length, temperature=args.temperature, top_p=args.top_p)
        t0 = time.perf_counter()
        outputs = llm.generate(requests, params, use_tqdm=False)
        seconds = time.perf_counter() - t0
        responses = [list(o.outputs[0].token_ids) for o in outputs]
        finish = [o.outputs[0].finish_reason for o in outputs]
        tokens = sum(map(len, responses))
        result["lengths"][length] = {"gen_s": round(seconds, 3), "response_ids": responses, "finish_reasons": finish,
                                     "response_tokens": tokens, "tokens_per_s": round(tokens / seconds, 1)}
        print(f"r{length}: {seconds:.1f} s, {tokens} response tokens, {tokens / seconds:.0f} tok/s", flush=True)
    write_rollouts(result, args.out)


if __name__ == "__main__":
    main()
