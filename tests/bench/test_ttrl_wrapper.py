"""bench/ttrl/run_ttrl_discovery.sh, the GPU-call wrapper of the discovery figure: its knobs reach the one command,
`python -m sdpo_eval.discovery run` (a dry run on CPU: the commands only, nothing started, nothing written)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "ttrl" / "run_ttrl_discovery.sh"


def test_the_wrappers_dry_run_prints_the_figures_commands(tmp_path):
    from sdpo_data.addition_rows import write_data

    write_data(tmp_path / "demo_data", n_train=64, n_test=4)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}", "DRY_RUN": "1",
           "DISC_DIR": str(tmp_path / "job"), "OUT": str(tmp_path / "out"), "PROBLEMS": "add_train_1,add_train_2",
           "CHOOSE": "2", "CANDIDATES": "8", "SEEDS": "1,2", "SDPO_DEMO_DATA_DIR": str(tmp_path / "demo_data")}
    proc = subprocess.run(["bash", str(SCRIPT), "job"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.strip().splitlines()
    base, sampler, verl = lines[0], lines[1], lines[2:]
    assert " sample " in base and "--keep-going" in base and "--budget 64" in base and "best_of_k:0" in base
    assert "add_train_1," not in base   # the given problems are not measured again
    assert "best_of_k:1,reprompt:1,best_of_k:2,reprompt:2" in sampler
    assert len(verl) == 12 and all("sdpo.ttrl.max_attempts=64" in c and c.endswith("actor_rollout_ref.rollout.n=16")
                                   for c in verl)
    protocols = [c.split("sdpo.ttrl.protocol=")[1].split()[0] for c in verl]
    assert protocols == ["single"] * 4 + ["shared"] * 2 + ["single"] * 4 + ["shared"] * 2
    assert not (tmp_path / "job" / "runs").exists() and not (tmp_path / "job" / "problems.txt").exists()
