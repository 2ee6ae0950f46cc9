"""Running discovery jobs: one process per run, its log and status beside it, optionally pinned to a GPU group.

Shared by the per-problem runner (`sdpo_eval.discovery run`) and the set runner (`sdpo_eval.discovery_set`). A run
folder holds stdout.log and, once the process ended, status.json ({command, gpus, returncode, wall_s}); a run whose
status says returncode 0 is finished.
"""
from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path


def finished(run_dir: Path) -> bool:
    """Whether the run in `run_dir` ended with returncode 0 (its status.json; finished runs are skipped)."""
    status = run_dir / "status.json"
    return status.exists() and json.loads(status.read_text()).get("returncode") == 0


def gpu_groups(gpus: Sequence[str], parallel: int) -> list[list[str]] | None:
    """`gpus` split into `parallel` disjoint groups of equal size, one per concurrent run (None: no pinning,
    one run at a time on whatever the process sees). Concurrent runs never share a GPU: vLLM's start-up memory
    profiling fails when another process frees GPU memory meanwhile, and verl's rollouts free it every step."""
    if parallel < 1:
        raise ValueError(f"--parallel must be >= 1, got {parallel}")
    if not gpus:
        if parallel > 1:
            raise ValueError("--parallel > 1 needs --gpus (or CUDA_VISIBLE_DEVICES) so that each run gets its own GPUs")
        return None
    if len(set(gpus)) != len(gpus):
        raise ValueError(f"GPU ids repeat in {list(gpus)}")
    if len(gpus) % parallel:
        raise ValueError(f"{len(gpus)} GPUs do not split into {parallel} equal groups")
    size = len(gpus) // parallel
    return [list(gpus[i * size:(i + 1) * size]) for i in range(parallel)]


def launch(command: list[str], run_dir: Path, gpus: list[str] | None = None) -> int:
    """Run one job to completion; stdout/stderr to run_dir/stdout.log, status.json written after it ends.
    A pinned job sees only its GPUs and starts its own local Ray instance (RAY_ADDRESS dropped: joining a shared
    cluster would ignore the pinning)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    env = None
    if gpus is not None:
        env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
        env["CUDA_VISIBLE_DEVICES"] = ",".join(gpus)
    start = time.time()
    with open(run_dir / "stdout.log", "w") as out:
        rc = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, env=env).returncode
    (run_dir / "status.json").write_text(json.dumps({"command": command, "gpus": gpus, "returncode": rc,
                                                     "wall_s": round(time.time() - start, 1)}, indent=2))
    return rc
