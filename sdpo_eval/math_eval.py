"""Few-shot MATH accuracy for one or two models, with Wilson intervals and a paired comparison.

    python -m sdpo_eval.math_eval --model Qwen/Qwen3-1.7B --subjects algebra,number_theory --limit-per-subject 100
    python -m sdpo_eval.math_eval --model base/ --model tuned/ --out math.json     # side-by-side + paired difference
    python -m sdpo_eval.math_eval --model ~/models/x.gguf --backend transformers     # GGUF file (or --gguf-file NAME)

Problems: EleutherAI/hendrycks_math (test split) or `--input local.jsonl`. Prompts: Minerva 4-shot
(see `math_prompts`), as chat turns when the tokenizer has a chat template, else raw text. Answers:
last `\\boxed{}` / `\\fbox{}` / "The answer is", graded by math-verify. Greedy decoding by default.
"""
from __future__ import annotations

import argparse
import gc
import json
import sys
from collections import defaultdict
from dataclasses import asdict
from pathlib import Path
from typing import Any, Sequence

from sdpo_data.math_rows import MathProblem, load_math, parse_subjects
from sdpo_eval.answers import grade
from sdpo_eval.engines import Engine, EngineOptions, ModelSpec, SamplingParams, load_engine
from sdpo_eval.math_prompts import RAW_STOP, math_prompt
from sdpo_eval.stats import paired_difference_interval, wilson_interval


def evaluate(engine: Engine, problems: Sequence[MathProblem], params: SamplingParams, num_shots: int = 4) -> list[dict]:
    """Per-problem results (id, subject, reference, extracted, correct, tokens, finish_reason, completion)."""
    chat = engine.has_chat_template
    prompts = [math_prompt(p.problem, chat=chat, num_shots=num_shots) for p in problems]
    if not chat:
        params = SamplingParams(**{**asdict(params), "stop": tuple(params.stop) + RAW_STOP})
    completions = engine.generate(prompts, params)
    results = []
    for problem, completion in zip(problems, completions):
        correct, extracted = grade(completion.text, problem.answer)
        results.append({"id": problem.id, "subject": problem.subject, "level": problem.level,
                        "reference": problem.answer, "extracted": extracted, "correct": bool(correct),
                        "num_tokens": completion.num_tokens, "finish_reason": completion.finish_reason,
                        "completion": completion.text})
    return results


def accuracy_table(results: Sequence[dict], confidence: float = 0.95) -> dict[str, dict[str, Any]]:
    """{subject | "overall": {correct, n, accuracy, low, high}} with Wilson intervals."""
    groups: dict[str, list[bool]] = defaultdict(list)
    for r in results:
        groups[r["subject"]].append(r["correct"])
        groups["overall"].append(r["correct"])
    table = {}
    for subject, outcomes in groups.items():
        low, high = wilson_interval(sum(outcomes), len(outcomes), confidence)
        table[subject] = {"correct": sum(outcomes), "n": len(outcomes), "accuracy": sum(outcomes) / len(outcomes),
                          "low": low, "high": high}
    return table


def compare(results_a: Sequence[dict], results_b: Sequence[dict], confidence: float = 0.95) -> dict[str, dict[str, float]]:
    """Paired accuracy difference A - B per subject and overall (Newcombe interval); problems matched by id."""
    b_by_id = {r["id"]: r for r in results_b}
    if set(b_by_id) != {r["id"] for r in results_a}:
        raise ValueError("paired comparison needs both models evaluated on the same problems")
    groups: dict[str, tuple[list[bool], list[bool]]] = defaultdict(lambda: ([], []))
    for r in results_a:
        for key in (r["subject"], "overall"):
            groups[key][0].append(r["correct"])
            groups[key][1].append(b_by_id[r["id"]]["correct"])
    out = {}
    for subject, (a, b) in groups.items():
        diff, low, high = paired_difference_interval(a, b, confidence)
        out[subject] = {"difference": diff, "low": low, "high": high, "n": len(a)}
    return out


def _labels(specs: Sequence[ModelSpec]) -> list[str]:
    labels, seen = [], defaultdict(int)
    for spec in specs:
        seen[spec.label] += 1
        labels.append(spec.label if seen[spec.label] == 1 else f"{spec.label}#{seen[spec.label]}")
    return labels


def format_table(tables: dict[str, dict], comparison: dict | None) -> str:
    labels = list(tables)
    subjects = sorted({s for t in tables.values() for s in t if s != "overall"}) + ["overall"]
    cell = lambda row: f"{row['accuracy']:.3f} [{row['low']:.3f},{row['high']:.3f}]"  # noqa: E731
    header = ["subject", "n"] + [f"M{i + 1}" for i in range(len(labels))] + (["M1-M2 [paired 95%]"] if comparison else [])
    lines = [" | ".join(header)]
    for s in subjects:
        row = [s, str(tables[labels[0]][s]["n"])] + [cell(tables[m][s]) for m in labels]
        if comparison:
            c = comparison[s]
            row.append(f"{c['difference']:+.3f} [{c['low']:+.3f},{c['high']:+.3f}]")
        lines.append(" | ".join(row))
    legend = [f"M{i + 1} = {m}" for i, m in enumerate(labels)]
    return "\n".join(legend + lines)


def _free(engine: Engine) -> None:
    del engine
    gc.collect()
    try:
        import torch

        if torch.cuda.is_available():
            torch.cuda.empty_cache()
    except ImportError:
        pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", action="append", required=True, help="HF id, folder or .gguf file (give twice to compare)")
    parser.add_argument("--gguf-file", default=None, help="GGUF file name inside the (single) --model folder")
    parser.add_argument("--subjects", default="all")
    parser.add_argument("--split", default="test")
    parser.add_argument("--input", default=None, help="local JSONL of problems instead of the HF hub")
    parser.add_argument("--limit-per-subject", type=int, default=None)
    parser.add_argument("--num-shots", type=int, default=4)
    parser.add_argument("--max-new-tokens", type=int, default=1024)
    parser.add_argument("--temperature", type=float, default=0.0)
    parser.add_argument("--top-p", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    EngineOptions.add_arguments(parser)
    parser.add_argument("--samples-per-subject", type=int, default=3, help="example solutions kept in the summary")
    parser.add_argument("--out", type=Path, default=None, help="JSON results file")
    args = parser.parse_args(argv)
    if len(args.model) > 2:
        parser.error("at most two --model values (one model, or two to compare)")
    if args.gguf_file and len(args.model) != 1:
        parser.error("--gguf-file needs exactly one --model folder; pass .gguf paths to --model to compare GGUF models")
    try:
        specs = [ModelSpec.parse(m, args.gguf_file) for m in args.model]
        problems, excluded = load_math(parse_subjects(args.subjects), args.split, args.input, args.limit_per_subject)
    except (ValueError, FileNotFoundError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if not problems:
        print("error: no MATH problems selected", file=sys.stderr)
        return 2
    params = SamplingParams(temperature=args.temperature, top_p=args.top_p, max_new_tokens=args.max_new_tokens,
                            seed=args.seed)
    options = EngineOptions.from_args(args)
    labels = _labels(specs)
    per_model: dict[str, list[dict]] = {}
    chat_used: dict[str, bool] = {}
    for label, spec in zip(labels, specs):
        print(f"evaluating {label} on {len(problems)} problems", file=sys.stderr)
        engine = load_engine(spec, options)
        chat_used[label] = engine.has_chat_template
        per_model[label] = evaluate(engine, problems, params, args.num_shots)
        _free(engine)
    tables = {label: accuracy_table(results) for label, results in per_model.items()}
    comparison = compare(*per_model.values()) if len(per_model) == 2 else None
    print(format_table(tables, comparison))
    if args.out:
        samples = {label: {s: [r for r in results if r["subject"] == s][: args.samples_per_subject]
                           for s in sorted({r["subject"] for r in results})} for label, results in per_model.items()}
        report = {"config": {**{k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
                             "chat_template": chat_used, "excluded_problems": len(excluded)},
                  "accuracy": tables, "comparison": comparison, "samples": samples,
                  "problems": {label: [{k: v for k, v in r.items() if k != "completion"} for r in results]
                               for label, results in per_model.items()}}
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2, ensure_ascii=False))
        print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
