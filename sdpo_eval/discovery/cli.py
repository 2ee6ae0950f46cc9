"""Test-time discovery: how many attempts each method needs to find a proof, on a problem set, on one GPU.

    python -m sdpo_eval.discovery run --task demo --methods best_of_k,reprompt,grpo,sdpo,sdpo_confident,srpo \\
        --seeds 1,2,3,4 --budget 64 --problems a,b,... [--choose 16] --out-dir DIR [-- hydra overrides]
    python -m sdpo_eval.discovery report --run-dir DIR/runs --budget 64 --no-recheck     # or --data P ...
    python -m sdpo_eval.discovery pack --out-dir DIR --task demo --budget 64              # report + start-up table
    python -m sdpo_eval.discovery sample --recipe sdpo_demo --problems a,b --budget 64 --runs best_of_k:1 \\
        --out-dir DIR/runs                                                              # the sampler alone
    python -m sdpo_eval.discovery merge --chunk-dir A --chunk-dir B --out-dir M         # several calls' runs
    python -m sdpo_eval.discovery startup --run-dir DIR/runs --out-prefix PREFIX        # the start-up table alone
    python -m sdpo_eval.discovery methods                                               # the table of methods

`run` is the whole job (`launcher.py`): problem choice by base rate, the sampler baselines and the verl runs side by
side, resume of cut runs, and the pack. Methods and protocols: `methods.py` (`single`: one problem at a time, each
from the initial state; `shared`: every problem in one model, set-TTRL; `sampler`: no training).

`report` reads every attempts.jsonl under --run-dir (or --log files) and writes the report (`report.py`): discovery@k
(the fraction of problems solved within k judged attempts, averaged over runs per problem and over problems, with a
95% percentile bootstrap over problems), each method's paired difference to each baseline, the attempts it needs
to match each baseline, its protocol and reset cost. Runs cut before their budget count as far as they got.
Before it counts, each run's first success is re-checked out of process against the reference statement in --data
(`sdpo_eval.report_recheck`: a rejected proof is a cheat, not a discovery; one the tool gives no verdict on is
unverified and the report exits 1); --no-recheck reports the fast path's verdicts and says so.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from sdpo_eval import report_recheck
from sdpo_eval.discovery.methods import FIGURE_METHODS, METHODS
from sdpo_options import cli_checks
from sdpo_options.flags import deprecated_alias


def _names(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _run_flags(parser: argparse.ArgumentParser) -> None:
    from sdpo_eval.discovery.launcher import Job

    parser.add_argument("--task", required=True, help="the recipes' task part: demo, toy_lean, kimina_1_7b, ...")
    parser.add_argument("--methods", default=",".join(FIGURE_METHODS), help="comma-separated (default: %(default)s)")
    parser.add_argument("--seeds", default="1,2,3,4", help="comma-separated (default: %(default)s)")
    parser.add_argument("--budget", type=int, required=True, help="judged attempts per problem")
    parser.add_argument("--out-dir", type=Path, required=True, help="the job's folder (runs/, report/, ...)")
    parser.add_argument("--problems", default="", help="comma-separated problems always run")
    parser.add_argument("--choose", type=int, default=0, help="more problems chosen by base rate (default: 0)")
    defaults = Job.__dataclass_fields__
    for flag, about in (("candidates", "hardest candidates whose base rate is measured"),
                        ("base_samples", "base samples a candidate"), ("max_rate", "highest base rate chosen"),
                        ("per_run_gb", "GPU memory a verl run takes"), ("sampler_gb", "GPU memory the sampler takes"),
                        ("host_gb_per_run", "host memory a verl run takes"),
                        ("reserve_gb", "GPU memory kept for something beside the job"),
                        ("max_parallel", "at most this many verl runs at once (0: as the memory holds)"),
                        ("save_freq", "checkpoint every N steps, to resume a cut run (-1: none)"),
                        ("run_timeout_s", "end a run after this many seconds (0: never)"),
                        ("sampler_engine", "the sampler's engine: vllm | transformers"),
                        ("sampler_kv_cache_bytes", "the sampler's fixed vLLM KV cache")):
        default = defaults[flag].default
        parser.add_argument("--" + flag.replace("_", "-"), type=type(default), default=default,
                            help=f"{about} (default: %(default)s)")
    deprecated_alias(parser, "--sampler-backend", "--sampler-engine")
    parser.add_argument("--call", default="", help="how the job was called, kept in the report")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m sdpo_eval.discovery", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="the discovery job: problems, sampler baselines, verl runs, report")
    _run_flags(r)
    r.add_argument("--dry-run", action="store_true", help="print the commands only")
    r.add_argument("overrides", nargs="*", help="Hydra overrides for every run (after --)")
    p = sub.add_parser("pack", help="the report and the start-up table of a job's folder, from the runs there")
    p.add_argument("--out-dir", type=Path, required=True, help="the job's folder (the --out-dir of `run`)")
    p.add_argument("--task", required=True, help="the job's task")
    p.add_argument("--budget", type=int, required=True, help="the job's budget")
    p.add_argument("--call", default="", help="how the job was called, kept in the report")
    sub.add_parser("sample", help="the sampler (best_of_k, reprompt); --help for its flags", add_help=False)
    rep = sub.add_parser("report", help="discovery@k curves from attempt logs")
    rep.add_argument("--run-dir", type=Path, default=None, help="read every attempts.jsonl below this folder")
    rep.add_argument("--log", type=Path, action="append", default=[], help="attempt log file (repeatable)")
    rep.add_argument("--budget", type=int, required=True, help="attempts per problem B: discovery@k for k <= B")
    rep.add_argument("--n-boot", type=int, default=2000,
                     help="bootstrap resamples over problems (default: %(default)s)")
    rep.add_argument("--seed", type=int, default=0, help="bootstrap seed (default: %(default)s)")
    rep.add_argument("--out-prefix", type=Path, default=None,
                     help="output prefix: PREFIX.json, .png, .md (default <run-dir>/discovery)")
    deprecated_alias(rep, "--out", "--out-prefix")
    rep.add_argument("--task", default="", help="the task, kept in the report")
    rep.add_argument("--call", default="", help="how the runs were called, kept in the report")
    rep.add_argument("--base-rate", type=Path, action="append", default=[], help="a base_rate.json (repeatable)")
    rep.add_argument("--coverage", type=Path, help="merge's coverage.json: how far each run got")
    report_recheck.add_report_flags(rep)
    rep.add_argument("--count-defective", action="store_true",
                     help="count the problems whose statement --data flags as defective (left out by default)")
    m = sub.add_parser("merge", help="several calls' runs into one folder, the furthest copy of each run")
    m.add_argument("--chunk-dir", type=Path, action="append", required=True, help="an unpacked chunk; repeatable")
    m.add_argument("--out-dir", type=Path, help="the merged folder (runs/, coverage.json); required")
    deprecated_alias(m, "--out", "--out-dir")
    s = sub.add_parser("startup", help="the start-up table of launched runs")
    s.add_argument("--run-dir", type=Path, action="append", required=True, help="repeatable")
    s.add_argument("--out-prefix", type=Path, help="output prefix: PREFIX.json, .md; required")
    deprecated_alias(s, "--out", "--out-prefix")
    sub.add_parser("methods", help="the table of methods and their protocols")
    return parser


def _run(args: argparse.Namespace) -> int:
    from sdpo_eval.discovery.launcher import Job, execute

    if not args.dry_run and cli_checks.report([cli_checks.output_problem(args.out_dir, "--out-dir", folder=True)]):
        return 2
    fields = {k: getattr(args, k) for k in Job.__dataclass_fields__ if hasattr(args, k) and k not in
              ("methods", "seeds", "problems", "overrides", "out_dir")}
    job = Job(**fields, methods=tuple(_names(args.methods)), seeds=tuple(int(s) for s in _names(args.seeds)),
              problems=tuple(_names(args.problems)), overrides=tuple(args.overrides),
              out_dir=args.out_dir.expanduser())
    return execute(job, dry_run=args.dry_run)


def _without_defective(records: list[dict], args: argparse.Namespace) -> tuple[list[dict], dict[str, str]]:
    """The records without the problems whose statement --data flags as defective (`sdpo_data.statement_defects`:
    vacuous, trivially true, a phantom variable), and {problem: defect} of those left out; all of them with
    --count-defective."""
    from sdpo_data.statement_defects import flagged_rows, left_out

    flagged = {} if args.count_defective else flagged_rows([Path(p).expanduser() for p in args.data])
    defective = left_out(sorted({rec["problem"] for rec in records}), flagged, "counts them")
    return [rec for rec in records if rec["problem"] not in defective], defective


def _report(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from sdpo_eval.discovery.curves import read_attempts
    from sdpo_eval.discovery.report import build, save
    from sdpo_eval.discovery.summary import paired_lines

    run_dir = args.run_dir.expanduser() if args.run_dir else None
    logs = list(args.log) + (sorted(run_dir.rglob("attempts.jsonl")) if run_dir else [])
    if not logs and run_dir:
        parser.error(f"--run-dir {args.run_dir}: no attempts.jsonl under it (the runs/ folder of `discovery run`, "
                     "or give --log FILE)")
    if not logs:
        parser.error("give --run-dir or --log")
    records, defective = _without_defective(read_attempts(logs), args)
    records, checked = report_recheck.recheck_for_report(records, args.budget, args)
    report = build(records, args.budget, logs=logs, run_dir=run_dir, task=args.task, call=args.call,
                   base_rate_files=args.base_rate, coverage=args.coverage, recheck=checked, n_boot=args.n_boot,
                   seed=args.seed)
    report["left_out_defective"] = defective
    prefix = Path(args.out_prefix or ((run_dir or logs[0].parent) / "discovery")).expanduser()
    if cli_checks.report([cli_checks.output_problem(f"{prefix}.json", "--out-prefix")]):
        return 2
    save(report, prefix, report_recheck.markdown(checked))
    for method, row in report["methods"].items():
        marks = ", ".join(f"@{k}={v['value']:.2f}" for k, v in row["discovery_at"].items())
        print(f"{method} ({row['protocol'] or '?'}): {marks}")
    for line in paired_lines(report):
        print(line)
    print(f"{report_recheck.summary_line(checked)}\nwrote {prefix}.json, {prefix}.png and {prefix}.md")
    failed = report_recheck.unverified_error(checked, "--recheck-project/--recheck-command/--recheck-timeout-s")
    if failed:
        print(failed, file=sys.stderr)
    return 1 if failed else 0


def _other(args: argparse.Namespace) -> int:
    if args.command == "pack":
        from sdpo_eval.discovery.launcher import pack

        done = pack(args.out_dir.expanduser(), args.budget, args.task, args.call)
        print("no attempt log yet" if done is None else f"wrote {args.out_dir / 'report'}")
    elif args.command == "merge":
        from sdpo_eval.discovery.merge import merge

        coverage = merge(args.chunk_dir, args.out_dir)
        cut = [run for run, row in coverage["in"].items() if not row["finished"]]
        print(f"{len(coverage['in'])} runs in ({len(cut)} cut: {', '.join(cut) or 'none'}): "
              f"{args.out_dir / 'coverage.json'}")
    elif args.command == "startup":
        from sdpo_eval.discovery.startup import markdown, write

        print(markdown(write(args.run_dir, args.out_prefix)))
    else:
        for method in METHODS.values():
            print(f"{method.name:24} {method.protocol:8} {method.about}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """The CLI (module docstring); returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["sample"]:
        from sdpo_eval.discovery.sampler import main as sample

        return sample(argv[1:])
    parser = _parser()
    args = parser.parse_args(argv)
    needed = {"merge": "out_dir", "startup": "out_prefix"}.get(args.command)
    if needed and getattr(args, needed) is None:   # not required=True: the deprecated --out may give it
        parser.error(f"the following arguments are required: --{needed.replace('_', '-')}")
    try:
        if args.command == "run":
            return _run(args)
        if args.command == "report":
            return _report(args, parser)
        return _other(args)
    except (ValueError, FileNotFoundError, RuntimeError) as e:
        message = str(e)
        said = any(line.startswith("error:") for line in message.splitlines())   # a list of problems ends with it
        print(message if said else f"error: {message}", file=sys.stderr)
        return 2
