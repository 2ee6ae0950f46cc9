"""The discovery job on one GPU: problem choice, the sampler baselines and the verl runs side by side, resume, pack.

    python -m sdpo_eval.discovery run --task demo --methods best_of_k,reprompt,grpo,sdpo --seeds 1,2,3,4 \\
        --budget 64 --problems a,b,... --choose 16 --out-dir DIR [-- hydra overrides for every run]

1. Problems (DIR/problems.txt; a job started again reads it): `--problems`, plus `--choose` more with at most
   `--max-rate` success in `--base-samples` base samples (0: none), rarest first, among the task's `--candidates`
   hardest (`problems.py`). The base rates are the sampler's best_of_k with --keep-going (DIR/base/).
2. The sampling methods: one sampler process runs each (method, seed) in turn (DIR/sampler/stdout.log).
3. The verl methods: one run per (method, seed), seeds first so a cut job has every method on its first seeds, as
   many at once as the GPU memory holds at `--per-run-gb` each after the sampler's `--sampler-gb` (and
   `--reserve-gb`, for something beside the job). Every verl run gets SIDE_BY_SIDE (it may share the GPU with the
   sampler, the others or another job) and, where the host allows it, a private /tmp (`runs.isolated`).
4. Pack (also `python -m sdpo_eval.discovery pack`): the report (DIR/report/discovery.{json,png,md}) and the start-up
   table (DIR/report/startup.{json,md}), from whatever runs exist.
Every run lands in DIR/runs/<method>/seed<s>/. Started again, the job skips finished runs, resumes a verl run from
its checkpoint (every `--save-freq` steps) with its attempt log, and starts one without a checkpoint over, its first
try's log set aside (`runs.set_aside_unresumable_log`).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from sdpo_eval.discovery import commands, problems, run_checks, runs
from sdpo_eval.discovery.methods import method as lookup

# Runs that share one GPU and host (bench/common/side_by_side.sh has the same for the bench scripts): a fixed 2 GB
# vLLM KV cache each, for a context of the run's longest sequence (prompt + response; unset, verl takes the model's
# max_position_embeddings, which a 1.7B Qwen3's 40,960 tokens overflow: vLLM stopped at its start on 2026-12-07; the
# pre-flight's KVCache check names a run whose sequence still does not fit), 4k-token micro-batches, one agent-loop
# and one reward worker, one TransferQueue storage unit.
# free_cache_engine=False: vLLM never sleeps between rollouts; its sleep asserts that the GPU's free memory grew,
# which the other runs' allocations can break (it ended SRPO seed 4 at step 4 on 2026-12-06).
SIDE_BY_SIDE_TOKENS = 4096
SIDE_BY_SIDE = (
    "actor_rollout_ref.rollout.gpu_memory_utilization=0.05",
    "+actor_rollout_ref.rollout.engine_kwargs.vllm.kv_cache_memory_bytes=2000000000",
    "actor_rollout_ref.rollout.max_model_len='${sdpo.sequence_tokens:${data.max_prompt_length},${data.max_response_length}}'",
    f"actor_rollout_ref.actor.ppo_max_token_len_per_gpu={SIDE_BY_SIDE_TOKENS}",
    f"actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu={SIDE_BY_SIDE_TOKENS}",
    f"actor_rollout_ref.ref.log_prob_max_token_len_per_gpu={SIDE_BY_SIDE_TOKENS}",
    "actor_rollout_ref.rollout.agent.num_workers=1", "reward.num_workers=1",
    "transfer_queue.backend.SimpleStorage.num_data_storage_units=1",
    "actor_rollout_ref.rollout.free_cache_engine=False", "data.dataloader_num_workers=0",
    "trainer.n_gpus_per_node=1",
)
# verl's Ray runtime env sets VLLM_LOGGING_LEVEL=WARN unless the launching shell sets it, which hid vLLM's start-up
# lines from the start-up table on 2026-12-06; verl's file logger keeps every step's metrics
RUN_ENV = {"VLLM_LOGGING_LEVEL": "INFO"}
POLL_S = 5.0


@dataclass(frozen=True, kw_only=True)
class Job:
    """One discovery job (the `run` flags)."""

    task: str
    methods: tuple[str, ...]
    seeds: tuple[int, ...]
    budget: int
    out_dir: Path
    problems: tuple[str, ...] = ()  # always run
    choose: int = 0  # more problems chosen by base rate
    candidates: int = 256
    base_samples: int = 64
    max_rate: float = 0.0
    per_run_gb: float = 11.0
    host_gb_per_run: float = 11.0  # 12 demo runs + the sampler on a 128 GB host: Ray's memory monitor killed 3 runs
    sampler_gb: float = 16.0
    reserve_gb: float = 0.0  # GPU memory kept for something beside the job (e.g. a probe run)
    max_parallel: int = 0  # 0: as many verl runs at once as the GPU memory holds
    save_freq: int = 8
    run_timeout_s: float = 0.0  # 0: none
    sampler_engine: str = "vllm"
    sampler_kv_cache_bytes: int = 2_000_000_000
    overrides: tuple[str, ...] = ()
    call: str = ""
    python: str = sys.executable

    def __post_init__(self) -> None:
        for name in self.methods:
            lookup(name)
        if not self.methods or not self.seeds:
            raise ValueError("error: the job has no method or no seed (give --methods and --seeds)")
        if self.budget < 1 or self.base_samples < 1 or self.choose < 0:
            raise ValueError("error: --budget and --base-samples must be >= 1, --choose >= 0")
        if not self.problems and not self.choose:
            raise ValueError("error: no problems (give --problems, --choose N, or both)")

    def log(self, line: str) -> None:
        """A timestamped line in DIR/job.txt (what the GPU wrapper shows) and on stdout."""
        self.out_dir.mkdir(parents=True, exist_ok=True)
        with open(self.out_dir / "job.txt", "a") as handle:
            handle.write(f"{time.strftime('%H:%M:%S')} {line}\n")
        print(line, flush=True)

    def sampler_flags(self) -> list[str]:
        """The sampler's engine flags: its engine and, for vLLM, its fixed KV cache (it shares the GPU)."""
        kv = ["--vllm-kv-cache-bytes", str(self.sampler_kv_cache_bytes)] if self.sampler_engine == "vllm" else []
        return ["--engine", self.sampler_engine, *kv]


def choose_problems(job: Job, dry_run: bool = False) -> list[str]:
    """The job's problems (module docstring, step 1); DIR/problems.txt once chosen."""
    chosen = job.out_dir / "problems.txt"
    if chosen.exists():  # a job started again runs the problems it chose, whatever the flags say now
        picked = [p for p in chosen.read_text().strip().split(",") if p]
        if not dry_run:
            job.log(f"problems ({len(picked)}, from {chosen}): {','.join(picked)}")
        return picked
    picked = list(job.problems)
    if job.choose:
        base = job.out_dir / "base"
        data_dir = Path(os.environ.get(problems.DATA_ENV.get(job.task, ""), "") or ".")
        pool = [p for p in problems.candidates(job.task, data_dir, job.candidates) if p not in picked]
        command = commands.sampler_command([("best_of_k", 0)], job.task, pool, job.base_samples, base,
                                           job.overrides, keep_going=True, flags=job.sampler_flags(),
                                           python=job.python)
        if dry_run:
            print(" ".join(command))
            return picked + [f"<{job.choose} chosen by base rate>"]
        job.log(f"base rates: {len(pool)} candidates, {job.base_samples} samples each")
        if not runs.finished(base / "best_of_k" / "seed0"):
            run = runs.start("base", command, base, "sampler")
            run.process.wait()
            if run.poll() != 0:
                raise RuntimeError(f"error: the base-rate sampler exited {run.process.returncode} (see "
                                   f"{base / 'stdout.log'})")
        from sdpo_eval.discovery.curves import read_attempts

        rates = problems.base_rates(read_attempts([base / "best_of_k" / "seed0" / "attempts.jsonl"]),
                                    job.base_samples)
        (base / "base_rate.json").write_text(json.dumps(rates, indent=2))
        picked += problems.select(rates, job.base_samples, job.max_rate, job.choose, exclude=tuple(picked))
    if dry_run:
        return picked
    job.out_dir.mkdir(parents=True, exist_ok=True)
    chosen.write_text(",".join(picked) + "\n")
    job.log(f"problems ({len(picked)}): {','.join(picked)}")
    return picked


HOST_RESERVE_GB = 16.0  # host memory left to the sampler, the driver and the OS


def verl_slots(job: Job, gpu_gb: float | None, host_gb: float | None = None) -> int:
    """verl runs at once: what the GPU's memory holds at per_run_gb each after the sampler's share and reserve_gb,
    and what the host's memory holds at host_gb_per_run each after 16 GB for the rest (at least 1), at most
    max_parallel when given."""
    sampler = job.sampler_gb if any(not lookup(m).trained for m in job.methods) else 0.0
    slots = max(1, int(((gpu_gb or 0.0) - sampler - job.reserve_gb) // job.per_run_gb))
    if host_gb:
        slots = min(slots, max(1, int((host_gb - HOST_RESERVE_GB) // job.host_gb_per_run)))
    return min(slots, job.max_parallel) if job.max_parallel else slots


def host_memory_gb() -> float | None:
    """The host's memory (/proc/meminfo's MemTotal), None where it cannot be read."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return float(line.split()[1]) / 1024 ** 2
    except (OSError, ValueError, IndexError):
        return None
    return None


def gpu_memory_gb() -> float | None:
    """The first GPU's total memory (nvidia-smi), None without one."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=memory.total", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=30).stdout
        return float(out.split()[0]) / 1024
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return None


@dataclass(frozen=True)
class Planned:
    """A run to start: its name, folder, command and whether it is a verl run."""

    name: str
    run_dir: Path
    command: list[str]
    verl: bool


def plan(job: Job, chosen: Sequence[str]) -> list[Planned]:
    """The runs not finished yet: the sampler first (one process, its unfinished (method, seed) pairs), then the verl
    runs, seeds first."""
    out = job.out_dir / "runs"
    sampled = [(m, s) for s in job.seeds for m in job.methods
               if not lookup(m).trained and not runs.finished(out / m / f"seed{s}")]
    planned = []
    if sampled:
        planned.append(Planned("sampler", job.out_dir / "sampler", commands.sampler_command(
            sampled, job.task, chosen, job.budget, out, job.overrides, flags=job.sampler_flags(),
            python=job.python), verl=False))
    for seed in job.seeds:
        for name in (m for m in job.methods if lookup(m).trained):
            run_dir = out / name / f"seed{seed}"
            if not runs.finished(run_dir):
                planned.append(Planned(f"{name}_seed{seed}", run_dir, commands.verl_command(
                    name, job.task, chosen, job.budget, run_dir, seed, [*SIDE_BY_SIDE, *job.overrides],
                    save_freq=job.save_freq, python=job.python), verl=True))
    return planned


def execute(job: Job, dry_run: bool = False, gpu_gb: Callable[[], float | None] = gpu_memory_gb,
            host_gb: Callable[[], float | None] = host_memory_gb) -> int:
    """The job (module docstring); 0 when every run ended with returncode 0, else 1; ValueError when the start-up
    checks refuse the verl runs (none started)."""
    chosen = choose_problems(job, dry_run)
    slots = verl_slots(job, gpu_gb(), host_gb())
    planned = plan(job, chosen)
    if dry_run:
        for p in planned:
            print(" ".join(p.command))
        return 0
    job.log(f"{len(planned)} runs to start, {slots} verl runs at a time")
    if any(p.verl for p in planned):
        run_checks.stop_on_preflight(next(p.command for p in planned if p.verl))
    isolate = runs.can_isolate()
    running: list[runs.Run] = []
    failed, timeout = [], job.run_timeout_s or None
    for p in planned:
        while p.verl and sum(r.poll(timeout) is None for r in running if r.name != "sampler") >= slots:
            time.sleep(POLL_S)
        if p.verl:
            start_as = "resume" if runs.set_aside_unresumable_log(p.run_dir) else "fresh"
        prefix = runs.isolated(job.out_dir / "tmp" / p.name) if p.verl and isolate else []
        env = {**RUN_ENV, "VERL_FILE_LOGGER_PATH": str(p.run_dir / "metrics.jsonl")} if p.verl else {}
        config = lookup(p.name.rsplit("_seed", 1)[0]).protocol if p.verl else "sampler"
        running.append(runs.start(p.name, p.command, p.run_dir, config, env, prefix))
        job.log(f"{p.name} started" + (f" ({start_as})" if p.verl else ""))
    while any(r.poll(timeout) is None for r in running):
        time.sleep(POLL_S)
    for r in running:
        job.log(f"{r.name} rc={r.poll()} wall={time.time() - r.started:.0f}s")
        if r.poll() != 0:
            failed.append(r.name)
            print(run_checks.failure_line(r.name, r.poll(), r.run_dir), file=sys.stderr)
    pack(job.out_dir, job.budget, job.task, job.call)
    return 1 if failed else 0


def pack(out_dir: Path, budget: int, task: str, call: str = "") -> dict | None:
    """The report and the start-up table from whatever runs exist (DIR/report/); the switch and start-up lines of
    each run's stdout kept beside it (what a merge of several calls keeps); None before any attempt log."""
    from sdpo_eval.discovery import report, startup, switches

    root = out_dir / "runs"
    for log in sorted(root.rglob("stdout.log")) if root.exists() else []:
        text = log.read_text(errors="replace").splitlines()
        (log.parent / "switch_lines.log").write_text("".join(f"{line}\n" for line in text
                                                             if switches.SWITCH_MARK in line))
        (log.parent / "startup_lines.log").write_text("".join(f"{line}\n" for line in text
                                                              if startup.STARTUP_LINE.search(line)))
    if not root.exists() or not any(root.rglob("attempts.jsonl")):
        return None
    base = [out_dir / "base" / "base_rate.json"] if (out_dir / "base" / "base_rate.json").exists() else []
    result = report.write(root, budget, out_dir / "report" / "discovery", task=task, call=call, base_rate_files=base)
    if any(root.rglob("launch.json")):
        startup.write([root], out_dir / "report" / "startup")
    return result
