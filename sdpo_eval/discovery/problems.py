"""Which problems a discovery job runs: candidates, their base rates from the sampler, and the choice.

Candidates: the hard end of the demo's addition task (the largest operand sums of addition_train) or every toy Lean
theorem. Base rates come from the sampler (best_of_k with --keep-going: the recipe's prompts, sampling settings and
reward) with `samples` attempts a problem; a problem is chosen when its rate over its first `samples` judged attempts
is at most `max_rate` (0: no success in the base samples), rarest first.
"""
from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from sdpo_attempts.valid import valid_record

TASKS = ("demo", "toy_lean")
DATA_ENV = {"demo": "SDPO_DEMO_DATA_DIR", "toy_lean": "SDPO_TOY_DATA_DIR"}  # where the task's recipe reads its data


def candidates(task: str, data_dir: Path, count: int) -> list[str]:
    """The `count` addition problems with the largest a + b (ties: larger max(a, b)), or every toy theorem."""
    if task == "toy_lean":
        from sdpo_data.toy_lean import THEOREMS

        return [name for name, _, _ in THEOREMS]
    if task != "demo":
        raise ValueError(f"error: no candidates for task {task!r} (give --problems; candidates: {', '.join(TASKS)})")
    import pandas as pd

    path = data_dir / "addition_train.parquet"
    if not path.exists():
        raise FileNotFoundError(f"error: no {path} (python -m sdpo_data.addition_rows --out-dir DIR --max-operand 100, "
                                f"and export {DATA_ENV['demo']}=DIR, where the demo recipe reads it)")
    rows = pd.read_parquet(path)["extra_info"]
    ranked = sorted(rows, key=lambda e: (-(e["operands"][0] + e["operands"][1]), -max(e["operands"]), e["name"]))
    return [e["name"] for e in ranked[:count]]


def base_rates(records: list[dict[str, Any]], samples: int) -> dict[str, dict[str, Any]]:
    """{problem: {valid, judged, rate}} over each problem's first `samples` judged attempts (infra excluded)."""
    counts: dict[str, dict[str, Any]] = defaultdict(lambda: {"valid": 0, "judged": 0})
    for rec in records:
        if rec.get("infra") or not 1 <= rec["attempt"] <= samples:
            continue
        counts[rec["problem"]]["judged"] += 1
        counts[rec["problem"]]["valid"] += valid_record(rec)
    return {p: {**c, "rate": c["valid"] / c["judged"]} for p, c in sorted(counts.items())}


def select(rates: dict[str, dict[str, Any]], samples: int, max_rate: float, count: int,
           exclude: tuple[str, ...] = ()) -> list[str]:
    """Problems measured on all `samples` attempts with rate <= max_rate and not in `exclude`, rarest first, at most
    `count`."""
    measured = [p for p, r in rates.items() if r["judged"] >= samples and r["rate"] <= max_rate and p not in exclude]
    return sorted(measured, key=lambda p: (rates[p]["rate"], p))[:count]


def read_base_rates(paths: list[Path], problems: list[str]) -> dict[str, Any]:
    """The base rates of `problems` from base_rate.json files ({problem: {valid, judged, rate}})."""
    return {p: r for path in paths for p, r in json.loads(Path(path).read_text()).items() if p in problems}
