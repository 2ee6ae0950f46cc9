"""Where is the demo's teacher flatter than its student, and what does `token_weighting=confident` keep? (CPU)

    python -m sdpo_data.smollm2 --out-dir /tmp/smollm2
    python bench/learning/demo_confident_positions.py --model /tmp/smollm2 --prompts 32 \\
        --out bench/learning/results/demo_confident_positions.json

Samples n replies per addition prompt from the base model (T 1.0, the recipe's sampling), judges them with
`reward.addition.grade_reply` and builds every failed reply's teacher context with the trainer's own code (default
`RepromptConfig`, so a successful sibling's reply when there is one, else the feedback). For each response position of
the failed replies it scores the SAME tokens under the student (plain prompt) and the teacher (same weights, teacher
context), and reports per kind of position (the reply's first token, tokens holding a digit, the end-of-turn token,
the rest):
  - teacher_flatter: the fraction of positions with H_T > H_S (what `confident` drops);
  - entropy_gap: mean H_T − H_S;
  - token_logp_gap: mean log p_T(y_t) − log p_S(y_t) of the sampled token.
"""
from __future__ import annotations

import json
from collections import defaultdict
from statistics import mean

import torch

from reward.addition import grade_reply
from sdpo_attempts.valid import valid_record
from sdpo_data.addition_rows import addition_rows
from sdpo_ext.loss.logprobs import entropy, gather_logp
from sdpo_ext.teacher.reprompt import RepromptConfig, build_teacher_messages, render_prompt_ids, select_teacher_signals


def scored_positions(model, prompt_ids: list[int], response_ids: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    """(entropy [T], log p of the response token [T]) at each response position under ``model``."""
    ids = torch.tensor([prompt_ids + response_ids])
    with torch.no_grad():
        logits = model(ids).logits[0, len(prompt_ids) - 1:-1]
    return entropy(logits), gather_logp(logits, torch.tensor(response_ids)[:, None]).squeeze(-1)


def position_kind(index: int, token: str, end_id: int, token_id: int) -> str:
    if token_id == end_id:
        return "end_of_turn"
    if index == 0:
        return "first_token"
    return "digit" if any(c.isdigit() for c in token) else "other"


def main() -> None:
    from demo_teacher_signal import demo_arguments, load_demo_model
    from tqdm.auto import tqdm

    args = demo_arguments(__doc__, max_new_tokens=64)
    tok, model = load_demo_model(args.model, args.seed)
    cfg = RepromptConfig()
    stats: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for p, row in enumerate(tqdm(addition_rows(args.prompts, args.seed, "train"), desc="prompts")):
        messages, target = row["prompt"], int(row["reward_model"]["ground_truth"])
        prompt_ids = render_prompt_ids(tok, messages)
        with torch.no_grad():
            out = model.generate(torch.tensor([prompt_ids] * args.n), do_sample=True, temperature=1.0, top_p=1.0,
                                 top_k=0, max_new_tokens=args.max_new_tokens, pad_token_id=tok.pad_token_id)
        response_ids = [o[len(prompt_ids):].tolist() for o in out]
        response_ids = [r[: r.index(tok.eos_token_id) + 1] if tok.eos_token_id in r else r for r in response_ids]
        texts = [tok.decode(r, skip_special_tokens=True) for r in response_ids]
        verdicts = [grade_reply(t, target) for t in texts]
        signals = select_teacher_signals([p] * args.n, [v["score"] for v in verdicts], texts,
                                         [v["feedback"] for v in verdicts], [False] * args.n, cfg)
        for ids, verdict, signal in zip(response_ids, verdicts, signals):
            if valid_record(verdict) or not signal.active or not ids:
                continue
            teacher_ids = render_prompt_ids(tok, build_teacher_messages(messages, signal, cfg))
            h_s, lp_s = scored_positions(model, prompt_ids, ids)
            h_t, lp_t = scored_positions(model, teacher_ids, ids)
            signal_kind = "demonstration" if signal.demonstration is not None else "feedback"
            for t, token_id in enumerate(ids):
                kind = position_kind(t, tok.convert_ids_to_tokens(token_id), tok.eos_token_id, token_id)
                for key in (f"{signal_kind}/{kind}", f"{signal_kind}/all"):
                    stats[key]["flatter"].append(float(h_t[t] > h_s[t]))
                    stats[key]["entropy_gap"].append(float(h_t[t] - h_s[t]))
                    stats[key]["token_logp_gap"].append(float(lp_t[t] - lp_s[t]))
    summary = {"model": args.model, "prompts": args.prompts, "n": args.n, "seed": args.seed,
               "max_new_tokens": args.max_new_tokens, "positions": {}}
    for key in sorted(stats):
        s = stats[key]
        summary["positions"][key] = {"count": len(s["flatter"]), "teacher_flatter": round(mean(s["flatter"]), 3),
                                     "entropy_gap": round(mean(s["entropy_gap"]), 3),
                                     "token_logp_gap": round(mean(s["token_logp_gap"]), 3)}
    args.out.write_text(json.dumps(summary, indent=2))
    print(json.dumps(summary["positions"], indent=1))


if __name__ == "__main__":
    main()
