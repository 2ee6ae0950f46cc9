"""Test-time discovery: per-problem TTRL runs (SDPO, GRPO) and best-of-k sampling on the same budget.

    python -m sdpo_eval.discovery run --recipe sdpo_kimina_1_7b --problems mathd_algebra_10,imo_1983_p6 \\
        --budget 256 --out-dir ~/sdpo_runs/discovery [--methods sdpo,grpo,best_of_k] [--seed 0] [-- hydra overrides]
    python -m sdpo_eval.discovery report --run-dir ~/sdpo_runs/discovery --budget 256 \
        --data ~/data/sdpo_lean/minif2f_kimina_test.parquet --recheck-project ~/recheck-ws   # discovery.png/.json/.md

`--parallel N --gpus 0,1,...` runs N at a time, each pinned to its own equal share of the GPUs.

`run` starts, for every (method, problem), a fresh `python -m verl.trainer.main_ppo +recipe=<method>_<model>
sdpo.ttrl.theorem=<name> sdpo.ttrl.stop_on_success=true sdpo.ttrl.max_attempts=<budget> sdpo.attempt_log=...`
process, so each problem starts from the base checkpoint. best_of_k runs `sdpo_eval.prover_eval best-of-k`
once for all problems with the recipe's model, data files, sampling parameters (temperature, top-p,
max response length), rollout.n as batch size, and reward options, read from the composed recipe.
Logs: <out-dir>/<method>/<problem>/attempts.jsonl (best_of_k: <out-dir>/best_of_k/attempts.jsonl),
status.json next to each. Finished runs (status rc 0) are skipped unless --force.

`run-set` (`sdpo_eval.discovery_set`) instead starts one process per (method, seed) that trains on every problem at
once (set-TTRL, `sdpo.ttrl.theorems`), best-of-k included as the same run without actor updates.

`report` reads every attempts.jsonl under --run-dir and computes discovery@k, the fraction of problems
solved within k judged attempts (infra samples do not count), averaged over runs per problem and over
problems, with a 95% percentile bootstrap over problems, and each method's paired difference to each baseline
(`sdpo_eval.discovery_curves`). Runs cut before their budget count as far as they got (`covered_k`,
`covered_k_pairs`, `reached`). It writes <prefix>.json, <prefix>.png and <prefix>.md (each problem's first
success per run).
Before it counts, each run's first success is re-checked out of process against the reference statement in --data
(`sdpo_eval.report_recheck`: a rejected proof is a cheat, not a discovery; one the tool gives no verdict on is
unverified and the report exits 1); --no-recheck reports the fast path's verdicts and says so.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, Sequence

from lean_env import cli_checks
from sdpo_eval import report_recheck, run_checks
from sdpo_eval.discovery_curves import discovery_report, read_attempts
from sdpo_eval.launch import finished, gpu_groups, launch

TRAINED_METHODS = ("sdpo", "grpo")
METHODS = TRAINED_METHODS + ("best_of_k",)


def model_part(recipe: str) -> str:
    """`sdpo_kimina_1_7b` -> `kimina_1_7b` (the part shared by the sdpo_/grpo_ twins)."""
    for prefix in TRAINED_METHODS:
        if recipe.startswith(prefix + "_"):
            return recipe[len(prefix) + 1:]
    raise ValueError(f"recipe {recipe!r} must start with one of {[m + '_' for m in TRAINED_METHODS]}")


def trainer_command(method: str, recipe: str, problem: str, budget: int, run_dir: Path, seed: int,
                    overrides: Sequence[str] = (), save_checkpoints: bool = False,
                    python: str = sys.executable) -> list[str]:
    """argv of one TTRL run of `method` (sdpo | grpo) on `problem` from the base model."""
    if method not in TRAINED_METHODS:
        raise ValueError(f"trained methods are {TRAINED_METHODS}, got {method!r}")
    model = model_part(recipe)
    command = [
        python, "-m", "verl.trainer.main_ppo",
        f"+recipe={method}_{model}",
        f"sdpo.ttrl.theorem={problem}",
        "sdpo.ttrl.stop_on_success=true",
        f"sdpo.ttrl.max_attempts={budget}",
        f"sdpo.attempt_log={run_dir / 'attempts.jsonl'}",
        f"trainer.experiment_name={method}_{model}_{problem}_s{seed}",
        f"trainer.default_local_dir={run_dir / 'checkpoints'}",
        f"data.seed={seed}",
    ]
    if not save_checkpoints:
        command.append("trainer.save_freq=-1")
    return command + list(overrides)


def compose_recipe(recipe: str, overrides: Sequence[str] = ()) -> dict[str, Any]:
    """The resolved config of `+recipe=<recipe>` over verl's ppo_trainer (as main_ppo composes it); ValueError with
    Hydra's message for a recipe or override that does not compose."""
    import verl  # noqa: F401  (loads the sdpo-lean plugin: Hydra search path and resolvers)
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.errors import HydraException
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    config_dir = str(Path(verl.__file__).parent / "trainer" / "config")
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=config_dir, version_base=None):
            cfg = compose(config_name="ppo_trainer", overrides=[f"+recipe={recipe}", *overrides])
        return OmegaConf.to_container(cfg, resolve=True)
    except (HydraException, OmegaConfBaseException) as e:
        raise ValueError(f"+recipe={recipe} with {list(overrides)} does not compose: {e}") from e
    finally:
        GlobalHydra.instance().clear()


def best_of_k_command(cfg: dict[str, Any], problems: Sequence[str], budget: int, log: Path, seed: int,
                      python: str = sys.executable) -> list[str]:
    """argv of the best-of-k sampler with the composed recipe's model, data, sampling and reward settings."""
    rollout = cfg["actor_rollout_ref"]["rollout"]
    files = (cfg["data"].get("sdpo_ttrl") or {}).get("files") or [cfg["data"]["train_files"], cfg["data"]["val_files"]]
    command = [python, "-m", "sdpo_eval.prover_eval", "best-of-k",
               "--model", str(cfg["actor_rollout_ref"]["model"]["path"]),
               "--problems", ",".join(problems), "--budget", str(budget), "--batch", str(rollout["n"]),
               "--temperature", str(rollout["temperature"]), "--top-p", str(rollout["top_p"]),
               "--max-new-tokens", str(cfg["data"]["max_response_length"]), "--seed", str(seed),
               "--attempt-log", str(log), "--out", str(log.with_name("summary.json"))]
    for path in files if isinstance(files, list) else [files]:
        command += ["--data", str(path)]
    reward_kwargs = ((cfg.get("reward") or {}).get("custom_reward_function") or {}).get("reward_kwargs") or {}
    for key, value in reward_kwargs.items():
        if value is not None:
            command += ["--reward-kwarg", f"{key}={json.dumps(value) if not isinstance(value, str) else value}"]
    return command


def _pinned(method: str, command: list[str], gpus: list[str] | None) -> list[str]:
    """A trainer run on a GPU group uses all of it."""
    if gpus is None or method not in TRAINED_METHODS:
        return command
    return [*command, f"trainer.n_gpus_per_node={len(gpus)}"]


def run(recipe: str, problems: Sequence[str], budget: int, out_dir: Path, methods: Sequence[str], seed: int,
        overrides: Sequence[str], force: bool = False, dry_run: bool = False, save_checkpoints: bool = False,
        parallel: int = 1, gpus: Sequence[str] = ()) -> list[dict]:
    """Launch every (method, problem) run that has not finished, `parallel` at a time, each pinned to its own
    group of `gpus` (none given: one at a time, unpinned); returns [{method, problem, command, returncode}] in
    launch order. Ctrl-C stops the sweep: no queued run starts after it."""
    import threading
    from concurrent.futures import ThreadPoolExecutor, as_completed
    from queue import Queue

    from tqdm.auto import tqdm

    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise ValueError(f"unknown method(s) {unknown}; known: {list(METHODS)}")
    groups = gpu_groups(gpus, parallel)
    if groups and any(o.lstrip("+").startswith("trainer.n_gpus_per_node=") for o in overrides):
        raise ValueError("with --gpus each run's trainer.n_gpus_per_node is its group size; drop that override")
    jobs: list[tuple[str, str | None, list[str], Path]] = []
    for method in methods:
        if method == "best_of_k":
            run_dir = out_dir / "best_of_k"
            cfg = compose_recipe(f"sdpo_{model_part(recipe)}", [f"sdpo.ttrl.theorem={problems[0]}", *overrides])
            command = best_of_k_command(cfg, problems, budget, run_dir / "attempts.jsonl", seed)
            jobs.append((method, None, command, run_dir))
            continue
        for problem in problems:
            run_dir = out_dir / method / problem
            jobs.append((method, problem, trainer_command(method, recipe, problem, budget, run_dir, seed, overrides,
                                                          save_checkpoints), run_dir))
    if dry_run:  # an example assignment: real runs take whichever group is free
        done = []
        for i, (method, problem, command, _) in enumerate(jobs):
            group = groups[i % len(groups)] if groups else None
            command = _pinned(method, command, group)
            print((f"CUDA_VISIBLE_DEVICES={','.join(group)} " if group else "") + " ".join(command))
            done.append({"method": method, "problem": problem, "command": command, "returncode": None})
        return done

    free: Queue = Queue()
    for group in groups or [None]:
        free.put(group)
    stop = threading.Event()

    def execute(method: str, problem: str | None, command: list[str], run_dir: Path) -> tuple[list[str], int | None]:
        if finished(run_dir) and not force:
            return command, 0
        group = free.get()
        try:
            if stop.is_set():
                return command, None
            command = _pinned(method, command, group)
            rc = launch(command, run_dir, group)
        finally:
            free.put(group)
        if rc != 0:
            print(run_checks.failure_line(f"{method} {problem or ''}".strip(), rc, run_dir), file=sys.stderr)
        return command, rc

    done: list[dict | None] = [None] * len(jobs)
    with ThreadPoolExecutor(max_workers=parallel) as pool:
        futures = {pool.submit(execute, *job): i for i, job in enumerate(jobs)}
        try:
            for future in tqdm(as_completed(futures), total=len(jobs), desc="discovery runs"):
                i = futures[future]
                command, rc = future.result()
                done[i] = {"method": jobs[i][0], "problem": jobs[i][1], "command": command, "returncode": rc}
        except BaseException:
            stop.set()
            pool.shutdown(wait=True, cancel_futures=True)
            raise
    return done


def _parser() -> argparse.ArgumentParser:
    from sdpo_eval.discovery_set import SAMPLED_METHODS, SET_METHODS

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="launch TTRL / best-of-k runs, one process per problem")
    r.add_argument("--recipe", required=True, help="an sdpo_<model> or grpo_<model> recipe")
    r.add_argument("--problems", required=True, help="comma-separated theorem names")
    r.add_argument("--budget", type=int, required=True, help="judged attempts per problem")
    r.add_argument("--out-dir", type=Path, required=True, help="one sub-folder per problem and method")
    r.add_argument("--methods", default=",".join(METHODS), help="comma-separated methods (default: %(default)s)")
    r.add_argument("--seed", type=int, default=0, help="the runs' seed (default: %(default)s)")
    r.add_argument("--force", action="store_true", help="rerun finished runs")
    r.add_argument("--dry-run", action="store_true", help="print the commands only")
    r.add_argument("--save-checkpoints", action="store_true", help="keep trainer checkpoints (off: save_freq=-1)")
    r.add_argument("--parallel", type=int, default=1,
                   help="runs at once, each on its own equal share of --gpus (default: %(default)s)")
    r.add_argument("--gpus", default="", help="comma-separated GPU ids to share out among the runs "
                   "(with --parallel > 1 the default is CUDA_VISIBLE_DEVICES); each run is pinned to its group")
    r.add_argument("overrides", nargs="*", help="extra Hydra overrides for every run (after --)")
    s = sub.add_parser("run-set", help="set-TTRL: one process per (method, seed) over every problem")
    s.add_argument("--model", required=True, help="the recipes' model part, e.g. kimina_1_7b, toy_lean, demo")
    s.add_argument("--problems", required=True, help="comma-separated problem names")
    s.add_argument("--budget", type=int, required=True, help="judged attempts per problem")
    s.add_argument("--out-dir", type=Path, required=True, help="one sub-folder per method and seed")
    s.add_argument("--methods", default="best_of_k,grpo,sdpo",
                   help=f"comma-separated, of {sorted([*SET_METHODS, *SAMPLED_METHODS])} (default: %(default)s)")
    s.add_argument("--seeds", default="1",
                   help="comma-separated seeds (data.seed, rollout.seed) (default: %(default)s)")
    s.add_argument("--force", action="store_true", help="rerun finished runs")
    s.add_argument("--dry-run", action="store_true", help="print the commands only")
    s.add_argument("overrides", nargs="*", help="extra Hydra overrides for every run (after --)")
    rep = sub.add_parser("report", help="discovery@k curves from attempt logs")
    rep.add_argument("--run-dir", type=Path, default=None, help="read every attempts.jsonl below this folder")
    rep.add_argument("--log", type=Path, action="append", default=[], help="attempt log file (repeatable)")
    rep.add_argument("--budget", type=int, required=True, help="attempts per problem B: discovery@k for k <= B")
    rep.add_argument("--n-boot", type=int, default=2000,
                     help="bootstrap resamples over problems (default: %(default)s)")
    rep.add_argument("--seed", type=int, default=0, help="bootstrap seed (default: %(default)s)")
    rep.add_argument("--out", type=Path, default=None, help="output prefix (default <run-dir>/discovery)")
    report_recheck.add_report_flags(rep)
    return parser


def _names(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _launch_runs(args) -> int:
    if not args.dry_run and cli_checks.report([cli_checks.output_problem(args.out_dir, "--out-dir", folder=True)]):
        return 2
    if args.command == "run-set":
        from sdpo_eval.discovery_set import run_set

        results = run_set(args.model, _names(args.problems), args.budget, args.out_dir.expanduser(),
                          _names(args.methods), [int(s) for s in _names(args.seeds)], args.overrides, args.force,
                          args.dry_run)
    else:
        gpu_list = args.gpus or (os.environ.get("CUDA_VISIBLE_DEVICES", "") if args.parallel > 1 else "")
        results = run(args.recipe, _names(args.problems), args.budget, args.out_dir.expanduser(),
                      _names(args.methods), args.seed, args.overrides, args.force, args.dry_run,
                      args.save_checkpoints, args.parallel, _names(gpu_list))
    return 1 if [r for r in results if r["returncode"] not in (0, None)] else 0


def main(argv: list[str] | None = None) -> int:
    """The CLI (module docstring); returns the exit code."""
    from sdpo_eval.discovery_summary import first_success_table, paired_lines, plot_report

    parser = _parser()
    args = parser.parse_args(argv)
    try:
        if args.command in ("run", "run-set"):
            return _launch_runs(args)
        logs = list(args.log) + (sorted(args.run_dir.expanduser().rglob("attempts.jsonl")) if args.run_dir else [])
        if not logs and args.run_dir:
            parser.error(f"--run-dir {args.run_dir}: no attempts.jsonl under it (the folder `discovery run` or "
                         "`run-set` wrote to, or give --log FILE)")
        if not logs:
            parser.error("give --run-dir or --log")
        records, checked = report_recheck.recheck_for_report(read_attempts(logs), args.budget, args)
        report = {**discovery_report(records, args.budget, args.n_boot, args.seed), "recheck": checked}
    except (ValueError, FileNotFoundError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    prefix = args.out or ((args.run_dir or logs[0].parent) / "discovery")
    prefix = Path(prefix).expanduser()
    if cli_checks.report([cli_checks.output_problem(f"{prefix}.json", "--out")]):
        return 2
    prefix.parent.mkdir(parents=True, exist_ok=True)
    Path(f"{prefix}.json").write_text(json.dumps(report, indent=2))
    plot_report(report, Path(f"{prefix}.png"))
    Path(f"{prefix}.md").write_text(first_success_table(report) + report_recheck.markdown(checked))
    for method, row in report["methods"].items():
        marks = ", ".join(f"@{k}={v['value']:.2f}" for k, v in row["discovery_at"].items())
        print(f"{method}: {marks}")
    for line in paired_lines(report):
        print(line)
    print(f"{report_recheck.summary_line(checked)}\nwrote {prefix}.json, {prefix}.png and {prefix}.md")
    failed = report_recheck.unverified_error(checked, "--recheck-project/--recheck-command/--recheck-timeout-s")
    if failed:
        print(failed, file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
