"""Sample Lean proofs from a prepared parquet and verify them with the Lean reward.

    # pass@k on miniF2F test: n samples per problem, unbiased pass@k for each k <= n
    python -m sdpo_eval.prover_eval passk --model AI-MO/Kimina-Prover-RL-1.7B \\
        --data ~/data/sdpo_lean/minif2f_kimina_test.parquet --n 32 --k 1,8,32 --out passk.json \\
        --recheck-project ~/recheck-ws --recheck-tool comparator

Verification goes through `reward.lean.score.verify_many` (Lean backend options: `--reward-kwarg key=value`,
e.g. backend=repl). Infrastructure results (infra=1: server down, timeouts after retries) are never
failures: they are left out of pass@k denominators and are counted separately; a pass@k run with any sample left
without a verdict exits 1, and `--resume` draws and judges those samples again. pass@k re-checks each valid sample
out of process against the reference statement before it counts (`sdpo_eval.report_recheck`; settings: the
`--recheck-*` flags of `lean_env.options.RecheckOptions`, as in `recheck` and `discovery report`): a rejected one is
a cheat (judged, not valid), one without a verdict is unverified (left out like infra, exit 1); `--no-recheck` skips
it and the report says so. Sample j of a problem uses seed `--seed + j` (j = 0-based sample index). pass@k logs each
sample as it is judged; a stop (Ctrl-C, SIGTERM) waits for the Lean checks in flight, then ends with one line giving
the exact `--resume` command (exit 130): with the same `--attempt-log` and `--seed` it draws only what the log lacks.
The best-of-k of the discovery figures is `python -m sdpo_eval.discovery sample` (`sdpo_eval.discovery.sampler`).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import sys
import uuid
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Sequence

from lean_env.cli_checks import lean_backend_problems
from lean_env.options import RecheckOptions
from sdpo_attempts.log import AttemptLog
from sdpo_attempts.pass_at_k import pass_at_k
from sdpo_attempts.valid import valid_record
from sdpo_data.statement_defects import left_out
from sdpo_eval.engines import Completion, Engine, EngineMissing, EngineOptions, ModelSpec, SamplingParams, load_engine
from sdpo_eval.report_recheck import ReportRecheck, recheck_samples, summary_line, unverified_error
from sdpo_options import cli_checks
from sdpo_options.flags import ClosestNamesParser, add_flags, deprecated_alias, from_flags, given_flags, options_of
from sdpo_options.stop import STOPPED_EXIT, held_stops, resume_command, stop_signals


def without_defective(problems: list[dict[str, Any]], count_defective: bool
                      ) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """The problems but those whose statement the data flags as defective (`extra_info.statement_defect`:
    `sdpo_data.statement_defects`), and {name: defect} of those left out (printed); all of them when asked."""
    flagged = {} if count_defective else {p["name"]: p["extra_info"]["statement_defect"] for p in problems
                                          if p["extra_info"].get("statement_defect")}
    defective = left_out([p["name"] for p in problems], flagged, "samples them")
    return [p for p in problems if p["name"] not in defective], defective


def load_problems(paths: Sequence[str | Path], names: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Rows {name, prompt, ground_truth, data_source, extra_info} from prepared parquet files, optionally chosen by
    name."""
    import difflib

    import pandas as pd

    rows = []
    for path in paths:
        for row in pd.read_parquet(Path(path).expanduser()).to_dict(orient="records"):
            rows.append({"name": row["extra_info"]["name"], "prompt": [dict(m) for m in row["prompt"]],
                         "ground_truth": row["reward_model"]["ground_truth"], "data_source": row["data_source"],
                         "extra_info": dict(row["extra_info"])})
    if names is None:
        return rows
    by_name = {r["name"]: r for r in rows}
    missing = [n for n in names if n not in by_name]
    if missing:
        hints = {n: difflib.get_close_matches(n, list(by_name), n=3) for n in missing}
        raise ValueError(f"problems not found in {list(map(str, paths))}: {hints}")
    return [by_name[n] for n in names]


class Verifier:
    """`reward.lean.score.verify_many` on one private event loop, so Lean backends (REPL processes, HTTP
    clients; `lean_env.backends.factory`) live across calls; `close()` shuts them down."""

    def __init__(self, reward_kwargs: dict[str, Any]):
        import reward.lean.score as lean_reward
        from lean_env.backends import factory

        self._reward, self._backends = lean_reward, factory
        self._kwargs, self.loop = reward_kwargs, asyncio.new_event_loop()

    def __call__(self, items: list[dict[str, Any]],
                 on_result: Callable[[int, dict[str, Any]], None] | None = None) -> list[dict[str, Any]]:
        """Items {solution_str, ground_truth, finish_reason} -> reward dicts, in order; `on_result(index, result)` as
        each is judged. A stop signal meanwhile is held until every check in flight is in, then raised
        (KeyboardInterrupt): `on_result` has seen each verdict by then (`sdpo_options.stop.held_stops`)."""
        with held_stops(self.loop):
            return self.loop.run_until_complete(self._reward.verify_many(items, on_result=on_result,
                                                                          **self._kwargs))

    def close(self) -> None:
        """Close the Lean backends and the event loop."""
        self.loop.run_until_complete(self._backends.aclose_backends())
        self.loop.close()


def _items(problem: dict[str, Any], completions: Sequence[Completion]) -> list[dict[str, Any]]:
    return [{"solution_str": c.text, "ground_truth": problem["ground_truth"], "finish_reason": c.finish_reason}
            for c in completions]


RECHECK_KEYS = frozenset(f.name for f in options_of(RecheckOptions))   # reward options with their own flags
PASSK_CHUNK = 16  # problems sampled together by an engine without its own batch size (vLLM)


def _logged_samples(path: str | None, seed: int) -> dict[tuple[str, str], dict[str, Any]]:
    """(problem, sample_key) -> record of the pass@k samples an attempt log already holds judged for base seed
    `seed`. An infra record is left out, so a resumed run draws that sample again (same seed) and judges it."""
    if not path or not Path(path).is_file():
        return {}
    records = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
    return {(r["problem"], r["sample_key"]): r for r in records
            if r.get("method") == "sampling" and r.get("seed") == seed and r.get("sample_key") and not r.get("infra")}


def pass_at_k_report(
    problems: Sequence[dict[str, Any]], engine: Engine, params: SamplingParams, n: int, ks: Sequence[int],
    reward_kwargs: dict[str, Any], attempt_log: str | None = None, resume: bool = False, *,
    recheck: ReportRecheck | None,
) -> dict[str, Any]:
    """Sample n per problem, verify, and compute unbiased pass@k over the judged (non-infra) samples. Samples are
    drawn a batch at a time (the transformers engine's batch_size, else PASSK_CHUNK problems), and each is logged as
    soon as it is judged; a stop waits for the checks in flight. With `resume`, samples the attempt log already
    holds (same base seed, same sample seed) are read from it, not drawn again. Every valid sample is then
    re-checked out of process with `recheck` before it counts (`sdpo_eval.report_recheck`; None: not re-checked, and
    the report's `recheck` block says so)."""
    bad = [k for k in ks if not 1 <= k <= n]
    if bad:
        raise ValueError(f"every k must be in 1..n={n}, got {bad}")
    logged = _logged_samples(attempt_log, params.seed) if resume else {}
    log = _attempt_log(attempt_log, "sampling", params.seed)
    verdicts: dict[str, list[dict[str, Any]]] = {p["name"]: [] for p in problems}
    for (name, _), record in logged.items():
        if name in verdicts:
            verdicts[name].append(record)
    todo = [(p, params.seed + j) for p in problems for j in range(n)
            if (p["name"], f"seed={params.seed + j}") not in logged]
    step = getattr(engine, "batch_size", PASSK_CHUNK * n)   # the transformers engine batches so anyway
    verifier = Verifier(reward_kwargs)
    try:
        for start in range(0, len(todo), step):
            part = todo[start:start + step]
            completions = engine.generate([p["prompt"] for p, _ in part], params, seeds=[s for _, s in part])

            def judged(i: int, result: dict[str, Any], part=part, completions=completions) -> None:
                (problem, seed), completion = part[i], completions[i]
                verdicts[problem["name"]].append(dict(result, sample_key=f"seed={seed}", proof=completion.text
                                                      if valid_record(result) else None))
                if log is not None:
                    log.record(1, attempt_samples(problem["name"], [completion], [result], [seed]))

            verifier([it for (p, _), c in zip(part, completions) for it in _items(p, [c])], on_result=judged)
    finally:
        verifier.close()
    for records in verdicts.values():   # judged in completion order; reported in seed order
        records.sort(key=lambda r: int(r["sample_key"].removeprefix("seed=")))
    checked = recheck_samples(problems, verdicts, recheck)
    per_problem = []
    for problem in problems:
        res = verdicts[problem["name"]]
        judged = [r for r in res if not r.get("infra")]
        valid = sum(1 for r in judged if valid_record(r))
        per_problem.append({"name": problem["name"], "samples": n, "judged": len(judged), "valid": valid,
                            "infra": n - len(judged), "verdicts": dict(Counter(r["verdict"] for r in res))})
    summary = {}
    for k in ks:
        usable = [p for p in per_problem if p["judged"] >= k]
        values = [pass_at_k(p["judged"], p["valid"], k) for p in usable]
        summary[str(k)] = {"pass_at_k": sum(values) / len(values) if values else None, "problems": len(usable),
                           "problems_without_k_judged_samples": len(per_problem) - len(usable)}
    return {"pass_at_k": summary, "infra_samples": sum(p["infra"] for p in per_problem),
            "samples": n * len(problems), "resumed_samples": sum(1 for name, _ in logged if name in verdicts),
            "recheck": checked, "problems": per_problem}


def _attempt_log(path: str | None, method: str, seed: int, run_id: str | None = None):
    if not path:
        return None
    return AttemptLog(path=path, method=method, run_id=run_id or f"{method}-{uuid.uuid4().hex[:8]}", seed=seed)


def attempt_samples(
    name: str, completions: Sequence[Completion], results: Sequence[dict], seeds: Sequence[int]
) -> list[dict]:
    """AttemptLog samples; `sample_key` holds the per-sample seed (the record's `seed` is the run's base seed)."""
    return [{"problem": name, "response_tokens": c.num_tokens, "verdict": r.get("verdict"), "score": r["score"],
             "infra": r.get("infra", 0.0), "sample_key": f"seed={s}", "proof": c.text if valid_record(r) else None}
            for c, r, s in zip(completions, results, seeds)]


def _reward_kwargs(pairs: Sequence[str], args: argparse.Namespace) -> dict[str, Any]:
    """The Lean reward's options: `--reward-kwarg key=value` and the `--recheck-*` flags given (the flags' home is
    `RecheckOptions`; a re-check key through `--reward-kwarg` still works this release, with a note)."""
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise ValueError(f"--reward-kwarg needs key=value, got {pair!r}")
        if key in RECHECK_KEYS:
            flag = "--" + key.replace("_", "-")
            print(f"note: --reward-kwarg {key}= is deprecated, use {flag} (the old spelling goes in the next release)",
                  file=sys.stderr)
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    flags = given_flags(RecheckOptions, args)
    twice = sorted(set(flags) & set(out))
    if twice:
        raise ValueError(f"{', '.join(twice)} given both as a flag and as --reward-kwarg (give the --recheck-* flag "
                         "only)")
    return {**out, **flags}


def parse_ks(text: str | None, n: int) -> list[int]:
    """`--k` as integers, each in 1..n (ValueError naming both flags otherwise); not given: 1 and n, as in math_eval."""
    if text is None:
        return sorted({1, n})
    try:
        ks = [int(k) for k in text.split(",")]
    except ValueError:
        raise ValueError(f"--k {text}: comma-separated integers, e.g. --k 1,8") from None
    if n < 1 or any(not 1 <= k <= n for k in ks):
        raise ValueError(f"--k {text} with --n {n}: every k must be in 1..n (fix --k, or sample more with --n)")
    return ks


MAKE_DATA = ("a prepared parquet: python -m sdpo_data.prepare lean --dataset minif2f --input /path/to/minif2f.jsonl "
             "--prompt-style kimina --out-dir ~/data/sdpo_lean; README, Main GPU jobs")
SWITCH_BACKEND = ("start a Kimina server and set LEAN_SERVER_API_URL and LEAN_SERVER_API_KEY (docs/lean.md), or check "
                  "with a local REPL: --reward-kwarg backend=repl --reward-kwarg workspace=/path/to/mathlib-ws")


def reward_options_problem(reward_kwargs: dict[str, Any]) -> None:
    """ValueError naming `--reward-kwarg` when the Lean reward refuses `reward_kwargs` (an unknown key, with the
    closest ones; a bad value): bad input, checked with the other arguments."""
    from reward.lean.score import resolve_config

    try:
        resolve_config(**reward_kwargs)
    except ValueError as e:
        raise ValueError(f"--reward-kwarg: {e} (python -m reward.lean.cli verify --help lists the options)") from None


def lean_problems(reward_kwargs: dict[str, Any]) -> list[str]:
    """Why the Lean reward of `reward_kwargs` (valid options: `reward_options_problem`) cannot check proofs here (no
    backend), in seconds."""
    from reward.lean.score import resolve_config

    return lean_backend_problems(resolve_config(**reward_kwargs).backend_options, SWITCH_BACKEND)


def _file_problems(args: argparse.Namespace) -> list[str | None]:
    """The --data files that are not there, the outputs that cannot be written."""
    return [*(cli_checks.input_problem(path, "--data", MAKE_DATA) for path in args.data),
            cli_checks.output_problem(args.out, "--out") if args.out else None,
            cli_checks.output_problem(args.attempt_log, "--attempt-log") if args.attempt_log else None]


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", required=True, help="HF id, folder or .gguf file")
    parser.add_argument("--gguf-file", default=None, help="the .gguf file inside --model's folder, if it is one")
    parser.add_argument("--data", action="append", required=True, help="prepared parquet (repeatable)")
    parser.add_argument("--problems", default=None, help="comma-separated names (default: all rows)")
    parser.add_argument("--temperature", type=float, default=0.6, help="sampling temperature (default: %(default)s)")
    parser.add_argument("--top-p", type=float, default=0.95, help="nucleus sampling mass (default: %(default)s)")
    parser.add_argument("--max-new-tokens", type=int, default=8096,
                        help="reply budget in tokens (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0,
                        help="sample j of a problem uses seed + j (default: %(default)s)")
    add_flags(parser, EngineOptions)
    deprecated_alias(parser, "--backend", "--engine")
    parser.add_argument("--reward-kwarg", action="append", default=[], help="reward.lean option key=value")
    add_flags(parser, RecheckOptions, unset=True)
    parser.add_argument("--attempt-log", default=None, help="append every sample to this JSONL attempt log")
    parser.add_argument("--out", type=Path, default=None, help="JSON summary")


def main(argv: list[str] | None = None) -> int:
    """The CLI (module docstring); returns the exit code."""
    parser = ClosestNamesParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    passk = sub.add_parser("passk", help="unbiased pass@k")
    _common(passk)
    passk.add_argument("--n", type=int, required=True, help="samples per problem")
    passk.add_argument("--k", default=None, help="comma-separated k values, each <= n (default: 1 and n)")
    passk.add_argument("--resume", action="store_true",
                       help="take the samples --attempt-log already holds (same --seed) instead of drawing them again")
    passk.add_argument("--no-recheck", action="store_true",
                       help="count valid samples without the out-of-process re-check (its settings: "
                            "--recheck-project DIR etc.); the report says it is not re-checked")
    passk.add_argument("--count-defective", action="store_true",
                       help="also sample the problems whose statement the data flags as defective "
                            "(extra_info.statement_defect; left out by default)")
    argv = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(argv)
    if cli_checks.report(_file_problems(args)):
        return 2
    try:
        reward_kwargs = _reward_kwargs(args.reward_kwarg, args)
        reward_options_problem(reward_kwargs)
        names = [n.strip() for n in args.problems.split(",") if n.strip()] if args.problems else None
        problems, defective = without_defective(load_problems(args.data, names), args.count_defective)
        spec = ModelSpec.parse(args.model, args.gguf_file)
        ks = parse_ks(args.k, args.n)   # before any model loads
        if getattr(args, "resume", False) and not args.attempt_log:
            raise ValueError("--resume needs --attempt-log (the log of the run to continue)")
        engine_options = from_flags(EngineOptions, args)
    except (ValueError, FileNotFoundError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if cli_checks.report(lean_problems(reward_kwargs)):   # before any model loads: nothing would be verified
        return 3
    try:
        recheck = _report_recheck(args, reward_kwargs)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    params = SamplingParams(temperature=args.temperature, top_p=args.top_p, max_new_tokens=args.max_new_tokens,
                            seed=args.seed)
    try:
        with stop_signals():
            report = _sample(args, problems, load_engine(spec, engine_options), params, ks, reward_kwargs, recheck)
            report["left_out_defective"] = defective
    except EngineMissing as e:
        print(f"error: {e}", file=sys.stderr)
        return 3
    except KeyboardInterrupt:
        print(f"\n{stopped_line(args.attempt_log, argv)}", file=sys.stderr)
        return STOPPED_EXIT
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2, ensure_ascii=False))
    settings = "--recheck-project/--recheck-command/--recheck-timeout-s"
    failed = unverified_error(report["recheck"], settings) if "recheck" in report else None
    if failed:
        print(failed, file=sys.stderr)
    unjudged = infra_error(report, args.attempt_log)
    if unjudged:
        print(unjudged, file=sys.stderr)
    return 1 if failed or unjudged else 0


def _sample(args: argparse.Namespace, problems: list[dict[str, Any]], engine: Engine, params: SamplingParams,
            ks: Sequence[int], reward_kwargs: dict[str, Any], recheck: ReportRecheck | None) -> dict[str, Any]:
    """Run pass@k and print its results; -> the JSON report."""
    config = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}
    passk = pass_at_k_report(problems, engine, params, args.n, ks, reward_kwargs, args.attempt_log, args.resume,
                             recheck=recheck)
    report = {"config": config, **passk}
    for k, row in report["pass_at_k"].items():
        value = "n/a" if row["pass_at_k"] is None else f"{row['pass_at_k']:.4f}"
        print(f"pass@{k}: {value} over {row['problems']} problems")
    print(f"infra samples (excluded): {report['infra_samples']} / {report['samples']}")
    print(summary_line(report["recheck"]))
    return report


def stopped_line(attempt_log: str | None, argv: Sequence[str]) -> str:
    """The one line a stopped run ends with: where its judged samples are and the exact command that continues."""
    if not attempt_log:
        return ("interrupted: this run had no --attempt-log, so its samples are not kept (pass --attempt-log FILE: "
                "each sample is written as it is judged, and the same command with --resume continues)")
    return (f"interrupted: the judged samples are in {attempt_log}; continue with: "
            f"{resume_command('sdpo_eval.prover_eval', argv)}")


def infra_error(report: dict[str, Any], attempt_log: str | None) -> str | None:
    """The `error:` line of a pass@k run whose samples did not all get a verdict (infra: the backend failed or timed
    out after its retries), naming how to judge them; None when every sample was judged."""
    if not report.get("infra_samples"):
        return None
    how = ("run the same command again with --resume: it draws and judges only those" if attempt_log else
           "this run kept no attempt log: with --attempt-log LOG a run keeps its samples, and a later --resume with "
           "the same LOG draws and judges only the unjudged ones")
    return (f"error: {report['infra_samples']} of {report['samples']} samples got no verdict (infrastructure: the "
            f"Lean backend failed or timed out); pass@k above leaves them out ({how})")


def _report_recheck(args: argparse.Namespace, reward_kwargs: dict[str, Any]) -> ReportRecheck | None:
    """pass@k's re-check of its valid samples (the reward's `recheck_*` options), None with --no-recheck; ValueError
    naming the fix."""
    if args.no_recheck:
        return None
    from reward.lean.score import resolve_config

    return ReportRecheck.from_options(resolve_config(**reward_kwargs).recheck, "--recheck-project DIR")


if __name__ == "__main__":
    sys.exit(main())
