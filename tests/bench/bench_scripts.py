"""Where the tests find the bench scripts: bench/<experiment>/<script>. A script imports its siblings by bare name
(`from step_batch import StepBatch`), which resolves because Python puts the script's own folder first on sys.path;
a test that imports a script does the same through `on_path`."""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"


def on_path(experiment: str) -> Path:
    """Put bench/<experiment> first on sys.path, as running one of its scripts does (once); returns the folder."""
    folder = BENCH / experiment
    if not folder.is_dir():
        known = sorted(p.name for p in BENCH.iterdir() if p.is_dir())
        raise FileNotFoundError(f"error: no folder bench/{experiment} (the experiments: {', '.join(known)})")
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    return folder
