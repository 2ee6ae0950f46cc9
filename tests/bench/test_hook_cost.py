"""bench/step_time/hook_cost.py times the hook's per-token pass and its backward on a one-sample micro-batch and says
so."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_hook_cost_runs_and_writes_what_it_measured(tmp_path):
    out = tmp_path / "hook_cost.json"
    subprocess.run([sys.executable, "bench/step_time/hook_cost.py", "--prompt", "5", "--response", "7", "--vocab", "64",
                    "--topk", "8", "--reps", "2", "--breakdown", "--out", str(out)], cwd=ROOT, check=True,
                   capture_output=True)
    result = json.loads(out.read_text())
    assert (result["prompt"], result["response"], result["vocab"], result["topk"]) == (5, 7, 64, 8)
    assert len(result["ms_per_micro_batch"]) == 2 and result["mean_ms"] > 0
    assert result["device"].startswith("cpu")
    parts = result["parts_ms"]
    assert len(parts) == 9 and all(ms > 0 for ms in parts.values())
    assert {"distillation forward + backward", "per-token log-probs forward + backward"} <= set(parts)
