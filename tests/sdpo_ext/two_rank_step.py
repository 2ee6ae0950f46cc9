"""One rank of tests/sdpo_ext/test_worker_teacher_ranks.py, run as a script:

    python tests/sdpo_ext/two_rank_step.py RANK PORT ALGO MODEL_DIR WORK_DIR

The CPU platform in a world of 2 (gloo), the real worker, one step of tests/sdpo_ext/test_worker_in_process.py's
batch, where rank 1 does not distil sample IDLE_SAMPLE; prints `RESULT <json>` with its metrics."""
from __future__ import annotations

import json
import os
import sys
import types
from pathlib import Path

IDLE_SAMPLE = 5  # distilled on rank 0 (a failed sample of the unsolved group), not on rank 1


def main(rank: int, port: int, algo: str, model_dir: Path, work_dir: Path) -> None:
    import torch
    from transformers import AutoTokenizer

    from sdpo_ext.teacher import shared_prefix
    from sdpo_ext.trainer import SDPOTrainer
    from tests.sdpo_ext.cpu_platform import install_cpu_platform
    from tests.sdpo_ext.test_worker_in_process import step_batch, worker_for

    os.environ.update(SDPO_DATA_DIR=str(work_dir / f"data{rank}"), SDPO_OUTPUT_DIR=str(work_dir / f"runs{rank}"))
    install_cpu_platform(rank, 2, port)
    shared_prefix.MIN_SHARED_PREFIX = 16  # this batch's teacher prompts are 63 and 86 tokens
    teacher_fields = SDPOTrainer._teacher_fields

    def fields_of_this_rank(self, *args):
        fields = teacher_fields(self, *args)
        if rank == 1:
            fields["sdpo_mask"][IDLE_SAMPLE] = 0.0
        return fields

    SDPOTrainer._teacher_fields = fields_of_this_rank
    batch = step_batch(algo, model_dir, AutoTokenizer.from_pretrained(model_dir))
    worker = worker_for(batch, algo)
    _, metrics = batch.step(worker, sdpo_enabled=True)
    print("RESULT " + json.dumps({"rank": rank, "active": metrics["actor/sdpo/active_sample_fraction"]}), flush=True)
    torch.distributed.destroy_process_group()


if __name__ == "__main__":
    # a `tests` package in site-packages (from some dependency) would shadow this repository's tests/ directory
    repository = Path(__file__).resolve().parents[2]
    package = types.ModuleType("tests")
    package.__path__ = [str(repository / "tests")]
    sys.modules["tests"] = package
    sys.path.insert(0, str(repository))
    main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], Path(sys.argv[4]), Path(sys.argv[5]))
