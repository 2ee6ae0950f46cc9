"""The driver's teacher-prompt building on real reply text (issue 49): seconds per step on this machine's CPU.

    python bench/step_time/prep_cost.py --tokenizer <the benchmark model's folder> \\
        --out bench/step_time/results/prep_cost_cpu.json

One step as the step-time benchmark shapes it (its prompts of about 1,034 tokens, 8 prompts x 8 samples, the first
sample of 4 groups solved, the others failed with a Lean error as feedback), at each length, in both sibling-solution
cases: `whole` (the reply is the solution) and `prover` (a <think> block, then a ```lean4 proof of
solution_profile.json's length). The reply text is real: consecutive windows of mathematical text and Lean proofs (the
67 DeepSeek-Prover-V1.5 few-shot rows of /work/shared/data: informal statement, formal statement, proof; with --raw,
also Kimina-Prover-Preview's published proofs), cut to the length in tokens. Timed: what
`SDPOTrainer._prepare_samples` does for the teacher (the batch decode of the replies and
`sdpo_ext.teacher_fields.teacher_fields` with the recipes' reprompt settings), median of --reps.
"""
from __future__ import annotations

import argparse
import json
import platform
import statistics
import tempfile
import time
from pathlib import Path

from make_step_time_inputs import build_data
from solution_profile import FEW_SHOT, PRIMARY, PROFILE, RAW, SOURCES, archive_texts
from step_generate import chat_prompts

PROMPTS, SAMPLES, SOLVED = 8, 8, 4
FEEDBACK = ("Lean error at line 12, column 4:\nlinarith failed to find a contradiction\ncase a\nx : ℝ\nh₀ : 0 < x\n"
            "a✝ : x ^ 2 < 4\n⊢ False")


def corpus(raw: Path | None) -> str:
    rows = [json.loads(line) for line in FEW_SHOT.read_text().splitlines() if line.strip()]
    parts = [r["informal_prefix"] + r["formal_statement"] + r["formal_proof"] for r in rows]
    if raw is not None:
        repo, path = SOURCES[PRIMARY][1], SOURCES[PRIMARY][3]
        parts += archive_texts(raw / repo.replace("/", "+") / path)
    return "\n\n".join(parts)


def replies(tokenizer, text: str, length: int, solution: int | None) -> list[list[int]]:
    """PROMPTS x SAMPLES reply ids of `length` tokens, consecutive windows of `text` (wrapping round); with `solution`,
    a <think> block and then a lean4 block of that many tokens."""
    ids = tokenizer.encode(text, add_special_tokens=False)
    out, start = [], 0
    for _ in range(PROMPTS * SAMPLES):
        window = [ids[(start + k) % len(ids)] for k in range(length)]
        start += length
        if solution is not None:
            head = tokenizer.encode("<think>\n", add_special_tokens=False)
            tail = tokenizer.encode("\n</think>\n```lean4\n", add_special_tokens=False)
            close = tokenizer.encode("\n```", add_special_tokens=False)
            think = length - len(head) - len(tail) - solution
            window = head + window[:think] + tail + window[think:length - len(head) - len(tail) - len(close)] + close
        out.append(window)
    return out


def one_step(tokenizer, cfg, messages: list[list[dict]], prompt_ids: list[list[int]],
             response_ids: list[list[int]]) -> float:
    """Seconds of the driver's teacher part of one step: decode the replies, then teacher_fields."""
    import torch

    from sdpo_ext.judged import JudgedSample
    from sdpo_ext.teacher_fields import teacher_fields

    n = SAMPLES
    t0 = time.perf_counter()
    texts = tokenizer.batch_decode(response_ids, skip_special_tokens=True)
    samples = [JudgedSample(key=str(i), uid=i // n, problem=str(i // n), text=text, response_tokens=len(ids),
                            score=1.0 if i % n == 0 and i // n < SOLVED else 0.0, feedback=FEEDBACK)
               for i, (text, ids) in enumerate(zip(texts, response_ids))]
    teacher_fields(tokenizer, cfg, samples, messages=[messages[i // n] for i in range(len(texts))],
                   prompts=[torch.tensor(prompt_ids[i // n]) for i in range(len(texts))], chat_template_kwargs={})
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokenizer", type=Path, required=True)
    parser.add_argument("--lengths", type=int, nargs="+", default=[2048, 8192])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--raw", type=Path, default=None, help=f"add Kimina's proofs from here (e.g. {RAW})")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    from transformers import AutoTokenizer

    from sdpo_ext.config import SDPOConfig

    tokenizer = AutoTokenizer.from_pretrained(args.tokenizer)
    cfg = SDPOConfig()  # the recipes' reprompt settings are its defaults (recipes/sdpo_algorithm/sdpo.yaml)
    with tempfile.TemporaryDirectory() as data_dir:  # the benchmark's prompts (about 1,034 tokens each)
        build_data(Path(data_dir), args.tokenizer, prompt_tokens=1024, n_rows=PROMPTS)
        prompt_ids, messages, _ = chat_prompts(Path(data_dir), args.tokenizer, PROMPTS)
    text = corpus(args.raw)
    stated = json.loads(PROFILE.read_text())["tokens"]
    result = {"command": "python bench/step_time/prep_cost.py " + " ".join(
                  f"--{k.replace('_', '-')} {' '.join(map(str, v)) if isinstance(v, list) else v}"
                  for k, v in vars(args).items() if v is not None),
              "cpu": platform.processor() or platform.machine(), "samples": PROMPTS * SAMPLES, "solved_groups": SOLVED,
              "reps": args.reps, "seconds": {}}
    for length in args.lengths:
        for case, solution in (("whole", None), ("prover", stated)):
            ids = replies(tokenizer, text, length, solution)
            times = [one_step(tokenizer, cfg, messages, prompt_ids, ids) for _ in range(args.reps)]
            result["seconds"][f"{case}_r{length}"] = round(statistics.median(times), 3)
            print(f"{case} r{length}: {result['seconds'][f'{case}_r{length}']} s (runs {[round(t, 3) for t in times]})",
                  flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
