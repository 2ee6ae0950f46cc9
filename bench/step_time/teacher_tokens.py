"""What the packed shared-prefix teacher saves (issue 56): tokens and FLOPs of one step's teacher forwards, on CPU.

    python bench/step_time/teacher_tokens.py --tokenizer <the benchmark model's folder> \\
        --out bench/step_time/results/teacher_tokens_cpu.json

One step as the step-time benchmark shapes it (prep_cost.py: prompts of about 1,034 tokens, 8 prompts x 8 samples,
the first sample of 4 groups solved (no Lean feedback for it), real reply text, `whole` and `prover` sibling
solutions), teacher prompts from the driver's own code (`sdpo_ext.teacher_fields` with `share_prompt_prefix`) for
SDPO and SRPO. The update's micro-batches are verl's (`rearrange_micro_batches` over the student sequences, the packed
cap PACKED_TOKENS), either as verl balances them or with `force_group_size` g (what
`SDPOActorRolloutRefWorker.update_actor` sets with a shared prefix: g consecutive samples of a group kept in one
micro-batch, `shared_prefix.micro_batch_group`). Per micro-batch the teacher runs either every active
[teacher prompt | response] (`full`) or the row of `prefix_packing` (each distinct shared prefix once: `packed`).
With `--time-cpu`, the teacher forward of each length's first micro-batch (SDPO, whole; groups kept together) is
timed both ways on this CPU: a small Qwen3 (CPU_MODEL, random weights, fp32, `sdpa_varlen`), the LM head on every
64th response row only (the same rows both ways; all of them would cost the same both ways and take GBs here),
median of 3; on a shared CPU only the ratio means something. FLOPs at the Qwen3-1.7B shape
(make_step_time_inputs.py): per token 2 x the non-embedding linear weights, per attended key 4 x heads x head_dim per
layer, and the LM head on the response rows only (the same in both).
"""
from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import torch
from make_step_time_inputs import build_data
from prep_cost import FEEDBACK, PROMPTS, SAMPLES, SOLVED, corpus, replies
from solution_profile import PROFILE
from step_generate import chat_prompts
from step_phases import PACKED_TOKENS

from sdpo_ext.teacher.shared_prefix import micro_batch_group

# Qwen3-1.7B (make_step_time_inputs.py): 28 layers, hidden 2048, MLP 6144, 16 query and 8 KV heads of 128
LAYERS, HIDDEN, MLP, HEADS, KV_HEADS, HEAD_DIM, VOCAB = 28, 2048, 6144, 16, 8, 128, 151936
LINEAR_FLOPS = 2 * LAYERS * (HIDDEN * HEAD_DIM * (2 * HEADS + 2 * KV_HEADS) + 3 * HIDDEN * MLP)
KEY_FLOPS = 4 * LAYERS * HEADS * HEAD_DIM
HEAD_FLOPS = 2 * HIDDEN * VOCAB
CPU_MODEL = dict(vocab_size=49152, hidden_size=256, intermediate_size=768, num_hidden_layers=2, num_attention_heads=4,
                 num_key_value_heads=2, head_dim=64)


def step_fields(tokenizer, variant: str, messages, prompt_ids, response_ids) -> dict[str, torch.Tensor]:
    """The driver's SDPO fields of one step (teacher prompts, mask, shared prefix lengths)."""
    from sdpo_ext.config import SDPOConfig, SDPOTeacherConfig
    from sdpo_ext.judged import JudgedSample
    from sdpo_ext.teacher_fields import teacher_fields

    texts = tokenizer.batch_decode(response_ids, skip_special_tokens=True)
    solved = [i % SAMPLES == 0 and i // SAMPLES < SOLVED for i in range(len(texts))]
    samples = [JudgedSample(key=str(i), uid=i // SAMPLES, problem=str(i // SAMPLES), text=text,
                            response_tokens=len(ids), score=float(solved[i]), feedback=None if solved[i] else FEEDBACK)
               for i, (text, ids) in enumerate(zip(texts, response_ids))]
    cfg = SDPOConfig(variant=variant, teacher=SDPOTeacherConfig(share_prompt_prefix=True))
    fields, _ = teacher_fields(tokenizer, cfg, samples, messages=[messages[i // SAMPLES] for i in range(len(texts))],
                               prompts=[torch.tensor(prompt_ids[i // SAMPLES]) for i in range(len(texts))],
                               chat_template_kwargs={})
    return fields


def micro_batches(student_lengths: list[int], group: int) -> list[list[int]]:
    """verl's packed micro-batches of the student sequences (sample indices), `group` consecutive ones together."""
    from verl.utils import tensordict_utils as tu
    from verl.utils.seqlen_balancing import rearrange_micro_batches

    ids = torch.nested.as_nested_tensor([torch.zeros(n, dtype=torch.long) for n in student_lengths],
                                        layout=torch.jagged)
    _, indices = rearrange_micro_batches(tu.get_tensordict({"input_ids": ids}), PACKED_TOKENS,
                                         force_group_size=group)
    return [list(map(int, i)) for i in indices]


def attention_keys(spans: list[int], keys_before: list[int]) -> int:
    """Σ over query tokens of the keys each attends to (causal): q tokens after k earlier keys: q·k + q(q+1)/2."""
    return sum(q * k + q * (q + 1) // 2 for q, k in zip(spans, keys_before))


def teacher_cost(fields, responses: list[torch.Tensor], batches: list[list[int]]) -> dict:
    """Tokens through the teacher and its FLOPs, full and prefix-packed, summed over the micro-batches."""
    from sdpo_ext.teacher.shared_prefix import TEACHER_PREFIX_LEN, prefix_packing

    prompts, mask, shared = fields["teacher_prompt_ids"].unbind(), fields["sdpo_mask"], fields[TEACHER_PREFIX_LEN]
    out = {"full_tokens": 0, "packed_tokens": 0, "full_keys": 0, "packed_keys": 0, "response_rows": 0}
    for batch in batches:
        active = [i for i in batch if mask[i] > 0]
        if not active:
            continue
        lengths = [len(prompts[i]) + len(responses[i]) for i in active]
        out["full_tokens"] += sum(lengths)
        out["full_keys"] += attention_keys(lengths, [0] * len(lengths))
        packing = prefix_packing([prompts[i] for i in active], [responses[i] for i in active],
                                 [int(shared[i]) for i in active])
        spans = packing.cu_seqlens_q.diff().tolist()
        out["packed_tokens"] += sum(spans)
        before = [k - q for q, k in zip(spans, packing.cu_seqlens_k.diff().tolist())]
        out["packed_keys"] += attention_keys(spans, before)
        out["response_rows"] += len(packing.rows)
    head = out["response_rows"] * HEAD_FLOPS
    out["full_tflop"] = round((out["full_tokens"] * LINEAR_FLOPS + out["full_keys"] * KEY_FLOPS + head) / 1e12, 1)
    out["packed_tflop"] = round((out["packed_tokens"] * LINEAR_FLOPS + out["packed_keys"] * KEY_FLOPS + head) / 1e12, 1)
    out["packed_over_full_flops"] = round(out["packed_tflop"] / out["full_tflop"], 3)
    return out


def cpu_forward_seconds(fields, responses: list[torch.Tensor], batch: list[int], reps: int = 3) -> dict:
    """Median seconds of the teacher forward of one micro-batch on CPU_MODEL: every [teacher prompt | response]
    packed (`full`) and `prefix_packing`'s row (`packed`); the response-row logits agree (checked)."""
    import statistics
    import time

    from transformers import Qwen3Config, Qwen3ForCausalLM

    from sdpo_ext.attention.registry import register_attention
    from sdpo_ext.attention.varlen import ATTN_IMPLEMENTATION, KEY_SPANS, KeySpans
    from sdpo_ext.loss.packed_rows import response_logit_rows
    from sdpo_ext.teacher.shared_prefix import TEACHER_PREFIX_LEN, prefix_packing

    register_attention()
    torch.manual_seed(0)
    model = Qwen3ForCausalLM(Qwen3Config(**CPU_MODEL, attn_implementation=ATTN_IMPLEMENTATION)).eval()
    active = [i for i in batch if fields["sdpo_mask"][i] > 0]
    prompts = [fields["teacher_prompt_ids"].unbind()[i] for i in active]
    answers = [responses[i] for i in active]
    whole = [torch.cat([p, r]) for p, r in zip(prompts, answers)]
    packing = prefix_packing(prompts, answers, [int(fields[TEACHER_PREFIX_LEN][i]) for i in active])
    spans = KeySpans(packing.key_index, packing.cu_seqlens_q, packing.cu_seqlens_k,
                     int(packing.cu_seqlens_q.diff().max()), int(packing.cu_seqlens_k.diff().max()))
    runs = {
        "full": (torch.cat(whole), torch.cat([torch.arange(len(w)) for w in whole]),
                 response_logit_rows(torch.tensor([len(w) for w in whole]),
                                     torch.tensor([len(r) for r in answers]))[::64], {}),
        "packed": (torch.cat(packing.spans),
                   torch.cat([torch.arange(p, p + len(s)) for s, p in zip(packing.spans, packing.starts)]),
                   packing.rows[::64], {KEY_SPANS: spans}),
    }
    seconds, logits = {}, {}
    for name, (ids, positions, rows, extra) in runs.items():
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            with torch.no_grad():
                logits[name] = model(input_ids=ids[None], position_ids=positions[None], use_cache=False,
                                     logits_to_keep=rows, **extra).logits[0]
            times.append(time.perf_counter() - t0)
        seconds[name] = round(statistics.median(times), 3)
    gap = (logits["full"] - logits["packed"]).abs().max().item()
    return {"tokens": {k: len(v[0]) for k, v in runs.items()}, "seconds": seconds,
            "packed_over_full_seconds": round(seconds["packed"] / seconds["full"], 3), "max_logit_gap": gap}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokenizer", type=Path, required=True)
    parser.add_argument("--lengths", type=int, nargs="+", default=[2048, 8192])
    parser.add_argument("--time-cpu", action="store_true", help="also time one micro-batch's forward on this CPU")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(args.tokenizer)
    with tempfile.TemporaryDirectory() as data_dir:
        build_data(Path(data_dir), args.tokenizer, prompt_tokens=1024, n_rows=PROMPTS)
        prompt_ids, messages, _ = chat_prompts(Path(data_dir), args.tokenizer, PROMPTS)
    text, stated = corpus(None), json.loads(PROFILE.read_text())["tokens"]
    result = {"command": f"python bench/step_time/teacher_tokens.py --tokenizer {args.tokenizer} --lengths "
                         f"{' '.join(map(str, args.lengths))}{' --time-cpu' if args.time_cpu else ''} --out {args.out}",
              "packed_tokens_cap": PACKED_TOKENS, "samples": PROMPTS * SAMPLES, "solved_groups": SOLVED, "cases": {}}
    for length in args.lengths:
        for case, solution in (("whole", None), ("prover", stated)):
            response_ids = replies(tokenizer, text, length, solution)
            responses = [torch.tensor(r) for r in response_ids]
            student = [len(prompt_ids[i // SAMPLES]) + len(r) for i, r in enumerate(response_ids)]
            group = micro_batch_group(student, SAMPLES, PACKED_TOKENS)
            for variant in ("sdpo", "srpo"):
                fields = step_fields(tokenizer, variant, messages, prompt_ids, response_ids)
                row = {"verl_micro_batches": teacher_cost(fields, responses, micro_batches(student, 1)),
                       f"groups_of_{group}": teacher_cost(fields, responses, micro_batches(student, group))}
                row["micro_batches"] = {"verl": len(micro_batches(student, 1)), f"groups_of_{group}":
                                        len(micro_batches(student, group))}
                if args.time_cpu and variant == "sdpo" and case == "whole":
                    row["cpu_forward"] = cpu_forward_seconds(fields, responses, micro_batches(student, group)[0])
                result["cases"][f"{variant}_{case}_r{length}"] = row
                print(variant, case, length, json.dumps(row), flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
