"""Does the demo's SDPO teacher know more than its student? A CPU diagnostic for the flat SDPO demo curve.

    python -m sdpo_data.smollm2 --out-dir /tmp/smollm2
    python bench/learning/demo_teacher_signal.py --model /tmp/smollm2 --prompts 32 \\
        --out bench/learning/results/demo_teacher_signal.json

For each addition prompt (the demo's training rows, `sdpo_data.addition_rows.addition_rows`) it samples n answers from
the base model (the recipe's sampling: T 1.0, top-p 1), judges them with `reward.addition.grade_reply`, and builds each
failed answer's teacher context with the trainer's own code (`select_teacher_signals`, `build_teacher_messages`, default
`RepromptConfig`). For every failed answer it then measures, under the student (plain prompt) and under the teacher
(same weights, teacher context):
  - log p(correct answer) = sum of the log-probs of the tokens of the correct number as the whole response;
  - log p(failed answer)  = the same for the failed response itself (the tokens SDPO trains on).
A useful teacher raises the first and lowers the second. Reported per signal kind (feedback only / demonstration).
"""
from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path
from statistics import mean

import torch

from reward.addition import grade_reply
from sdpo_attempts.valid import valid_record
from sdpo_data.addition_rows import addition_rows
from sdpo_ext.loss.logprobs import gather_logp
from sdpo_ext.teacher.reprompt import RepromptConfig, build_teacher_messages, render_prompt_ids, select_teacher_signals


def response_logprob(model, prompt_ids: list[int], response_ids: list[int]) -> float:
    """sum_t log p(response_t | prompt, response_<t) under `model`."""
    ids = torch.tensor([prompt_ids + response_ids])
    with torch.no_grad():
        logits = model(ids).logits[0, len(prompt_ids) - 1:-1]
    return gather_logp(logits, torch.tensor(response_ids)[:, None]).sum().item()


def demo_arguments(description: str, max_new_tokens: int) -> argparse.Namespace:
    """The two CPU diagnostics' command line (this one and demo_confident_positions.py)."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True,
                        help="HF folder of SmolLM2-135M-Instruct (python -m sdpo_data.smollm2)")
    parser.add_argument("--prompts", type=int, default=32)
    parser.add_argument("--n", type=int, default=8, help="samples per prompt (the demo recipe's rollout.n)")
    parser.add_argument("--max-new-tokens", type=int, default=max_new_tokens)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True)
    return parser.parse_args()


def load_demo_model(model_dir: str, seed: int):
    """(tokenizer, fp32 model in eval mode) of `model_dir`, with torch seeded."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.manual_seed(seed)
    return (AutoTokenizer.from_pretrained(model_dir),
            AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval())


def main() -> None:
    args = demo_arguments(__doc__, max_new_tokens=32)

    from tqdm.auto import tqdm

    tok, model = load_demo_model(args.model, args.seed)
    cfg = RepromptConfig()
    rows: dict[str, list[dict]] = defaultdict(list)
    solved = 0
    for p, row in enumerate(tqdm(addition_rows(args.prompts, args.seed, "train"), desc="prompts")):
        messages, target = row["prompt"], int(row["reward_model"]["ground_truth"])
        prompt_ids = render_prompt_ids(tok, messages)
        with torch.no_grad():
            out = model.generate(torch.tensor([prompt_ids] * args.n), do_sample=True, temperature=1.0, top_p=1.0,
                                 max_new_tokens=args.max_new_tokens, pad_token_id=tok.eos_token_id)
        responses = [tok.decode(o[len(prompt_ids):], skip_special_tokens=True) for o in out]
        verdicts = [grade_reply(r, target) for r in responses]
        solved += sum(valid_record(v) for v in verdicts)
        signals = select_teacher_signals([p] * args.n, [v["score"] for v in verdicts], responses,
                                         [v["feedback"] for v in verdicts], [False] * args.n, cfg)
        correct_ids = tok(str(target), add_special_tokens=False)["input_ids"]
        for response, verdict, signal in zip(responses, verdicts, signals):
            if valid_record(verdict) or not signal.active:
                continue
            failed_ids = tok(response, add_special_tokens=False)["input_ids"]
            teacher_ids = render_prompt_ids(tok, build_teacher_messages(messages, signal, cfg))
            kind = "demonstration" if signal.demonstration is not None else "feedback"
            rows[kind].append({
                "correct_student": response_logprob(model, prompt_ids, correct_ids),
                "correct_teacher": response_logprob(model, teacher_ids, correct_ids),
                "failed_student": response_logprob(model, prompt_ids, failed_ids),
                "failed_teacher": response_logprob(model, teacher_ids, failed_ids),
            })
    summary = {"model": args.model, "prompts": args.prompts, "n": args.n, "seed": args.seed,
               "sample_accuracy": round(solved / (args.prompts * args.n), 4), "by_signal": {}}
    for kind, rs in rows.items():
        summary["by_signal"][kind] = {
            "failed_samples": len(rs),
            "mean_logp_correct_student": round(mean(r["correct_student"] for r in rs), 3),
            "mean_logp_correct_teacher": round(mean(r["correct_teacher"] for r in rs), 3),
            "fraction_teacher_raises_correct": round(mean(r["correct_teacher"] > r["correct_student"] for r in rs), 3),
            "mean_logp_failed_student": round(mean(r["failed_student"] for r in rs), 3),
            "mean_logp_failed_teacher": round(mean(r["failed_teacher"] for r in rs), 3),
            "fraction_teacher_lowers_failed": round(mean(r["failed_teacher"] < r["failed_student"] for r in rs), 3),
        }
    args.out.write_text(json.dumps(summary, indent=2))
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
