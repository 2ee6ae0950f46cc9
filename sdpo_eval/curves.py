"""Training curves from verl's file logger: reward, reply length, entropy, SDPO loss and infra share, as one PNG.

    python -m sdpo_eval.curves sdpo-lean/sdpo_kimina_1_7b.jsonl [more runs .jsonl ...] --out curves.png

Input: the JSON lines verl's `file` logger writes ({"step": s, "data": {metric: value}} per training or validation
step) at $VERL_FILE_LOGGER_PATH, else ./<trainer.project_name>/<trainer.experiment_name>.jsonl in the folder the run
was started from. Each file is one line per panel, named after the file. A metric a run never logged (GRPO has no
SDPO loss) leaves its panel empty, with a note; a file with none of the metrics is an error.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

from sdpo_options import cli_checks

# panel name -> (verl metric key, title)
CURVES: dict[str, tuple[str, str]] = {
    "reward": ("critic/score/mean", "training reward (mean score)"),
    "response_length": ("response_length/mean", "reply length (tokens, mean)"),
    "entropy": ("actor/entropy", "policy entropy"),
    "sdpo_loss": ("actor/sdpo/loss", "SDPO loss"),
    "infra_share": ("sdpo_lean/infra_fraction", "infra share (samples masked out)"),
}


class NotALoggerFile(ValueError):
    """A JSON line that is not verl's file-logger record ({"step": int, "data": {...}})."""


def read_metrics(path: Path) -> dict[int, dict[str, float]]:
    """step -> every metric logged at that step. A partial last line (a run killed mid-write) is skipped; a whole
    line of another shape raises NotALoggerFile naming the line."""
    by_step: dict[int, dict[str, float]] = defaultdict(dict)
    for line_no, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not (isinstance(record, dict) and isinstance(record.get("step"), int) and isinstance(record.get("data"),
                                                                                                 dict)):
            raise NotALoggerFile(f"{path}:{line_no}: not a verl file-logger record ({{\"step\": N, \"data\": "
                                 "{...}}); is it a training run's file-logger JSONL?")
        by_step[record["step"]].update(record["data"])
    return dict(by_step)


def series(metrics: dict[int, dict[str, float]], key: str) -> tuple[list[int], list[float]]:
    """(steps, values) of one metric, in step order, over the steps that logged it."""
    steps = sorted(s for s, data in metrics.items() if data.get(key) is not None)
    return steps, [float(metrics[s][key]) for s in steps]


def plot_curves(runs: dict[str, dict[int, dict[str, float]]], path: Path, title: str) -> None:
    """Plot each of CURVES over the steps of every run into `path` (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(CURVES), figsize=(4 * len(CURVES), 3.6))
    for ax, (key, label) in zip(axes, CURVES.values()):
        for i, (name, metrics) in enumerate(runs.items()):
            steps, values = series(metrics, key)
            if steps:
                ax.plot(steps, values, marker="o", ms=3, color=f"C{i}", label=name)
        if not ax.lines:
            ax.text(0.5, 0.5, f"not logged\n({key})", ha="center", va="center", transform=ax.transAxes, fontsize=8)
        ax.set_title(label, fontsize=10)
        ax.set_xlabel("training step")
    axes[0].legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    """The CLI (module docstring); returns the exit code."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+", type=Path, help="verl file-logger JSONL, one per run")
    parser.add_argument("--out", type=Path, required=True, help="PNG to write")
    parser.add_argument("--title", default=None, help="plot title (default: the file names)")
    args = parser.parse_args(argv)
    if cli_checks.report([cli_checks.output_problem(args.out, "--out")]):
        return 2
    runs = {}
    for path in args.files:
        if not path.is_file():
            print(f"error: {path}: no such file (verl's `file` logger writes $VERL_FILE_LOGGER_PATH, else "
                  "./<project_name>/<experiment_name>.jsonl where the run started)", file=sys.stderr)
            return 2
        try:
            metrics = read_metrics(path)
        except NotALoggerFile as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        if not any(series(metrics, key)[0] for key, _ in CURVES.values()):
            print(f"error: {path}: none of {[key for key, _ in CURVES.values()]} in {len(metrics)} logged steps; "
                  "is it a verl file-logger file of a training run?", file=sys.stderr)
            return 2
        runs[path.stem] = metrics
    args.out.parent.mkdir(parents=True, exist_ok=True)
    plot_curves(runs, args.out, args.title or ", ".join(runs))
    for name, metrics in runs.items():
        last = {panel: series(metrics, key)[1][-1] for panel, (key, _) in CURVES.items() if series(metrics, key)[0]}
        print(f"{name}: {len(metrics)} steps; last " + ", ".join(f"{k}={v:.4g}" for k, v in last.items()))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
