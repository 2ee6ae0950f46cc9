"""The step-time benchmark's rollout file without vLLM: the training phases depend on lengths, not on token content.

    python bench/step_time/synthetic_rollouts.py --model-dir /tmp/qwen3_1p7b_random --data-dir /tmp/step_data \\
        --lengths 2048 8192 --solution whole --out /tmp/step_phases/rollouts.pt

Writes what bench/step_time/step_generate.py writes (rollouts.pt and its .json summary), from:
- the prompts as step_generate builds them (`chat_prompts`: the benchmark's parquet, chat-templated);
- reply ids drawn uniformly from the tokenizer's one-word tokens (a space and ASCII letters, each encoding back to
  itself: `word_ids`), so that a reply decodes to text which encodes back to the same ids. Until issue 49 the ids
  were drawn over the model's 151,936 ids, but the saved tokenizer has 49,152: two thirds decoded to nothing, and the
  sibling solution in a teacher prompt was about a third of its stated length;
- each length's reply tokens and vLLM seconds (`gen_s`) from the committed profile (rollout_profile.json, measured
  once by step_generate). A profile total under samples x length is met by shortening the last samples, which then
  end with EOS (finish reason "stop"); the others run to the length ("length").

The sibling solution a teacher prompt shows (the reply after the reprompt's think-strip) is stated per length as
`sibling_solution` (case and tokens: the fewest over the samples a job can mark solved, each group's first):
- `--solution whole` (worst case, a non-thinking prover): the reply is words only, the solution is the whole reply;
- `--solution prover` (a thinking prover): <think> words </think>, then a ```lean4 block of words whose length is
  solution_profile.json's `tokens` (the mean of Kimina-Prover-Preview's published miniF2F proofs).
"""
from __future__ import annotations

import argparse
import json
import re
from dataclasses import dataclass
from pathlib import Path

PROFILE = Path(__file__).with_name("rollout_profile.json")
SOLUTION_PROFILE = Path(__file__).with_name("solution_profile.json")
WORD = re.compile(r" [A-Za-z]+")


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


def word_ids(tokenizer) -> list[int]:
    """Ids of the tokens that are one space-led ASCII word and encode back to themselves: any sequence of them decodes
    to words that a byte-level BPE tokenizer splits at the same spaces, so the text encodes back to the same ids."""
    special = set(tokenizer.all_special_ids)
    return [i for i in range(len(tokenizer)) if i not in special and WORD.fullmatch(tokenizer.decode([i]))
            and tokenizer.encode(tokenizer.decode([i]), add_special_tokens=False) == [i]]


@dataclass(frozen=True)
class ProverLayout:
    """A thinking prover's reply: think_open words think_close fence_open words fence_close, the last four parts
    (what think-strip keeps) `solution_tokens` long; the marker ids are the tokenizer's encodings."""

    think_open: list[int]
    think_close: list[int]
    fence_open: list[int]
    fence_close: list[int]
    solution_tokens: int

    def split(self, body: int) -> tuple[int, int]:
        """(think words, solution words) of a reply body of `body` tokens; a body too short for both gets no think."""
        fences = len(self.fence_open) + len(self.fence_close)
        think = body - self.solution_tokens - len(self.think_open) - len(self.think_close)
        if think < 1:
            return 0, max(0, body - fences)
        return think, self.solution_tokens - fences


def _reply(words: list[int], body: int, layout: ProverLayout | None) -> tuple[list[int], int]:
    """(reply body ids from the drawn `words`, its solution tokens after think-strip)."""
    if layout is None:
        return words[:body], body
    think, solution = layout.split(body)
    if not think:
        ids = layout.fence_open + words[:solution] + layout.fence_close
        return ids[:body], min(body, len(ids))
    ids = (layout.think_open + words[:think] + layout.think_close + layout.fence_open
           + words[think:think + solution] + layout.fence_close)
    return ids, len(layout.fence_open) + solution + len(layout.fence_close)


def synthetic_rollouts(prompt_ids: list[list[int]], messages: list[list[dict]], ground_truths: list[str],
                       profile: dict, lengths: list[int], words: list[int], eos_id: int,
                       layout: ProverLayout | None = None, seed: int = 0) -> dict:
    """step_generate's result dict, with random replies of `words` shaped by `profile` and `layout` (None: words only,
    the worst case) and each length's stated `sibling_solution` (see the module docstring)."""
    import torch

    samples = profile["samples"]
    if samples % len(prompt_ids):
        raise ValueError(f"{samples} samples do not split over {len(prompt_ids)} prompts")
    n = samples // len(prompt_ids)
    pool = torch.tensor(words)
    generator = torch.Generator().manual_seed(seed)
    result = {"engine_start_s": None, "synthetic": True, "prompt_ids": prompt_ids, "messages": messages,
              "ground_truths": ground_truths, "lengths": {}}
    for length in lengths:
        row = profile["lengths"].get(str(length))
        if row is None:
            raise ValueError(f"no recorded rollout at {length} tokens in the profile ({sorted(profile['lengths'])})")
        responses, finish, solutions = [], [], []
        for reply_len in reply_lengths(samples, length, row["response_tokens"]):
            body = reply_len if reply_len == length else reply_len - 1  # a short reply ends with EOS
            drawn = pool[torch.randint(len(pool), (body,), generator=generator)].tolist()
            ids, solution = _reply(drawn, body, layout)
            responses.append(ids + ([eos_id] if reply_len < length else []))
            finish.append("length" if reply_len == length else "stop")
            solutions.append(solution)
        result["lengths"][length] = {
            "gen_s": row["gen_s"], "response_ids": responses, "finish_reasons": finish,
            "response_tokens": sum(map(len, responses)),
            "tokens_per_s": round(row["response_tokens"] / row["gen_s"], 1),
            "sibling_solution": {"case": "whole" if layout is None else "prover",
                                 "tokens": min(solutions[::n])},
        }
    return result


def prover_layout(tokenizer, solution_tokens: int) -> ProverLayout:
    """The layout of a thinking prover's reply in `tokenizer`'s ids (one newline after </think>: two would merge with
    the fence into other tokens, and the reply would not encode back to itself)."""
    def encode(text: str) -> list[int]:
        return tokenizer.encode(text, add_special_tokens=False)

    return ProverLayout(encode("<think>\n"), encode("\n</think>\n"), encode("```lean4\n"), encode("\n```"),
                        solution_tokens)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model-dir", type=Path, required=True)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--lengths", type=int, nargs="+", required=True, help="response token budgets")
    parser.add_argument("--prompts", type=int, default=8)
    parser.add_argument("--profile", type=Path, default=PROFILE)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--solution", choices=("whole", "prover"), required=True,
                        help="the sibling solution a teacher prompt shows: the whole reply (worst case) or a thinking "
                             "prover's final proof (solution_profile.json's length)")
    parser.add_argument("--solution-profile", type=Path, default=SOLUTION_PROFILE)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()

    from step_generate import chat_prompts, write_rollouts
    from transformers import AutoTokenizer

    prompt_ids, messages, ground_truths = chat_prompts(args.data_dir, args.model_dir, args.prompts)
    tokenizer = AutoTokenizer.from_pretrained(args.model_dir)
    layout, about = None, {}
    if args.solution == "prover":
        solution = json.loads(args.solution_profile.read_text())
        layout = prover_layout(tokenizer, solution["tokens"])
        about = {"solution_profile": str(args.solution_profile), "solution_source": solution["primary"]}
    result = synthetic_rollouts(prompt_ids, messages, ground_truths, json.loads(args.profile.read_text()),
                                args.lengths, word_ids(tokenizer), tokenizer.eos_token_id, layout, args.seed)
    summary = write_rollouts(result, args.out, profile=str(args.profile), seed=args.seed, **about)
    for n, row in summary["lengths"].items():
        print(f"r{n}: {row['response_tokens']} reply tokens (synthetic), gen_s {row['gen_s']} (recorded), "
              f"sibling solution {row['sibling_solution']}")

if __name__ == "__main__":
    main()
