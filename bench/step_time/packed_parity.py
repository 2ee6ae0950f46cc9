"""Packed-sequence parity of an attention implementation at a real model shape (issue 30), on the GPU machine.

    python bench/step_time/packed_parity.py --attention fa4_varlen --shape qwen3_1p7b \\
        --out $OUT/packed_parity_fa4.json

A random-weight model of the shape (`SHAPES`) computes several sequences of different lengths two ways:
- packed: one row [1, T] with positions restarting at 0 per sequence and no mask, as verl's remove-padding forward
  calls the model, under `--attention`;
- alone: each sequence in its own forward under torch's `sdpa` (plain causal attention: the reference).
Loss = mean over every token of -log p(next token), so the gradients of both ways are those of the same function.
Reported: the largest logit gap (and relative to the largest logit), the largest gradient gap relative to the
largest gradient entry, the same two for `sdpa` packed against alone (transformers' block-diagonal mask: the
numerical floor of two correct computations in the model's dtype), the first packed call's seconds (flash-attn-4
JIT-compiles its kernels there) and the next calls', and the peak device memory of each way.

With `--shared-prefix P` (issue 56) it checks and times the packed shared-prefix teacher instead, forward only as
the teacher runs: `--samples` sequences [the same P tokens | one token of its own | `--response` tokens], the
response-row logits (LM head on those rows only) of `prefix_packing`'s row (the prefix once, `KEY_SPANS`) against
the same rows of the row the teacher packs today (every sequence whole) under `--attention`, and each sequence alone
under `sdpa`; seconds per forward both ways (the first call compiles).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

SHAPES = {
    # Qwen3-1.7B (Kimina-Prover-RL-1.7B's architecture): config.json of Qwen/Qwen3-1.7B
    "qwen3_1p7b": dict(vocab_size=151936, hidden_size=2048, intermediate_size=6144, num_hidden_layers=28,
                       num_attention_heads=16, num_key_value_heads=8, head_dim=128, max_position_embeddings=40960,
                       tie_word_embeddings=True, rope_theta=1000000.0),
    "tiny": dict(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                 num_key_value_heads=2, head_dim=16, max_position_embeddings=4096, tie_word_embeddings=True),
}


def _sync(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def _peak_gb(device: str) -> float | None:
    return round(torch.cuda.max_memory_allocated() / 2**30, 2) if device == "cuda" else None


def _reset_peak(device: str) -> None:
    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()


def _next_token_loss(logits: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    """Summed -log p(next token) over one sequence's rows but its last: logits [L, V], ids [L]."""
    return torch.nn.functional.cross_entropy(logits[:-1].float(), ids[1:], reduction="sum")


def run_packed(model, sequences: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    ids = torch.cat(sequences)[None]
    positions = torch.cat([torch.arange(len(s), device=ids.device) for s in sequences])[None]
    logits = model(input_ids=ids, position_ids=positions, attention_mask=None, use_cache=False).logits[0]
    parts = torch.split(logits, [len(s) for s in sequences])
    loss = sum(_next_token_loss(p, s) for p, s in zip(parts, sequences)) / sum(len(s) - 1 for s in sequences)
    return logits, loss


def run_alone(model, sequences: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    logits, total = [], 0.0
    for s in sequences:
        out = model(input_ids=s[None], use_cache=False).logits[0]
        total = total + _next_token_loss(out, s)
        logits.append(out)
    return torch.cat(logits), total / sum(len(s) - 1 for s in sequences)


def forward_backward(model, fn, sequences) -> tuple[torch.Tensor, dict[str, torch.Tensor], float, float]:
    """(logits, parameter gradients, loss, seconds) of one forward and backward."""
    model.zero_grad(set_to_none=True)
    start = time.perf_counter()
    logits, loss = fn(model, sequences)
    loss.backward()
    grads = {n: p.grad.detach().float().clone() for n, p in model.named_parameters() if p.grad is not None}
    return logits.detach().float(), grads, loss.item(), time.perf_counter() - start


def gaps(logits_a, grads_a, logits_b, grads_b) -> dict[str, float]:
    logit_gap = (logits_a - logits_b).abs().max().item()
    grad_size = max(g.abs().max().item() for g in grads_b.values())
    grad_gap = max((grads_a[n] - grads_b[n]).abs().max().item() for n in grads_b)
    return {"logit_max_abs": logit_gap, "logit_max_abs_over_max_logit": logit_gap / logits_b.abs().max().item(),
            "grad_max_abs_over_max_grad": grad_gap / grad_size}


def measure(attention: str, shape: str, lengths: list[int], device: str, dtype: torch.dtype, repeats: int) -> dict:
    from transformers import Qwen3Config, Qwen3ForCausalLM

    from sdpo_ext.attention.registry import register_attention

    register_attention()  # sdpa_varlen and fa4_varlen, as `import verl` does in verl's workers (needs no verl)

    torch.manual_seed(0)
    model = Qwen3ForCausalLM(Qwen3Config(**SHAPES[shape], attn_implementation="sdpa")).to(device, dtype)
    g = torch.Generator().manual_seed(0)
    sequences = [torch.randint(0, SHAPES[shape]["vocab_size"], (n,), generator=g).to(device) for n in lengths]

    def timed(impl: str, fn) -> tuple:
        model.set_attn_implementation(impl)
        _reset_peak(device)
        runs = []
        for _ in range(repeats):
            runs.append(forward_backward(model, fn, sequences))
            _sync(device)
        logits, grads, loss, _ = runs[-1]
        return logits, grads, loss, [round(r[3], 3) for r in runs], _peak_gb(device)

    ref_logits, ref_grads, ref_loss, ref_s, ref_peak = timed("sdpa", run_alone)
    logits, grads, loss, packed_s, packed_peak = timed(attention, run_packed)
    floor_logits, floor_grads, _, floor_s, floor_peak = timed("sdpa", run_packed)
    return {
        "attention": attention, "shape": shape, "dtype": str(dtype).removeprefix("torch."), "device": device,
        "device_name": torch.cuda.get_device_name() if device == "cuda" else "cpu", "lengths": lengths,
        "loss": {"packed": loss, "alone": ref_loss},
        "packed_vs_alone": gaps(logits, grads, ref_logits, ref_grads),
        "sdpa_packed_vs_alone_floor": gaps(floor_logits, floor_grads, ref_logits, ref_grads),
        "seconds_per_forward_backward": {"packed": packed_s, "alone_sdpa": ref_s, "packed_sdpa": floor_s},
        "first_call_s": packed_s[0],
        "peak_allocated_gb": {"packed": packed_peak, "alone_sdpa": ref_peak, "packed_sdpa": floor_peak},
    }


def measure_shared_prefix(attention: str, shape: str, prefix: int, samples: int, response: int, device: str,
                          dtype: torch.dtype, repeats: int) -> dict:
    """Logit gaps and forward seconds of the shared-prefix row against the whole row (module docstring)."""
    from transformers import Qwen3Config, Qwen3ForCausalLM

    from sdpo_ext.attention.registry import register_attention
    from sdpo_ext.attention.varlen import KEY_SPANS, KeySpans
    from sdpo_ext.loss.packed_rows import response_logit_rows
    from sdpo_ext.teacher.shared_prefix import prefix_packing

    register_attention()
    torch.manual_seed(0)
    model = Qwen3ForCausalLM(Qwen3Config(**SHAPES[shape], attn_implementation=attention)).to(device, dtype).eval()
    g = torch.Generator().manual_seed(0)
    draw = lambda n: torch.randint(0, SHAPES[shape]["vocab_size"], (n,), generator=g).to(device)  # noqa: E731
    head = draw(prefix)
    prompts = [torch.cat([head, draw(1)]) for _ in range(samples)]
    responses = [draw(response) for _ in range(samples)]
    whole = [torch.cat([p, r]) for p, r in zip(prompts, responses)]
    packing = prefix_packing(prompts, responses, [prefix] * samples)
    spans = KeySpans(packing.key_index, packing.cu_seqlens_q, packing.cu_seqlens_k,
                     int(packing.cu_seqlens_q.diff().max()), int(packing.cu_seqlens_k.diff().max())).to(device)
    ways = {
        "whole": (torch.cat(whole), torch.cat([torch.arange(len(w)) for w in whole]),
                  response_logit_rows(torch.tensor([len(w) for w in whole]), torch.tensor([response] * samples)), {}),
        "shared_prefix": (torch.cat(packing.spans),
                          torch.cat([torch.arange(p, p + len(t)) for t, p in zip(packing.spans, packing.starts)]),
                          packing.rows, {KEY_SPANS: spans}),
    }
    logits, seconds, peak = {}, {}, {}
    with torch.no_grad():
        for name, (ids, positions, rows, extra) in ways.items():
            _reset_peak(device)
            seconds[name] = []
            for _ in range(repeats):
                _sync(device)
                start = time.perf_counter()
                logits[name] = model(input_ids=ids[None], position_ids=positions.to(device)[None],
                                     use_cache=False, logits_to_keep=rows.to(device), **extra).logits[0]
                _sync(device)
                seconds[name].append(round(time.perf_counter() - start, 3))
            peak[name] = _peak_gb(device)
        model.set_attn_implementation("sdpa")
        alone = torch.cat([model(input_ids=w[None], use_cache=False).logits[0, len(p) - 1:-1]
                           for w, p in zip(whole, prompts)])
    gap = lambda a, b: (a.float() - b.float()).abs().max().item()  # noqa: E731
    return {
        "attention": attention, "shape": shape, "dtype": str(dtype).removeprefix("torch."), "device": device,
        "device_name": torch.cuda.get_device_name() if device == "cuda" else "cpu",
        "shared_prefix": prefix, "samples": samples, "response": response,
        "tokens": {name: len(way[0]) for name, way in ways.items()},
        "logit_max_abs": {"shared_prefix_vs_whole": gap(logits["shared_prefix"], logits["whole"]),
                          "shared_prefix_vs_alone_sdpa": gap(logits["shared_prefix"], alone),
                          "whole_vs_alone_sdpa_floor": gap(logits["whole"], alone)},
        "max_logit": alone.float().abs().max().item(),
        "seconds_per_forward": seconds, "peak_allocated_gb": peak,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--attention", required=True,
                        help="fa4_varlen, flash_attention_2, flash_attention_4, sdpa_varlen, sdpa")
    parser.add_argument("--shape", choices=sorted(SHAPES), default="qwen3_1p7b")
    parser.add_argument("--lengths", type=int, nargs="+", default=[2300, 900, 3100, 1500],
                        help="tokens per packed sequence (default: about the 2K-reply rows of the step benchmark)")
    parser.add_argument("--dtype", choices=["bfloat16", "float32"], default="bfloat16")
    parser.add_argument("--repeats", type=int, default=3, help="forward+backward passes per way (the first compiles)")
    parser.add_argument("--shared-prefix", type=int, default=None,
                        help="check the shared-prefix teacher instead, with a prefix of this many tokens")
    parser.add_argument("--samples", type=int, default=7, help="with --shared-prefix: sequences sharing it")
    parser.add_argument("--response", type=int, default=2048, help="with --shared-prefix: response tokens each")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    if args.repeats < 2:
        parser.error("--repeats: at least 2 (the first call includes any kernel compilation)")
    device = "cuda" if torch.cuda.is_available() else "cpu"
    dtype = getattr(torch, args.dtype)
    if args.shared_prefix is not None:
        result = measure_shared_prefix(args.attention, args.shape, args.shared_prefix, args.samples, args.response,
                                       device, dtype, args.repeats)
        shown = ("tokens", "logit_max_abs", "seconds_per_forward", "peak_allocated_gb")
    else:
        result = measure(args.attention, args.shape, args.lengths, device, dtype, args.repeats)
        shown = ("packed_vs_alone", "sdpa_packed_vs_alone_floor", "first_call_s", "seconds_per_forward_backward",
                 "peak_allocated_gb")
    result["call"] = " ".join(sys.argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1))
    print(json.dumps({k: result[k] for k in shown}))


if __name__ == "__main__":
    main()
