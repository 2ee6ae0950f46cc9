"""bench/learning/learning_summary.py on verl FileLogger lines: seeds cut short are listed, never averaged into the
end."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VAL = "val-core/sdpo_demo_addition/reward/mean@8"


def write_run(folder: Path, name: str, val: dict[int, float], last_train_step: int) -> None:
    lines = []
    for step in range(last_train_step + 1):
        data = {"response_length/mean": 30.0 + step} if step else {}
        if step in val:
            data[VAL] = val[step]
            data["val-aux/sdpo_demo_addition/content_correct/mean@8"] = val[step] / 2
        lines.append(json.dumps({"step": step, "data": data}))
    (folder / f"{name}.jsonl").write_text("\n".join(lines) + '\n{"step": 99, "da')  # a run killed mid-write


def test_table_averages_only_seeds_that_reached_the_end(tmp_path):
    write_run(tmp_path, "grpo_s1", {0: 0.1, 2: 0.2, 4: 0.3, 6: 0.4}, 6)
    write_run(tmp_path, "grpo_s2", {0: 0.3, 2: 0.1}, 3)  # stopped after step 3
    out = tmp_path / "out"
    result = subprocess.run([sys.executable, "bench/learning/learning_summary.py", "--dir", str(tmp_path),
                             "--out", str(out), "--call", "test", "--note", "a caveat", "--steps", "8"], cwd=ROOT,
                            check=True, capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})  # this checkout's sdpo_eval, not another
    summary = json.loads((out / "learning.json").read_text())
    (row,) = summary["table"]
    assert row["seeds_complete"] == [1] and row["seeds_cut_short"] == {"2": 3}
    assert row["val_step0"] == 0.2  # every seed's step 0
    assert abs(row["val_last3"] - 0.3) < 1e-12 and abs(row["rise"] - 0.2) < 1e-12  # seed 1 only
    assert summary["planned_steps"] == 8 and summary["final_step"] == 6 and "planned step 8" in result.stdout
    assert summary["notes"] == ["a caveat"] and (out / "learning.png").stat().st_size > 0
    run = next(r for r in summary["runs"] if r["seed"] == 1)
    assert run["steps"] == [0, 2, 4, 6] and run["response_length"] == [None, 32.0, 34.0, 36.0]
