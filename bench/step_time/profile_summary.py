"""Summarise a profiled step of bench/step_time/step_phases.py (`--profile-only`: the phase line, then torch's
key_averages table by device time) into JSON for bench/step_time/results: the step's phases, the device time its kernels
took and its share of the step (below 1: the GPU waited for the host), and the costliest kernels with their launch
counts.

    python bench/step_time/profile_summary.py bench/step_time/raw/<job>/profile_sdpo_r2048.txt \\
        --command "<what ran, when, where>" \\
        --out bench/step_time/results/profile_sdpo_r2048_h200.json
"""
from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from step_time_fair import PHASES  # the step's own phases; the teacher forward and the EMA sit inside the update

PHASE_LINE = "profiled step, wall s per phase: "
UNITS = {"us": 1e-6, "ms": 1e-3, "s": 1.0}


def seconds(cell: str) -> float:
    """torch's time cells ('221.670us', '1.564s') in seconds."""
    match = re.fullmatch(r"([0-9.]+)(us|ms|s)", cell.strip())
    if match is None:
        raise ValueError(f"not a time cell: {cell!r}")
    return float(match.group(1)) * UNITS[match.group(2)]


def summarise(text: str) -> dict:
    lines = text.splitlines()
    phase_line = next((line for line in lines if line.startswith(PHASE_LINE)), None)
    if phase_line is None:
        raise ValueError(f"no {PHASE_LINE!r} line: a profile from before 2026-12-04 17:00 UTC has no step phases")
    phases = {k: float(v) for k, v in (item.rsplit(" ", 1) for item in phase_line[len(PHASE_LINE):].split(", "))}
    header = next(line for line in lines if line.strip().startswith("Name"))
    columns = re.split(r"\s{2,}", header.strip())
    kernels = []
    for line in lines:
        cells = re.split(r"\s{2,}", line.strip())
        if len(cells) != len(columns) or cells == columns or not cells[-1].isdigit():
            continue
        row = dict(zip(columns, cells))
        kernels.append({"name": row["Name"], "self_device_s": round(seconds(row["Self CUDA"]), 6),
                        "calls": int(row["# of Calls"]), "mean_us": round(seconds(row["CUDA time avg"]) * 1e6, 3)})
    total = next((line for line in lines if line.startswith("Self CUDA time total:")), None)
    if total is None:
        raise ValueError("no 'Self CUDA time total' line: not a GPU profile")
    device_s = seconds(total.split(":", 1)[1])
    step_s = sum(v for k, v in phases.items() if k in PHASES)
    return {
        "phases_s": phases,
        "step_s_without_rollout": round(step_s, 3),
        "device_kernel_s": round(device_s, 3),
        "device_busy_fraction": round(device_s / step_s, 3),
        "launches_of_listed_kernels": sum(k["calls"] for k in kernels),
        "kernels": kernels,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("profile", type=Path, help="profile_<algo>_r<length>.txt of bench/step_time/step_phases.py")
    parser.add_argument("--command", required=True, help="what ran, when, where (stored in the JSON)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    summary = {"command": args.command, **summarise(args.profile.read_text())}
    args.out.write_text(json.dumps(summary, indent=1) + "\n")
    print(f"device busy {summary['device_kernel_s']} s of {summary['step_s_without_rollout']} s "
          f"({summary['device_busy_fraction']:.0%}); {summary['launches_of_listed_kernels']} launches of "
          f"{len(summary['kernels'])} kernels")


if __name__ == "__main__":
    main()
