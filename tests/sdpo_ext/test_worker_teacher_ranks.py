"""Two ranks of the real worker (verl's FSDP2 engine, gloo, CPU) through one SDPO step, where a sample that rank 0
distils is not distilled on rank 1 (tests/sdpo_ext/two_rank_step.py): the teacher's FSDP forward gathers its
weights from both ranks, so both must run the same teacher forwards, or the step hangs. A rank that has not finished
within RANK_TIMEOUT_S fails the test."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.sdpo_ext.cpu_platform import free_port

RANK_TIMEOUT_S = 150  # a passing step takes about 25 s here
SCRIPT = Path(__file__).with_name("two_rank_step.py")


@pytest.mark.parametrize("algo", ["sdpo", "sdpo_shared_prefix"])
def test_two_ranks_finish_a_step_when_only_one_distils_a_sample(algo, model_dir, tmp_path):
    port = str(free_port())
    ranks = [subprocess.Popen([sys.executable, str(SCRIPT), str(rank), port, algo, str(model_dir), str(tmp_path)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for rank in (0, 1)]
    outputs = []
    try:
        for process in ranks:
            outputs.append(process.communicate(timeout=RANK_TIMEOUT_S))
    except subprocess.TimeoutExpired:
        pytest.fail(f"the ranks did not finish the step in {RANK_TIMEOUT_S} s")
    finally:
        for process in ranks:
            process.kill()
    results = {}
    for (stdout, stderr), process in zip(outputs, ranks):
        lines = [line for line in stdout.splitlines() if line.startswith("RESULT ")]
        assert process.returncode == 0 and lines, stderr[-3000:]
        result = json.loads(lines[-1].removeprefix("RESULT "))
        results[result["rank"]] = result["active"]
    # verl averages the metric over the ranks: 7 of 8 samples distilled on rank 0, 6 of 8 on rank 1
    assert results == {0: pytest.approx(13 / 16), 1: pytest.approx(13 / 16)}, results
