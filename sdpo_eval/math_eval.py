r"""Few-shot MATH evaluation of one or two models: accuracy with intervals, pass@k, maj@k, a paired comparison.

    python -m sdpo_eval.math_eval --model Qwen/Qwen3-1.7B --subjects algebra,number_theory --limit-per-subject 100
    python -m sdpo_eval.math_eval --model m --input math500.jsonl --n 8 --temperature 0.6 --k 1,8 --sample-log s.jsonl
    python -m sdpo_eval.math_eval --model m --input math500.jsonl --n 8 --temperature 0.6 --sample-log s.jsonl --resume
    python -m sdpo_eval.math_eval --model base/ --model tuned/ --out math.json       # side by side + paired difference
    python -m sdpo_eval.math_eval --model deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B --grading-prompt-opens-think true

Problems: EleutherAI/hendrycks_math (`--split`, `--subjects`) or `--input` (JSONL/JSON/parquet in the MATH, MATH-500
or a subject-less format; see `sdpo_data.math_rows`). Prompts: Minerva 4-shot (`math_prompts`), as chat turns when
the tokenizer has a chat template, else raw "Problem:/Solution:" text. Grading: `reward.math.grader` (the RL
reward's grader, with its hard time limit; a reply whose comparison runs past it counts as wrong, a grader failure
is infra and left out of every count), with the `--grading-*` flags of `reward.math.options.MathGradingOptions`
(`--grading-prompt-opens-think true` when the chat template ends the prompt inside `<think>`). Sample j of a
problem uses seed `sample_seed(--seed, problem id, j)`, so a problem's samples do not depend on the selection.
Every argument is checked, the outputs (`--out`, `--sample-log`) are tried for writing and the problems are loaded
before any model is. Each sample is written to `--sample-log` as soon as it is graded; a stop (Ctrl-C, SIGTERM) ends
with one line giving the exact `--resume` command (exit 130), which then draws only the samples the log lacks.
"""
from __future__ import annotations

import argparse
import gc
import hashlib
import json
import sys
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from reward.math.grader import Grade, grade
from reward.math.options import FLAG_PREFIX, MathGradingOptions
from sdpo_data.math_rows import HF_DATASET, MathProblem, load_math, parse_subjects
from sdpo_eval.engines import Completion, Engine, EngineMissing, EngineOptions, ModelSpec, SamplingParams, load_engine
from sdpo_eval.math_prompts import MINERVA_EXEMPLARS, RAW_STOP, math_prompt
from sdpo_eval.math_scoring import compare, format_table, score_table
from sdpo_eval.sample_log import SampleLog, open_log
from sdpo_options import cli_checks
from sdpo_options.flags import ClosestNamesParser, add_flags, deprecated_alias, from_flags
from sdpo_options.stop import STOPPED_EXIT, resume_command, stop_signals

CHUNK = 256            # samples per generate() call of an engine without its own batch size (vLLM)
GRADING_THREADS = 4    # concurrent gradings (each runs in a `reward.math.grader` worker process)


def sample_seed(base_seed: int, problem_id: str, sample: int) -> int:
    """A 31-bit seed from sha256(base seed, problem id, sample index): stable across selections and runs."""
    digest = hashlib.sha256(f"{base_seed}/{problem_id}/{sample}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def _parser() -> argparse.ArgumentParser:
    parser = ClosestNamesParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", action="append", required=True, help="HF id, folder or .gguf file (twice: compare)")
    parser.add_argument("--gguf-file", default=None, help="GGUF file name inside the (single) --model folder")
    parser.add_argument("--input", default=None, help="local problems file (.jsonl/.json/.parquet) instead of the hub")
    parser.add_argument("--subjects", default="all", help="comma-separated MATH subjects, or all")
    parser.add_argument("--split", default="test", help="MATH split read from the hub (default: %(default)s)")
    parser.add_argument("--limit-per-subject", type=int, default=None,
                        help="at most this many problems per subject (default: all)")
    parser.add_argument("--num-shots", type=int, default=4,
                        help="worked examples before each problem (default: %(default)s)")
    parser.add_argument("--n", type=int, default=1, help="samples per problem (default: %(default)s)")
    parser.add_argument("--k", default=None, help="comma-separated k for pass@k and maj@k (default: 1 and n)")
    parser.add_argument("--max-new-tokens", type=int, default=1024,
                        help="reply budget in tokens (default: %(default)s)")
    parser.add_argument("--temperature", type=float, default=0.0,
                        help="sampling temperature; 0 is greedy (default: %(default)s)")
    parser.add_argument("--top-p", type=float, default=1.0, help="nucleus sampling mass (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0,
                        help="base seed; each (problem, sample) draws its own from it (default: %(default)s)")
    add_flags(parser, MathGradingOptions, prefix=FLAG_PREFIX)
    add_flags(parser, EngineOptions)
    deprecated_alias(parser, "--backend", "--engine")
    parser.add_argument("--sample-log", type=Path, default=None,
                        help="per-sample JSONL log written as each sample is graded (prompt, completion, verdict, "
                             "seed); --resume continues it")
    deprecated_alias(parser, "--log", "--sample-log")   # --log is an input (a log to read) in the other tools
    parser.add_argument("--resume", action="store_true", help="continue --sample-log: skip the samples it holds")
    parser.add_argument("--out", type=Path, default=None, help="JSON summary (tables, comparison, per-problem results)")
    return parser


def _check(parser: argparse.ArgumentParser, args: argparse.Namespace) -> tuple[int, ...]:
    """Every argument error, before anything is loaded; returns the k values."""
    if len(args.model) > 2:
        parser.error("at most two --model values (one model, or two to compare)")
    if args.gguf_file and len(args.model) != 1:
        parser.error("--gguf-file needs exactly one --model folder; pass .gguf paths to --model to compare GGUF models")
    if not 0 <= args.num_shots <= len(MINERVA_EXEMPLARS):
        parser.error(f"--num-shots must be in 0..{len(MINERVA_EXEMPLARS)}, got {args.num_shots}")
    for name, value, ok, rule in (("--n", args.n, args.n >= 1, ">= 1"),
                                  ("--max-new-tokens", args.max_new_tokens, args.max_new_tokens >= 1, ">= 1"),
                                  ("--temperature", args.temperature, args.temperature >= 0, ">= 0"),
                                  ("--top-p", args.top_p, 0 < args.top_p <= 1, "in (0, 1]"),
                                  ("--batch-size", args.batch_size, args.batch_size >= 1, ">= 1"),
                                  ("--limit-per-subject", args.limit_per_subject,
                                   args.limit_per_subject is None or args.limit_per_subject >= 1, ">= 1")):
        if not ok:
            parser.error(f"{name} must be {rule}, got {value}")
    if args.n > 1 and args.temperature == 0:
        parser.error(f"--n {args.n} needs --temperature > 0 (greedy samples are all the same)")
    if args.resume and args.sample_log is None:
        parser.error("--resume needs --sample-log (the sample log to continue)")
    try:
        from_flags(MathGradingOptions, args, prefix=FLAG_PREFIX)
    except ValueError as e:
        parser.error(str(e).replace("MATH grading option ", "--grading-").replace("_", "-"))
    try:
        ks = tuple(sorted({int(k) for k in args.k.split(",")})) if args.k else tuple(sorted({1, args.n}))
    except ValueError:
        parser.error(f"--k must be comma-separated integers, got {args.k!r}")
    if not all(1 <= k <= args.n for k in ks):
        parser.error(f"every --k must be in 1..--n ({args.n}), got {args.k}")
    return ks


def _load_problems(args: argparse.Namespace) -> list[MathProblem]:
    subjects = parse_subjects(args.subjects)
    # an unreadable input or an unreachable hub raises sdpo_data's InputError, naming --input and the dataset card
    problems, excluded = load_math(subjects, args.split, args.input, args.limit_per_subject)
    if excluded:
        print(f"note: {len(excluded)} records left out (first: record {excluded[0][0]}: {excluded[0][1]})",
              file=sys.stderr)
    if not problems:
        where = args.input or f"{HF_DATASET} ({args.split})"
        raise ValueError(f"no MATH problems selected from {where} with --subjects {args.subjects}")
    return problems


def _header(args: argparse.Namespace, labels: Sequence[str]) -> dict[str, Any]:
    keys = ("split", "subjects", "limit_per_subject", "num_shots", "n", "max_new_tokens", "temperature", "top_p",
            "seed", "dtype", "grading_prompt_opens_think", "grading_rounded_irrationals")  # they decide the verdicts
    return {"models": list(labels), "input": args.input or HF_DATASET, **{k: getattr(args, k) for k in keys}}


def _labels(specs: Sequence[ModelSpec]) -> list[str]:
    labels = [spec.label for spec in specs]
    return labels if len(set(labels)) == len(labels) else [f"{label}#{i + 1}" for i, label in enumerate(labels)]


def template_problem(engine: Engine, grading: MathGradingOptions, problem: MathProblem) -> str | None:
    """Why `grading` would misread this model's replies: `--grading-prompt-opens-think` must say whether the chat
    template leaves the prompt inside <think> (raw-text prompts open nothing)."""
    tokenizer = getattr(engine, "tokenizer", None)
    if not engine.has_chat_template or tokenizer is None:
        return None
    text = tokenizer.apply_chat_template(list(math_prompt(problem.problem, chat=True, num_shots=0)),
                                         add_generation_prompt=True, tokenize=False)
    return grading.template_problem(text, "--grading-prompt-opens-think")


def evaluate(engine: Engine, label: str, todo: Sequence[tuple[MathProblem, int]], params: SamplingParams,
             num_shots: int, base_seed: int, grading: MathGradingOptions,
             log: SampleLog | None) -> list[dict[str, Any]]:
    """Generate and grade the (problem, sample index) pairs in `todo`; each sample is logged, in `todo`'s order, as
    soon as it and those before it are graded. Generation goes a batch at a time: the transformers engine's
    `batch_size` (it batches so anyway), else CHUNK (vLLM returns a call's samples together: a stop loses the call in
    flight, at most CHUNK).
    A stop (KeyboardInterrupt) while grading waits for the grades in flight and logs them, then goes on up."""
    from tqdm.auto import tqdm

    chat = engine.has_chat_template
    if not chat:
        params = SamplingParams(**{**params.__dict__, "stop": tuple(params.stop) + RAW_STOP})
    step = getattr(engine, "batch_size", CHUNK)
    records: list[dict[str, Any] | None] = []   # in `todo`'s order (None: left out on a stop)
    with ThreadPoolExecutor(GRADING_THREADS) as graders, tqdm(total=len(todo), desc=f"MATH {label}") as bar:
        for start in range(0, len(todo), step):
            chunk = todo[start:start + step]
            prompts = [math_prompt(problem.problem, chat=chat, num_shots=num_shots) for problem, _ in chunk]
            seeds = [sample_seed(base_seed, problem.id, j) for problem, j in chunk]
            completions = engine.generate(prompts, params, seeds=seeds)
            futures = {graders.submit(grade, c.text, problem.answer, grading): i
                       for i, ((problem, _), c) in enumerate(zip(chunk, completions))}
            graded: dict[int, dict[str, Any] | None] = {}
            for i, g, stopped in _graded(futures):
                # a grading worker the stop reached gives no verdict: left out, so --resume draws it again
                graded[i] = None if stopped and g.infra else _record(label, chunk[i], seeds[i], prompts[i],
                                                                      completions[i], g, chat)
                while len(records) - start in graded:   # in `todo`'s order, each as soon as those before it are in
                    record = graded.pop(len(records) - start)
                    records.append(record)
                    if record is not None and log is not None:
                        log.write([record])
                    bar.update(1)
    return [r for r in records if r is not None]


def _record(label: str, item: tuple[MathProblem, int], seed: int, prompt: Any, c: Completion, g: Grade,
            chat: bool) -> dict[str, Any]:
    """One sample's log line."""
    problem, j = item
    return {"model": label, "id": problem.id, "subject": problem.subject, "level": problem.level, "sample": j,
            "seed": seed, "chat_template": chat, "prompt": prompt, "completion": c.text, "num_tokens": c.num_tokens,
            "finish_reason": c.finish_reason, "reference": problem.answer, "extracted": g.extracted, "key": g.key,
            "verdict": g.verdict, "correct": g.correct, "infra": g.infra}


def _graded(futures: dict[Future, int]) -> Iterator[tuple[int, Grade, bool]]:
    """(index, grade, stopped since) for each future as it completes. A first KeyboardInterrupt while waiting is held
    until every grade in flight is in (each is bounded by the grader's time limit), then raised; a second one
    stops the wait."""
    stop: KeyboardInterrupt | None = None
    pending = set(futures)
    while pending:
        try:
            for future in as_completed(pending):
                pending.discard(future)
                yield futures[future], future.result(), stop is not None
        except KeyboardInterrupt as e:
            if stop is not None:
                raise
            stop = e
    if stop is not None:
        raise stop


def _free(engine: Engine) -> None:
    del engine
    gc.collect()
    try:
        import torch

        if torch.cuda.is_available():
            torch.cuda.empty_cache()
    except ImportError:
        pass


def _summary(args, ks, tables, comparison, per_model) -> dict[str, Any]:
    config = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}
    problems = {label: [{k: r[k] for k in ("id", "subject", "level", "sample", "seed", "reference", "extracted",
                                            "verdict", "correct", "num_tokens", "finish_reason")} for r in records]
                for label, records in per_model.items()}
    return {"config": {**config, "k": list(ks)}, "accuracy": tables, "comparison": comparison, "samples": problems}


def _evaluate_models(args: argparse.Namespace, specs: Sequence[ModelSpec], labels: Sequence[str],
                     problems: Sequence[MathProblem], done: dict, log: SampleLog | None) -> dict[str, list] | int:
    """label -> that model's records (those logged before, then the new ones), or the exit code of a model that
    cannot be used."""
    params = SamplingParams(temperature=args.temperature, top_p=args.top_p, max_new_tokens=args.max_new_tokens,
                            seed=args.seed)
    per_model: dict[str, list[dict[str, Any]]] = {}
    for label, spec in zip(labels, specs):
        kept = [r for key, r in done.items() if key[0] == label]
        todo = [(p, j) for p in problems for j in range(args.n) if (label, p.id, j) not in done]
        print(f"{label}: {len(problems)} problems x {args.n} samples, {len(kept)} already logged", file=sys.stderr)
        new = []
        if todo:
            try:
                engine = load_engine(spec, from_flags(EngineOptions, args))
            except EngineMissing as e:
                print(f"error: {e}", file=sys.stderr)
                return 3
            except (OSError, ValueError) as e:   # transformers/vLLM: no such model, folder or file
                why = f"{type(e).__name__}: {str(e).splitlines()[0]}"
                print(f"error: --model {spec.path}: cannot be loaded ({why}) (a local folder, a .gguf file, or a "
                      "hub id that is cached or reachable)", file=sys.stderr)
                return 2
            grading = from_flags(MathGradingOptions, args, prefix=FLAG_PREFIX)
            problem = template_problem(engine, grading, problems[0])
            if problem:
                print(f"error: --model {spec.path}: {problem}", file=sys.stderr)
                return 2
            new = evaluate(engine, label, todo, params, args.num_shots, args.seed, grading, log)
            _free(engine)
        per_model[label] = kept + new
    return per_model


def stopped_line(log: SampleLog | None, path: Path | None, kept: int, total: int, argv: Sequence[str]) -> str:
    """The one line a stopped run ends with: what is kept and the exact command that continues."""
    if log is None:
        return ("interrupted: this run had no --sample-log, so its samples are not kept (pass --sample-log FILE: each "
                "sample is written as it is graded, and the same command with --resume continues)")
    return (f"interrupted: {kept + log.written} of {total} samples are in {path}; continue with: "
            f"{resume_command('sdpo_eval.math_eval', argv)}")


def main(argv: list[str] | None = None) -> int:
    """The CLI (module docstring); returns the exit code."""
    argv = sys.argv[1:] if argv is None else argv
    parser = _parser()
    args = parser.parse_args(argv)
    ks = _check(parser, args)
    if cli_checks.report([cli_checks.output_problem(args.out, "--out") if args.out else None,
                          cli_checks.output_problem(args.sample_log, "--sample-log") if args.sample_log else None]):
        return 2
    try:
        specs = [ModelSpec.parse(m, args.gguf_file) for m in args.model]
        problems = _load_problems(args)
        labels = _labels(specs)
        log, done = (open_log(args.sample_log, _header(args, labels), args.resume) if args.sample_log else (None, {}))
    except (ValueError, FileNotFoundError, FileExistsError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    try:
        with stop_signals():
            per_model = _evaluate_models(args, specs, labels, problems, done, log)
    except KeyboardInterrupt:
        print(f"\n{stopped_line(log, args.sample_log, len(done), len(labels) * len(problems) * args.n, argv)}",
              file=sys.stderr)
        return STOPPED_EXIT
    finally:
        if log is not None:
            log.close()
    if isinstance(per_model, int):
        return per_model
    tables = {label: score_table(records, ks) for label, records in per_model.items()}
    comparison = compare(*per_model.values()) if len(per_model) == 2 else None
    print(format_table(tables, comparison, ks))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(_summary(args, ks, tables, comparison, per_model), indent=2, ensure_ascii=False))
        print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
