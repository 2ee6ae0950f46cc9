"""The step-time benchmark's rollout file without vLLM: the training phases depend on lengths, not on token content.

    python bench/step_time/synthetic_rollouts.py --model-dir /tmp/qwen3_1p7b_random --data-dir /tmp/step_data \\
        --lengths 2048 8192 --out /tmp/step_phases/rollouts.pt

Writes what bench/step_time/step_generate.py writes (rollouts.pt and its .json summary), from:
- the prompts as step_generate builds them (`chat_prompts`: the benchmark's parquet, chat-templated);
- reply ids drawn uniformly from the model's vocabulary, special tokens excluded: what a random-weight model samples
  at temperature 1, which is what the vLLM rollouts of 2026-12-04 were;
- each length's reply tokens and vLLM seconds (`gen_s`) from the committed profile (rollout_profile.json, measured
  once by step_generate). A profile total under samples x length is met by shortening the last samples, which then
  end with EOS (finish reason "stop"); the others run to the length ("length").
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

PROFILE = Path(__file__).with_name("rollout_profile.json")


def reply_lengths(samples: int, max_tokens: int, total: int) -> list[int]:
    """`samples` lengths of at most `max_tokens` summing to `total`: full ones first, the shortfall from the last."""
    if not 0 < total <= samples * max_tokens:
        raise ValueError(f"{total} reply tokens cannot be {samples} replies of at most {max_tokens}")
    lengths = [max_tokens] * samples
    short = samples * max_tokens - total
    for i in reversed(range(samples)):
        cut = min(short, max_tokens - 1)
        lengths[i] -= cut
        short -= cut
        if not short:
            break
    return lengths


def synthetic_rollouts(prompt_ids: list[list[int]], messages: list[list[dict]], ground_truths: list[str],
                       profile: dict, lengths: list[int], vocab_size: int, special_ids: set[int], eos_id: int,
                       seed: int = 0) -> dict:
    """step_generate's result dict, with random replies shaped by `profile` (see the module docstring)."""
    import torch

    samples = profile["samples"]
    if samples % len(prompt_ids):
        raise ValueError(f"{samples} samples do not split over {len(prompt_ids)} prompts")
    allowed = torch.tensor([i for i in range(vocab_size) if i not in special_ids])
    generator = torch.Generator().manual_seed(seed)
    result = {"engine_start_s": None, "synthetic": True, "prompt_ids": prompt_ids, "messages": messages,
              "ground_truths": ground_truths, "lengths": {}}
    for length in lengths:
        row = profile["lengths"].get(str(length))
        if row is None:
            raise ValueError(f"no recorded rollout at {length} tokens in the profile ({sorted(profile['lengths'])})")
        responses, finish = [], []
        for n in reply_lengths(samples, length, row["response_tokens"]):
            ids = allowed[torch.randint(len(allowed), (n,), generator=generator)].tolist()
            if n < length:
                ids[-1] = eos_id
            responses.append(ids)
            finish.append("length" if n == length else "stop")
        result["lengths"][length] = {"gen_s": row["gen_s"], "response_ids": responses, "finish_reasons": finish,
                                     "response_tokens": row["response_tokens"],
                                     "tokens_per_s": round(row["response_tokens"] / row["gen_s"], 1)}
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model-dir", type=Path, required=True)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--lengths", type=int, nargs="+", required=True, help="response token budgets")
    parser.add_argument("--prompts", type=int, default=8)
    parser.add_argument("--profile", type=Path, default=PROFILE)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()

    from step_generate import chat_prompts, write_rollouts
    from transformers import AutoConfig, AutoTokenizer

    prompt_ids, messages, ground_truths = chat_prompts(args.data_dir, args.model_dir, args.prompts)
    tokenizer = AutoTokenizer.from_pretrained(args.model_dir)
    vocab = AutoConfig.from_pretrained(args.model_dir).vocab_size
    result = synthetic_rollouts(prompt_ids, messages, ground_truths, json.loads(args.profile.read_text()),
                                args.lengths, vocab, set(tokenizer.all_special_ids), tokenizer.eos_token_id,
                                args.seed)
    summary = write_rollouts(result, args.out, profile=str(args.profile), seed=args.seed)
    for n, row in summary["lengths"].items():
        print(f"r{n}: {row['response_tokens']} reply tokens (synthetic), gen_s {row['gen_s']} (recorded)")


if __name__ == "__main__":
    main()
