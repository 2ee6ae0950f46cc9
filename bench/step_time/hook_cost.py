"""What the SDPO loss hook costs per micro-batch beyond the model: its per-token pass (top-K, gathers, entropies,
per-token log-probs) and that pass's backward, on random logits of one sample, teacher logits given.

    python bench/step_time/hook_cost.py --prompt 256 --response 512 --reps 3       # CPU: a scaled-down one-sample batch
    python bench/step_time/hook_cost.py --prompt 1034 --response 2048 --reps 10   # the 2K benchmark's micro-batch (GPU)
    python bench/step_time/hook_cost.py --prompt 1034 --response 8192 --reps 5 --breakdown   # + each part timed alone

Prints the mean wall time per micro-batch (CUDA-synchronised on a GPU) and, with --out, writes it as JSON with the
shape, device and git commit. --breakdown adds each part of the pass timed alone on the same inputs (the parts
overlap a little: a part's backward is its forward-and-backward time minus its forward time). Timing only: the
teacher's logits are made before the clock starts, so the teacher's forward is not in the figure
(bench/step_time/step_phases.py measures it).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import time
from pathlib import Path

import torch
from verl.utils import tensordict_utils as tu
from verl.workers.config import PolicyLossConfig

from sdpo_ext.config import SDPOActorConfig, SDPOConfig
from sdpo_ext.loss.divergence import divergence
from sdpo_ext.loss.logprobs import gather_logp, softmax_stats, student_topk, token_log_probs
from sdpo_ext.loss_hook import SOFTMAX_CHUNK_ROWS, SDPOLoss, verl_log_probs_in_fp32

QWEN3_VOCAB = 151_936
REPO = Path(__file__).resolve().parents[2]


def one_sample_batch(prompt: int, response: int, vocab: int, device: torch.device):
    """(micro-batch as verl's engine hands it to the hook, student logits [1, P+R, V] bf16, teacher logits [R, V])."""
    g = torch.Generator().manual_seed(0)
    prompt_ids = torch.randint(0, vocab, (prompt,), generator=g)
    response_ids = torch.randint(0, vocab, (response,), generator=g)

    def nested(t: torch.Tensor) -> torch.Tensor:
        return torch.nested.as_nested_tensor([t.to(device)], layout=torch.jagged)

    data = tu.get_tensordict({
        "input_ids": nested(torch.cat([prompt_ids, response_ids])),
        "prompts": nested(prompt_ids),
        "responses": nested(response_ids),
        "sdpo_mask": torch.ones(1, device=device),
    })
    tu.assign_non_tensor(data, distillation_only=True)
    student = (3 * torch.randn(prompt + response, vocab, generator=g)).to(device, torch.bfloat16)
    teacher = (3 * torch.randn(response, vocab, generator=g)).to(device, torch.bfloat16)
    return data, student, teacher


def time_hook(prompt: int, response: int, vocab: int, topk: int, reps: int, device: torch.device) -> list[float]:
    """Seconds per call of the hook's per-token pass plus the backward of its divergence and log-probs, after one
    warm-up call."""
    data, student, teacher = one_sample_batch(prompt, response, vocab, device)
    config = SDPOActorConfig(ppo_mini_batch_size=1, ppo_micro_batch_size_per_gpu=1, rollout_n=1,
                             policy_loss=PolicyLossConfig(loss_mode="sdpo"), sdpo=SDPOConfig(topk=topk))
    hook = SDPOLoss(config, lambda d, active: teacher)

    def run(logits: torch.Tensor) -> None:
        out = hook(student_logits=logits.unsqueeze(0), data=data)
        (out["sdpo_divergence"].sum() + out["log_probs"].sum()).backward()

    return _seconds_per_call(run, reps, device, setup=lambda: student.clone().requires_grad_(True))


def _seconds_per_call(run, reps: int, device: torch.device, setup=lambda: None) -> list[float]:
    """Seconds of each of `reps` calls `run(setup())` after one warm-up call, synchronised on a GPU; `setup` (a fresh
    input, say) runs before the clock starts."""
    seconds = []
    for _ in range(reps + 1):
        arg = setup()
        if device.type == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        run(arg)
        if device.type == "cuda":
            torch.cuda.synchronize()
        seconds.append(time.perf_counter() - start)
    return seconds[1:]


def time_parts(prompt: int, response: int, vocab: int, topk: int, reps: int, device: torch.device) -> dict[str, float]:
    """Milliseconds of each part of the hook's pass (sdpo_ext.loss_hook.SDPOLoss._divergence and _log_probs, in the
    top-K mode the recipes use), each timed alone on one sample's response rows."""
    data, student, teacher = one_sample_batch(prompt, response, vocab, device)
    rows = student[prompt - 1:prompt + response - 1]              # the rows predicting the response
    labels = data["responses"].values()[:, None]
    every_label = torch.roll(data["input_ids"].values(), shifts=-1)
    fp32, chunk = verl_log_probs_in_fp32(), SOFTMAX_CHUNK_ROWS
    teacher_lse, _ = softmax_stats(teacher, chunk)
    student_lse, _ = softmax_stats(rows, chunk)
    _, ids = student_topk(rows, topk, chunk_rows=chunk, log_normalizer=student_lse)

    def distil(backward: bool) -> None:
        leaf = rows.detach().requires_grad_(backward)
        student_logp, top = student_topk(leaf, topk, chunk_rows=chunk, log_normalizer=student_lse)
        teacher_logp = gather_logp(teacher, top, chunk_rows=chunk, log_normalizer=teacher_lse)
        div = divergence(student_logp, teacher_logp, 0.5, add_tail=True)
        if backward:
            div.sum().backward()

    def log_probs(backward: bool) -> None:
        leaf = student.detach().requires_grad_(backward)
        out = token_log_probs(leaf, every_label, fp32=fp32, chunk_rows=chunk)
        if backward:
            out.sum().backward()

    parts = {
        "student softmax_stats (lse, entropy)": lambda: softmax_stats(rows, chunk),
        "teacher softmax_stats (lse, entropy)": lambda: softmax_stats(teacher, chunk),
        "teacher log-prob of the sampled token": lambda: gather_logp(teacher, labels, chunk_rows=chunk,
                                                                     log_normalizer=teacher_lse),
        "student top-K ids alone (torch.topk)": lambda: [torch.topk(rows[i:i + chunk], topk, dim=-1)
                                                         for i in range(0, rows.shape[0], chunk)],
        "teacher gather at the top-K ids": lambda: gather_logp(teacher, ids, chunk_rows=chunk,
                                                               log_normalizer=teacher_lse),
        "distillation forward (top-K, gathers, divergence)": lambda: distil(False),
        "distillation forward + backward": lambda: distil(True),
        "per-token log-probs forward (every row)": lambda: log_probs(False),
        "per-token log-probs forward + backward": lambda: log_probs(True),
    }
    return {name: round(1e3 * sum(_seconds_per_call(lambda _: run(), reps, device)) / reps, 2)
            for name, run in parts.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prompt", type=int, default=256)
    parser.add_argument("--response", type=int, default=512)
    parser.add_argument("--vocab", type=int, default=QWEN3_VOCAB)
    parser.add_argument("--topk", type=int, default=100)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--breakdown", action="store_true", help="also time each part of the pass alone")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    seconds = time_hook(args.prompt, args.response, args.vocab, args.topk, args.reps, device)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=REPO).stdout.strip()
    if subprocess.run(["git", "diff", "--quiet", "HEAD", "--", "sdpo_ext"], cwd=REPO).returncode:
        commit += " + uncommitted changes to sdpo_ext"
    result = {
        "device": torch.cuda.get_device_name() if device.type == "cuda" else f"cpu ({torch.get_num_threads()} threads)",
        "commit": commit, "prompt": args.prompt, "response": args.response, "vocab": args.vocab, "topk": args.topk,
        "chunk_rows": SOFTMAX_CHUNK_ROWS, "log_probs_fp32": verl_log_probs_in_fp32(),
        "ms_per_micro_batch": [round(1e3 * s, 1) for s in seconds],
        "mean_ms": round(1e3 * sum(seconds) / len(seconds), 1),
    }
    if args.breakdown:
        result["parts_ms"] = time_parts(args.prompt, args.response, args.vocab, args.topk, args.reps, device)
    print(json.dumps(result))
    if args.out:
        args.out.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
