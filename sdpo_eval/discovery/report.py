"""The one discovery report: discovery@k with intervals, paired differences, attempts to match each baseline, the
protocol of each method, the reset cost of single-protocol runs, start-up, and the curves.

    python -m sdpo_eval.discovery report --run-dir DIR --budget B [--task demo] [--call "..."] \\
        [--base-rate F] [--coverage F] [--no-recheck | --data P --recheck-project W] [--out PREFIX]
    -> PREFIX.json, PREFIX.png, PREFIX.md (default PREFIX: DIR/discovery)

PREFIX.json holds the full report (`curves.discovery_report`: every method's curve, band, first successes, how far
cut runs got, the paired curves) and the summary of `summary.summary` (issue 32's schema: `attempts_to_match_<b>`,
`difference_vs_<b>`), one object; each method also gets `protocol` (`methods.protocol`: single | shared | sampler)
and `reset_s_per_problem` ({median, max, switches} of the `sdpo_lean/ttrl_switch` lines in its runs' stdout,
`switches.py`; null where none was printed) and `teacher_signal` (`teacher.py`: per step, what the teacher gave,
from the runs' metrics.jsonl; null without). With run folders: `runs` (each folder's return code), `startup` (the
start-up table per protocol, `startup.table`) where the runs were started by the launcher.
"""
from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from sdpo_eval.discovery import startup, switches, teacher
from sdpo_eval.discovery.curves import discovery_report, read_attempts
from sdpo_eval.discovery.methods import protocol
from sdpo_eval.discovery.problems import read_base_rates
from sdpo_eval.discovery.summary import first_success_table, plot_report, summary


def method_folders(logs: list[Path]) -> dict[str, list[Path]]:
    """{method: the run folders whose attempt log holds its records}."""
    folders: dict[str, list[Path]] = defaultdict(list)
    for log in logs:
        for name in sorted({rec["method"] for rec in read_attempts([log])}):
            folders[name].append(log.parent)
    return folders


def build(records: list[dict[str, Any]], budget: int, *, logs: list[Path] = (), run_dir: Path | None = None,
          task: str = "", call: str = "", base_rate_files: list[Path] = (), coverage: Path | None = None,
          recheck: dict[str, Any] | None = None, n_boot: int = 2000, seed: int = 0) -> dict[str, Any]:
    """The report (module docstring) of `records` (already re-checked, or not: `recheck` says which)."""
    full = discovery_report(records, budget, n_boot, seed)
    short = summary(full, task=task, call=call)
    folders = method_folders(list(logs))
    result: dict[str, Any] = {**full, **{k: v for k, v in short.items() if k != "methods"}, "methods": {}}
    for name, row in full["methods"].items():
        reset = switches.reset_summary(switches.run_switches(folder) for folder in folders.get(name, []))
        result["methods"][name] = {**row, **short["methods"][name], "protocol": protocol(name),
                                   "reset_s_per_problem": reset,
                                   "teacher_signal": teacher.teacher_signal(folders.get(name, []))}
    if recheck is not None:
        result["recheck"] = recheck
    result["base_rate"] = read_base_rates(list(base_rate_files), full["problems"])
    if task:
        result["tasks"] = {task: full["problems"]}
    if run_dir is not None:
        result["runs"] = {str(s.parent.relative_to(run_dir)): json.loads(s.read_text()).get("returncode")
                          for s in sorted(run_dir.rglob("status.json"))}
        timelines = startup.timelines([run_dir])
        if timelines:
            result["startup"] = startup.table(timelines)
    if coverage is not None:
        result["coverage"] = json.loads(coverage.read_text())["in"]
    return result


def protocol_table(report: dict[str, Any]) -> str:
    """Markdown: each method's protocol and its reset cost per problem (single-protocol runs)."""
    lines = ["| method | protocol | reset s per problem: median / max (switches) |", "|---|---|---|"]
    for name, row in report["methods"].items():
        reset = row.get("reset_s_per_problem")
        cell = "-" if not reset else f"{reset['median']} / {reset['max']} ({reset['switches']})"
        lines.append(f"| {name} | {row.get('protocol') or '?'} | {cell} |")
    return "\n".join(lines) + "\n"


def write(run_dir: Path, budget: int, prefix: Path, **kwargs: Any) -> dict[str, Any]:
    """Report every attempts.jsonl under `run_dir` as they are (no re-check: the report says so) into
    prefix.{json,png,md}; what `build` takes in kwargs."""
    from sdpo_eval.report_recheck import OFF

    logs = sorted(run_dir.rglob("attempts.jsonl"))
    result = build(read_attempts(logs), budget, logs=logs, run_dir=run_dir, recheck=dict(OFF), **kwargs)
    save(result, prefix)
    return result


def save(result: dict[str, Any], prefix: Path, extra_markdown: str = "") -> None:
    """prefix.json, prefix.png (the curves and the paired curves) and prefix.md (first successes, protocols)."""
    prefix.parent.mkdir(parents=True, exist_ok=True)
    Path(f"{prefix}.json").write_text(json.dumps(result, indent=2))
    plot_report(result, Path(f"{prefix}.png"))
    Path(f"{prefix}.md").write_text(first_success_table(result) + "\n" + protocol_table(result) + extra_markdown)
