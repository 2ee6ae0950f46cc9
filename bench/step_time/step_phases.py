"""Training phases of the step-time benchmark (issue 18), one algorithm per process, on the GPU machine.

    python bench/step_time/step_phases.py --algo sdpo --rollouts $OUT/rollouts.pt --model-dir /tmp/qwen3_1p7b_random \\
        --lengths 2048 8192 --iters 3 2 --out $OUT/phases_sdpo.json

The worker is ours (sdpo_ext.worker.SDPOActorRolloutRefWorker, verl's ActorRolloutRefWorker plus the SDPO teacher),
built in this process from the algorithm's kimina recipe, and driven the way verl's TransferQueue trainer drives it each
step: old log-probs (`compute_log_prob`), GRPO advantages, for the SDPO family the driver's teacher prompts
(`sdpo_ext.trainer.SDPOTrainer._teacher_fields`'s code), the actor update (`update_actor`) and the EMA teacher update.
The batch is bench/step_time/step_generate.py's rollout, so every algorithm trains on the same tokens. No Ray and no
vLLM start here: a full verl run spends about 250 s starting, which is what made six full runs (three algorithms, two
lengths) not fit one 30-minute GPU session.

Outcomes: random weights never prove anything, so `--solved-groups` groups get one correct sample each (sample 0;
the others keep the screen's real feedback on their text). With the default 4 of 8, SDPO distils 60 of 64 samples
(7 with the sibling's solution in each solved group, 8 with feedback in each unsolved one) and SRPO 28.

Configuration (every algorithm): the recipe, plus either `FAST` (one sequence per micro-batch with padding removed,
torch's SDPA with its causal flash kernel and no mask: the issue-18 figures) or, with `--attention`, the path users
run (`packed`): dynamic batch size, up to PACKED_TOKENS tokens packed per micro-batch, kept apart by that attention
(fa4_varlen on the H200, which has no flash-attn 2 build; transformers' flash_attention_4 fails there when
packed). `grpo_fused` adds verl's fused log-prob kernels, which the SDPO family cannot use (its loss reads the
logits), with verl's default torch implementation;
`grpo_fused_triton` with its triton one. `sdpo_shared_prefix` and `srpo_shared_prefix` compute each group's shared
teacher-prompt prefix once (sdpo_ext.teacher.shared_prefix; packed: in the teacher's one forward, each prefix once in
its row, with a group's samples kept in one micro-batch as far as the token cap allows).
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import time
from pathlib import Path

ALGOS: dict[str, tuple[str, tuple[str, ...]]] = {
    "grpo": ("grpo_kimina_1_7b", ()),
    "grpo_fused": ("grpo_kimina_1_7b", ("actor_rollout_ref.model.use_fused_kernels=true",)),
    "grpo_fused_triton": ("grpo_kimina_1_7b", ("actor_rollout_ref.model.use_fused_kernels=true",
                                               "actor_rollout_ref.model.fused_kernel_options.impl_backend=triton")),
    "sdpo": ("sdpo_kimina_1_7b", ()),
    "sdpo_shared_prefix": ("sdpo_kimina_1_7b", ("actor_rollout_ref.actor.sdpo.teacher.share_prompt_prefix=true",)),
    "srpo": ("srpo_kimina_1_7b", ()),
    "srpo_shared_prefix": ("srpo_kimina_1_7b", ("actor_rollout_ref.actor.sdpo.teacher.share_prompt_prefix=true",)),
}
FAST = (  # padding removed: the kimina recipes' setting
    "+actor_rollout_ref.model.override_config.attn_implementation=sdpa",
    "actor_rollout_ref.actor.use_dynamic_bsz=false",
    "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1",
    "actor_rollout_ref.rollout.log_prob_use_dynamic_bsz=false",
    "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1",
    "actor_rollout_ref.ref.log_prob_use_dynamic_bsz=false",
    "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=1",
)


PACKED_TOKENS = 26624  # the Kimina 1.7B recipe's dynamic-batch cap at its own budget (2048 prompt + 24576 new tokens)


def packed(attention: str, tokens: int = PACKED_TOKENS) -> tuple[str, ...]:
    """The path users run: padding removed, dynamic batch size, several sequences packed per micro-batch up to
    `tokens`, kept apart by `attention` (fa4_varlen on the H200; sdpa_varlen on CPU)."""
    return (
        f"+actor_rollout_ref.model.override_config.attn_implementation={attention}",
        "actor_rollout_ref.actor.use_dynamic_bsz=true",
        f"actor_rollout_ref.actor.ppo_max_token_len_per_gpu={tokens}",
        "actor_rollout_ref.rollout.log_prob_use_dynamic_bsz=true",
        f"actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu={tokens}",
        "actor_rollout_ref.ref.log_prob_use_dynamic_bsz=true",
        f"actor_rollout_ref.ref.log_prob_max_token_len_per_gpu={tokens}",
    )


def overrides(algo: str, model_dir: Path, prompts: int, n: int, max_response: int,
              attention: str | None = None) -> list[str]:
    """Hydra overrides of one algorithm's run: its recipe, FAST (or `packed(attention)`), and the benchmark's shape."""
    recipe, extra = ALGOS[algo]
    settings = packed(attention) if attention else FAST
    return [f"+recipe={recipe}", *extra, *settings, f"actor_rollout_ref.model.path={model_dir}",
            "data.max_prompt_length=1100", f"data.max_response_length={max_response}",
            f"data.train_batch_size={prompts}", f"sdpo.full_batch_size={prompts}", f"actor_rollout_ref.rollout.n={n}",
            "trainer.n_gpus_per_node=1"]


def compose_config(args_overrides: list[str]):
    from omegaconf import OmegaConf

    from sdpo_ext.startup.compose import compose_ppo

    cfg = compose_ppo(args_overrides)
    OmegaConf.resolve(cfg)
    return cfg


_START = time.monotonic()


def progress(message: str) -> None:
    """A line with the seconds since this process started (start-up is not part of any measured phase)."""
    print(f"[{time.monotonic() - _START:7.1f} s] {message}", flush=True)


def single_process_env() -> None:
    """What a verl Worker reads from the environment Ray would give it: one rank on one GPU."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    for key, value in {"RANK": "0", "WORLD_SIZE": "1", "LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "1",
                       "RAY_LOCAL_WORLD_SIZE": "1", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)}.items():
        os.environ.setdefault(key, value)


def profile_step(batch, worker, sdpo_enabled: bool, path: Path) -> None:
    """One more step (not in the timings) under torch's profiler: its wall seconds per phase, then the 40 costliest
    kernels by device time (operators by CPU time without a GPU), to `path`. GPU kernels only: with CPU operators
    too, the 2K step of the first 2026-12-04 job had not written its table after 7 minutes."""
    import torch
    from profile_summary import PHASE_LINE
    from torch.profiler import ProfilerActivity, profile

    on_gpu = torch.cuda.is_available()
    with profile(activities=[ProfilerActivity.CUDA] if on_gpu else [ProfilerActivity.CPU]) as prof:
        phases, _ = batch.step(worker, sdpo_enabled=sdpo_enabled)
    sort_by = "self_cuda_time_total" if on_gpu else "self_cpu_time_total"
    wall = PHASE_LINE + ", ".join(f"{k} {v:.3f}" for k, v in phases.items())
    path.write_text(wall + "\n" + prof.key_averages().table(sort_by=sort_by, row_limit=40, max_name_column_width=60))


def alloc_retries(device) -> int:
    """How often the caching allocator has freed its cache and retried an allocation (each one a device sync)."""
    return int(device.memory_stats().get("num_alloc_retries", 0))


def measure(algo: str, cfg, rollouts: dict, lengths: list[int], iters: list[int], solved_groups: int,
            out: Path, header: dict, profile_lengths: tuple[int, ...] = ()) -> None:
    """Writes `out` after every step, so a run cut short keeps the steps it finished; for each length in
    `profile_lengths`, then a profiled step (`profile_step`) to <out stem>_r<length>.txt."""
    from step_batch import StepBatch
    from verl.utils.device import get_torch_device

    from sdpo_ext.worker import SDPOActorRolloutRefWorker

    sdpo_enabled = algo.startswith(("sdpo", "srpo"))
    role = "actor_rollout_ref" if sdpo_enabled else "actor_rollout"
    t0 = time.perf_counter()
    worker = SDPOActorRolloutRefWorker(config=cfg.actor_rollout_ref, role=role)
    worker.init_model()
    progress("worker ready")
    result = {**header, "algo": algo, "role": role, "init_s": round(time.perf_counter() - t0, 1), "lengths": {}}
    for length, steps in zip(lengths, iters):
        rollout = rollouts["lengths"][length]
        batch = StepBatch.from_rollout(cfg, rollouts["prompt_ids"], rollouts["messages"], rollouts["ground_truths"],
                                       rollout["response_ids"], rollout["finish_reasons"], solved_groups)
        progress(f"r{length} batch built")
        runs: list[dict] = []
        result["lengths"][length] = {"iterations": runs, **batch.shape()}
        for it in range(steps):
            device = get_torch_device()
            device.reset_peak_memory_stats()
            retries = alloc_retries(device)
            phases, metrics = batch.step(worker, sdpo_enabled=sdpo_enabled)
            phases["alloc_retries"] = alloc_retries(device) - retries
            phases["peak_allocated_gb"] = round(device.max_memory_allocated() / 2**30, 2)
            phases["peak_reserved_gb"] = round(device.max_memory_reserved() / 2**30, 2)
            runs.append(phases)
            result["lengths"][length]["metrics"] = metrics
            out.write_text(json.dumps(result, indent=1))
            print(f"{algo} r{length} iter {it + 1}/{steps}: " + ", ".join(f"{k} {v}" for k, v in phases.items()),
                  flush=True)
        if length in profile_lengths:
            profile_step(batch, worker, sdpo_enabled, out.with_name(f"{out.stem}_r{length}.txt"))
            progress(f"r{length} profiled")


def finished(out: Path, lengths: list[int], iters: list[int]) -> bool:
    """Whether `out` holds every step of every length (a job that spans device calls skips such a run)."""
    try:
        run = json.loads(out.read_text())
    except (OSError, ValueError):
        return False
    return all(len(run["lengths"].get(str(n), {}).get("iterations", [])) >= k for n, k in zip(lengths, iters))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--finished", type=Path, metavar="OUT",
                        help="only say (exit 0 or 1) whether OUT holds every step of --lengths x --iters")
    parser.add_argument("--algo", choices=sorted(ALGOS))
    parser.add_argument("--rollouts", type=Path, help="bench/step_time/step_generate.py's output")
    parser.add_argument("--model-dir", type=Path)
    parser.add_argument("--lengths", type=int, nargs="+", required=True)
    parser.add_argument("--iters", type=int, nargs="+", default=[3],
                        help="steps per length (one value: the same for all); the first is warm-up")
    parser.add_argument("--solved-groups", type=int, default=4, help="groups with one correct sample")
    parser.add_argument("--profile-only", action="store_true",
                        help="per length, one warm-up step, then one profiled step to <out stem>_r<length>.txt "
                             "(--iters is ignored)")
    parser.add_argument("--attention", default=None,
                        help="pack sequences (dynamic batch size, PACKED_TOKENS per micro-batch) with this "
                             "attn_implementation (fa4_varlen, sdpa_varlen, sdpa); default: FAST")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    iters = args.iters * len(args.lengths) if len(args.iters) == 1 else args.iters
    if args.finished:
        raise SystemExit(0 if finished(args.finished, args.lengths, iters) else 1)
    missing = [f"--{k.replace('_', '-')}" for k in ("algo", "rollouts", "model_dir", "out") if getattr(args, k) is None]
    if missing:
        parser.error(f"the following arguments are required: {', '.join(missing)}")

    import torch

    profile_lengths: tuple[int, ...] = ()
    if args.profile_only:
        iters, profile_lengths = [1] * len(args.lengths), tuple(args.lengths)
    elif len(iters) != len(args.lengths) or min(iters) < 2:
        parser.error("--iters: one value, or one per length; at least 2 (the first step is warm-up)")
    progress("imports done")
    rollouts = torch.load(args.rollouts, weights_only=False)
    prompts, samples = len(rollouts["prompt_ids"]), len(rollouts["lengths"][args.lengths[0]]["response_ids"])
    cfg_overrides = overrides(args.algo, args.model_dir, prompts, samples // prompts, max(args.lengths),
                              args.attention)
    cfg = compose_config(cfg_overrides)
    progress("config composed")
    single_process_env()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    measure(args.algo, cfg, rollouts, args.lengths, iters, args.solved_groups, args.out,
            {"overrides": cfg_overrides, "solved_groups": args.solved_groups, "attention": args.attention,
             "packed_tokens": PACKED_TOKENS if args.attention else None}, profile_lengths)


if __name__ == "__main__":
    main()
