"""Agreement of MATH graders with the expected verdicts of tests/reward/math/grading_cases.py (not a test).

    python bench/math/math_grading_bench.py --out bench/math/results/math_grading.json

Graders, each called as its project calls it, with the case's reference answer as ground truth:
- `reward.math`: ours (extraction + time-limited equivalence in worker processes);
- `lm-eval math_verify`: lm-eval 0.4.x `minerva_math` metric `math_verify`: verify(parse(solution), parse(reply)) with
  math-verify's default extraction (the solution is given as "\\boxed{reference}");
- `verl math_verify`: verl 0.9.1 `reward_score/math_verify.py` (gold "\\boxed{gt}" with LaTeX extraction, reply with
  expression + LaTeX extraction), run in-process here (its timeouts are SIGALRM on this main thread);
- `verl math_dapo`: what verl 0.9.1 routes `data_source: "math"` to by default (score 1.0 = correct);
- `verl math_reward`: verl's hendrycks-style last-box string grader.
Agreement = share of cases where the grader's verdict equals the expected one; a false positive is a reply graded
correct that is not; a crash or an infra verdict counts as disagreement (ours scores a grader timeout 0, a wrong
verdict). `round_two`, `round_three` and `round_four` are the same counts over the ROUND_TWO block (issue 34's
classes, added after the first 420 cases), the ROUND_THREE block (issue 40's sources: GSM8K, OlympiadBench,
Omni-MATH, AIME/AMC, Minerva, NuminaMath, reasoning traces, traps) and the ROUND_FOUR block (issue 48's classes: a
rounding of an irrational reference, a cut-off think block, a retracted box). A case's `prompt_opens_think` and
`rounded_irrationals` are passed to ours as reward options; the peers have no such options and grade the reply as
given.
"""
from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "reward" / "math"))
sys.path.insert(0, str(ROOT))

from grading_cases import CASES, ROUND_FOUR, ROUND_THREE, ROUND_TWO, Case  # noqa: E402


def ours(case: Case) -> bool:
    from reward.math.score import compute_score

    options = {"rounded_irrationals": True} if case.rounded_irrationals else {}
    return compute_score("math", case.reply, case.reference, prompt_opens_think=case.prompt_opens_think,
                         **options)["score"] == 1.0


def lm_eval_math_verify(case: Case) -> bool:
    from math_verify import parse, verify

    return bool(verify(gold=parse(f"\\boxed{{{case.reference}}}"), target=parse(case.reply)))


def verl_math_verify(case: Case) -> bool:
    from math_verify import ExprExtractionConfig, LatexExtractionConfig, parse, verify

    gold = parse(f"\\boxed{{{case.reference}}}", (LatexExtractionConfig(),))
    pred = parse(case.reply, (ExprExtractionConfig(), LatexExtractionConfig()))
    return bool(gold and pred and any(verify(g, p) for g in gold for p in pred))


def verl_math_dapo(case: Case) -> bool:
    from verl.utils.reward_score.math_dapo import compute_score

    return compute_score(case.reply, case.reference)["score"] == 1.0


def verl_math_reward(case: Case) -> bool:
    from verl.utils.reward_score.math_reward import compute_score

    return compute_score(case.reply, case.reference) == 1.0


GRADERS: dict[str, Callable[[Case], bool]] = {
    "reward.math (ours)": ours, "lm-eval math_verify": lm_eval_math_verify, "verl math_verify": verl_math_verify,
    "verl math_dapo": verl_math_dapo, "verl math_reward": verl_math_reward,
}


BLOCKS = {"round_two": ROUND_TWO, "round_three": ROUND_THREE, "round_four": ROUND_FOUR}


def _block(block: list[Case], wrong: list[int], false_pos: list[int]) -> dict:
    """Agreement, false positives and false negatives over one contiguous block of CASES."""
    first = next(i for i in range(len(CASES)) if CASES[i:i + len(block)] == block)
    inside = range(first, first + len(block))
    n_wrong, n_fp = sum(1 for i in wrong if i in inside), sum(1 for i in false_pos if i in inside)
    return {"agree": len(block) - n_wrong, "n": len(block), "false_positives": n_fp, "false_negatives": n_wrong - n_fp}


def score(grader: Callable[[Case], bool]) -> dict:
    wrong, false_pos, by_source = [], [], defaultdict(Counter)
    start = time.perf_counter()
    for index, case in enumerate(CASES):
        try:
            verdict = grader(case)
        except Exception:  # a crash is a disagreement, as a timeout is
            verdict = None
        agree = verdict is case.expected
        by_source[case.source]["n"] += 1
        by_source[case.source]["agree"] += agree
        if not agree:
            wrong.append(index)
            if verdict and not case.expected:
                false_pos.append(index)
    n = len(CASES)
    return {"agreement": (n - len(wrong)) / n, "agree": n - len(wrong), "n": n, "false_positives": len(false_pos),
            "false_negatives": len(wrong) - len(false_pos),
            **{name: _block(block, wrong, false_pos) for name, block in BLOCKS.items()},
            "false_positive_cases": false_pos, "disagreeing_cases": wrong,
            "by_source": {s: c["agree"] / c["n"] for s, c in sorted(by_source.items())},
            "seconds": round(time.perf_counter() - start, 2)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    logging.disable(logging.WARNING)
    results = {name: score(grader) for name, grader in GRADERS.items()}
    summary = {"command": "python bench/math/math_grading_bench.py --out bench/math/results/math_grading.json",
               "cases": len(CASES), "expected_correct": sum(c.expected for c in CASES),
               "sources": dict(Counter(c.source for c in CASES)), "graders": results}
    for name, r in results.items():
        rounds = "  ".join(f"{b} {r[b]['agree']}/{r[b]['n']} (FP {r[b]['false_positives']}, FN "
                           f"{r[b]['false_negatives']})" for b in BLOCKS)
        print(f"{name:<22} agreement {r['agreement']:.3f} ({r['agree']}/{r['n']})  FP {r['false_positives']}  FN "
              f"{r['false_negatives']}  {rounds}  " + "  ".join(f"{s} {a:.2f}" for s, a in r["by_source"].items()))
    if args.out:
        args.out.write_text(json.dumps(summary, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
