"""Where the single protocol's reset (`sdpo.ttrl.protocol=single`) spends its time, on CPU: verl's real FSDP engine
in this process (the test-only CPU platform of tests/sdpo_ext/cpu_platform.py, the worker built as
tests/sdpo_ext/test_worker_in_process.py builds it: the SDPO kimina recipe, EMA teacher), a random-weight Qwen3 of
`--shape` with SmolLM2-135M-Instruct's tokenizer.

    python bench/ttrl/reset_cost.py --shape 250m --reps 4 --out bench/ttrl/results/reset_cost_cpu.json

The worker saves its initial state (`sdpo_save_initial_state`) and snapshots it in host memory
(`sdpo_snapshot_initial_state`), then `--reps` times, each after a training step (as in a run): (a) the reset from
disk, the worker's `load_checkpoint` as the hook's fallback calls it, split into the EMA teacher's torch.load + copy
(our override) and verl's `load_checkpoint` with its checkpoint manager's parts (model: torch.load +
load_state_dict; optimizer: the same; extra: the LR scheduler and RNG file), and (b) the reset from the snapshot
(`sdpo_restore_initial_state`), split into the actor's and the teacher's shard copies and the optimizer load; the two
alternate which goes first. Prints each figure and writes the medians (seconds), each reset's total, the shape and
the machine's load (`uptime`) as JSON. The machine's load moves these figures: compare (a) and (b) of one run only.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from contextlib import contextmanager
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[2]
# this checkout's packages, step_time's step helpers, and the CPU platform by its file's name (`tests` is not a
# package: a stray one installed in site-packages would shadow it)
for folder in (REPO, REPO / "bench" / "step_time", REPO / "tests" / "sdpo_ext"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

SHAPES = {  # random Qwen3 shapes (tied embeddings, SmolLM2's 49k vocabulary): parameters in the name
    "tiny": dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                 num_key_value_heads=2, head_dim=16),  # the tests' model
    "250m": dict(hidden_size=1024, intermediate_size=3072, num_hidden_layers=16, num_attention_heads=16,
                 num_key_value_heads=8, head_dim=64),
}


class Clock:
    """Seconds spent in the wrapped calls, summed by part name, per reset."""

    def __init__(self):
        self.parts: dict[str, float] = defaultdict(float)

    def wrap(self, owner, attribute: str, part) -> None:
        """Times `owner.attribute(...)` under `part` (a name, or a function of the call's arguments giving one)."""
        inner = getattr(owner, attribute)

        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                self.parts[part(*args) if callable(part) else part] += time.perf_counter() - start

        setattr(owner, attribute, timed)


def file_part(path, *args) -> str:
    """The part a torch.load belongs to, from verl's file names (and ours for the teacher)."""
    name = os.path.basename(str(path))
    for prefix, part in (("model_", "model.torch_load"), ("optim_", "optimizer.torch_load"),
                         ("extra_state_", "extra.torch_load"), ("rank_", "teacher.torch_load")):
        if name.startswith(prefix):
            return part
    return "other.torch_load"


@contextmanager
def instrumented(worker, clock: Clock):
    """The calls of both resets, timed into `clock` (torch.load by file; the manager's and the engine's calls)."""
    import sdpo_ext.worker as worker_module

    engine = worker.actor.engine
    manager = engine.checkpoint_manager
    saved = (torch.load, worker_module.restore_local_shards_)
    clock.wrap(torch, "load", file_part)
    clock.wrap(engine, "load_checkpoint", "verl.engine_load_checkpoint")
    clock.wrap(manager, "load_checkpoint", "verl.manager_load_checkpoint")
    clock.wrap(engine.module, "load_state_dict", "model.load_state_dict")
    clock.wrap(engine.optimizer, "load_state_dict", "optimizer.load_state_dict")
    clock.wrap(engine.lr_scheduler, "load_state_dict", "extra.lr_scheduler")
    clock.wrap(manager, "load_rng_state", "extra.rng")
    clock.wrap(worker_module, "restore_local_shards_",
               lambda module, *_: "teacher.copy" if module is worker.ref.engine.module else "actor.copy")
    try:
        yield
    finally:
        torch.load, worker_module.restore_local_shards_ = saved
        for owner, attribute in ((engine, "load_checkpoint"), (manager, "load_checkpoint"),
                                 (engine.module, "load_state_dict"), (engine.optimizer, "load_state_dict"),
                                 (engine.lr_scheduler, "load_state_dict"), (manager, "load_rng_state")):
            owner.__dict__.pop(attribute, None)


def timed_reset(reset, worker) -> dict[str, float]:
    clock = Clock()
    with instrumented(worker, clock):
        start = time.perf_counter()
        reset()
        total = time.perf_counter() - start
    parts = dict(clock.parts)
    if "verl.engine_load_checkpoint" in parts:  # our override's share: the EMA teacher's torch.load and copy
        parts["teacher.load_and_copy"] = total - parts["verl.engine_load_checkpoint"]
    return {"total": total, **parts}


def model_dir(shape: str, tokenizer, folder: Path) -> int:
    """A random Qwen3 of `shape` saved as verl loads a model; returns its parameter count."""
    from transformers import Qwen3Config, Qwen3ForCausalLM

    config = Qwen3Config(vocab_size=len(tokenizer), max_position_embeddings=4096, tie_word_embeddings=True,
                         eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id, **SHAPES[shape])
    torch.manual_seed(0)
    model = Qwen3ForCausalLM(config)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return sum(p.numel() for p in model.parameters())


def medians(runs: list[dict[str, float]]) -> dict[str, float]:
    return {key: round(statistics.median(run.get(key, 0.0) for run in runs), 4) for key in runs[0]}


def load_average() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def measure(shape: str, reps: int, work: Path) -> dict:
    from cpu_platform import CPU_CONFIG_OVERRIDES, cpu_platform_installed
    from step_batch import random_rollout_batch
    from step_phases import compose_config, overrides
    from transformers import AutoTokenizer

    from sdpo_data.smollm2 import smollm2_gguf
    from sdpo_ext.worker import SDPOActorRolloutRefWorker

    gguf = smollm2_gguf()
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    parameters = model_dir(shape, tokenizer, work / "model")
    os.environ.setdefault("SDPO_OUTPUT_DIR", str(work / "runs"))
    os.environ.setdefault("SDPO_DATA_DIR", str(work / "data"))
    load_before = load_average()
    with cpu_platform_installed():
        cfg = compose_config([*overrides("sdpo", work / "model", 2, 4, 64), *CPU_CONFIG_OVERRIDES])
        batch = random_rollout_batch(cfg, tokenizer, 2, 4, first_length=12)
        worker = SDPOActorRolloutRefWorker(config=batch.cfg.actor_rollout_ref, role="actor_rollout_ref")
        worker.init_model()
        assert worker.sdpo_config.sdpo.teacher.mode == "ema", "the benchmark measures the EMA teacher's reset"
        initial = str(work / "initial" / "actor")
        start = time.perf_counter()
        worker.sdpo_save_initial_state(initial)
        save_s = time.perf_counter() - start
        start = time.perf_counter()
        worker.sdpo_snapshot_initial_state()
        snapshot_s = time.perf_counter() - start
        runs = {"disk": [], "memory": []}
        resets = {"disk": lambda: worker.load_checkpoint(initial, None, False),
                  "memory": worker.sdpo_restore_initial_state}
        for rep in range(reps):
            for kind in ("disk", "memory") if rep % 2 == 0 else ("memory", "disk"):  # neither always goes first
                batch.step(worker, sdpo_enabled=True)  # as in a run: a reset follows a problem's training step
                runs[kind].append(timed_reset(resets[kind], worker))
                print(f"rep {rep}: {kind} {json.dumps({k: round(v, 3) for k, v in runs[kind][-1].items()})}",
                      flush=True)
    state = worker.initial_state
    host_bytes = sum(t.numel() * t.element_size() for part in (state.actor, state.teacher) for t in part.values())
    return {"shape": shape, "parameters": parameters, **SHAPES[shape], "reps": reps,
            "torch_threads": torch.get_num_threads(), "save_initial_state_s": round(save_s, 3),
            "snapshot_s": round(snapshot_s, 3), "snapshot_host_gib": round(host_bytes / 2**30, 3),
            "disk_reset_s": medians(runs["disk"]), "memory_reset_s": medians(runs["memory"]),
            "disk_reset_total_s_each": [round(run["total"], 3) for run in runs["disk"]],
            "memory_reset_total_s_each": [round(run["total"], 3) for run in runs["memory"]],
            "uptime_before": load_before, "uptime_after": load_average(),
            "commit": subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                                     text=True).stdout.strip()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shape", choices=sorted(SHAPES), default="250m", help="the random Qwen3's size")
    parser.add_argument("--reps", type=int, default=3, help="resets of each kind (medians reported)")
    parser.add_argument("--out", type=Path, help="write the summary JSON here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="reset_cost_") as work:
        result = measure(args.shape, args.reps, Path(work))
    print(json.dumps(result, indent=1))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
