"""Start-up of verl runs, phase by phase, from their stdout logs (issue 47 part 1).

    python -m sdpo_eval.discovery startup --run-dir RAW/runs [--run-dir ...] --out-prefix bench/ttrl/results/startup

Each run folder (any depth under --run-dir) holds stdout.log, or the lines of it that matter (startup_lines.log),
with the `sdpo_lean/startup <phase> <t>` marks (sdpo_ext.startup.timeline), and launch.json ({"launched_at": t,
"config": <label>}) written by the runner when it started the process. Per run: seconds from launch to each phase,
and vLLM's own start-up figures from its log lines (weights loaded, engine init = profile + KV cache + warm-up,
torch.compile, CUDA graphs). Per config label: the median and range over its runs. Writes <out>.json and <out>.md
(the table for bench/ttrl/README.md).
"""
from __future__ import annotations

import json
import re
import statistics
from pathlib import Path

from sdpo_ext.startup.timeline import MARK, PHASES

MARK_LINE = re.compile(re.escape(MARK) + r" (\w+) (\d+(?:\.\d+)?)")
VLLM_FIGURES = {  # name -> pattern of a vLLM log line (seconds in group 1)
    "vllm_weights_s": re.compile(r"Loading weights took (\d+(?:\.\d+)?) seconds"),
    "vllm_engine_init_s": re.compile(r"init engine \(profile, create kv cache, warmup model\) took (\d+(?:\.\d+)?)"),
    "vllm_compile_s": re.compile(r"torch\.compile takes (\d+(?:\.\d+)?) s in total"),
    "vllm_cuda_graphs_s": re.compile(r"Graph capturing finished in (\d+(?:\.\d+)?) sec"),
}
# the lines of a run's stdout the table reads (a pack keeps them as startup_lines.log)
STARTUP_LINE = re.compile("|".join([re.escape(MARK), *(p.pattern for p in VLLM_FIGURES.values())]))


def run_timeline(run_dir: Path) -> dict:
    """{config, phases: {phase: s since launch}, vllm: {figure: s}} of one run folder."""
    launch = json.loads((run_dir / "launch.json").read_text())
    logs = [run_dir / name for name in ("stdout.log", "startup_lines.log") if (run_dir / name).exists()]
    text = logs[0].read_text(errors="replace") if logs else ""
    phases: dict[str, float] = {}
    for name, t in MARK_LINE.findall(text):
        if name in PHASES and name not in phases:
            phases[name] = round(float(t) - float(launch["launched_at"]), 1)
    vllm = {name: float(m.group(1)) for name, pattern in VLLM_FIGURES.items() if (m := pattern.search(text))}
    return {"config": launch.get("config", "default"), "phases": phases, "vllm": vllm}


def table(timelines: dict[str, dict]) -> dict:
    """Per config: the runs and, per phase, median / min / max seconds since launch over the runs that reached it."""
    out: dict[str, dict] = {}
    for run, tl in sorted(timelines.items()):
        row = out.setdefault(tl["config"], {"runs": [], "phases": {}, "vllm": {}})
        row["runs"].append(run)
    for config, row in out.items():
        mine = [timelines[r] for r in row["runs"]]
        for key, names in (("phases", PHASES), ("vllm", tuple(VLLM_FIGURES))):
            for name in names:
                values = [tl[key][name] for tl in mine if name in tl[key]]
                if values:
                    row[key][name] = {"median": round(statistics.median(values), 1), "min": min(values),
                                      "max": max(values), "reached": len(values)}
    return out


def markdown(summary: dict) -> str:
    """One column per config, one row per phase: median seconds since launch [min-max] (runs that reached it)."""
    configs = list(summary)
    lines = ["| phase (s since launch) | " + " | ".join(f"{c} ({len(summary[c]['runs'])} runs)" for c in configs)
             + " |", "|---|" + "---|" * len(configs)]
    for key, names in (("phases", PHASES), ("vllm", tuple(VLLM_FIGURES))):
        for name in names:
            cells = []
            for c in configs:
                v = summary[c][key].get(name)
                cells.append("-" if v is None else
                             f"{v['median']} [{v['min']}-{v['max']}] ({v['reached']})")
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def timelines(run_dirs: list[Path]) -> dict[str, dict]:
    """{run folder relative to its --run-dir: its timeline} for every launch.json under `run_dirs`."""
    return {str(launch.parent.relative_to(root)): run_timeline(launch.parent)
            for root in run_dirs for launch in sorted(root.rglob("launch.json"))}


def write(run_dirs: list[Path], out: Path) -> dict:
    """Write <out>.json ({runs, configs}) and <out>.md; ValueError when no run was launched there."""
    runs = timelines(run_dirs)
    if not runs:
        raise ValueError(f"error: no launch.json under {[str(r) for r in run_dirs]} (folders of runs the launcher "
                         "started)")
    summary = table(runs)
    out.parent.mkdir(parents=True, exist_ok=True)
    Path(f"{out}.json").write_text(json.dumps({"runs": runs, "configs": summary}, indent=1))
    Path(f"{out}.md").write_text(markdown(summary))
    return summary
