"""MATH (Hendrycks et al. 2021, EleutherAI/hendrycks_math) problems and their verl rows.

The reference answer is the last `\\boxed{...}` of the reference solution (as in the MATH paper's
grading). Records without one are excluded and counted. Local JSONL records need `problem` and either
`answer` or `solution`; `type`/`subject` and `level` are optional.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from sdpo_data.sources import read_input
from sdpo_eval.answers import last_boxed

HF_DATASET = "EleutherAI/hendrycks_math"
MATH_SUBJECTS = ("algebra", "counting_and_probability", "geometry", "intermediate_algebra", "number_theory",
                 "prealgebra", "precalculus")
_SUBJECT_OF_TYPE = {"Algebra": "algebra", "Counting & Probability": "counting_and_probability", "Geometry": "geometry",
                    "Intermediate Algebra": "intermediate_algebra", "Number Theory": "number_theory",
                    "Prealgebra": "prealgebra", "Precalculus": "precalculus"}
MATH_INSTRUCTION = "Let's think step by step and output the final answer within \\boxed{}."


@dataclass(frozen=True)
class MathProblem:
    id: str
    subject: str
    level: str
    problem: str
    answer: str
    solution: str


def parse_subjects(text: str | None) -> tuple[str, ...]:
    """Comma-separated subjects (or 'all' / None for all seven); unknown names raise."""
    if not text or text == "all":
        return MATH_SUBJECTS
    subjects = tuple(s.strip() for s in text.split(",") if s.strip())
    unknown = [s for s in subjects if s not in MATH_SUBJECTS]
    if unknown:
        raise ValueError(f"unknown MATH subject(s) {unknown}; known: {list(MATH_SUBJECTS)}")
    return subjects


def to_problems(records: Iterable[dict[str, Any]], default_subject: str | None = None,
                id_prefix: str = "math") -> tuple[list[MathProblem], list[tuple[int, str]]]:
    """(problems, [(record index, reason)] for excluded records)."""
    problems, excluded = [], []
    for index, record in enumerate(records):
        problem = record.get("problem")
        solution = record.get("solution") or ""
        answer = record.get("answer")
        answer = str(answer) if answer is not None and str(answer).strip() else last_boxed(solution)
        subject = record.get("subject") or _SUBJECT_OF_TYPE.get(record.get("type", ""), record.get("type")) \
            or default_subject or "unknown"
        if not isinstance(problem, str) or not problem.strip():
            excluded.append((index, "missing problem"))
        elif not answer:
            excluded.append((index, "no reference answer (no `answer` field and no \\boxed{} in the solution)"))
        else:
            problems.append(MathProblem(id=str(record.get("id") or f"{id_prefix}_{subject}_{index}"), subject=subject,
                                        level=str(record.get("level", "")), problem=problem, answer=answer,
                                        solution=solution))
    return problems, excluded


def load_math(subjects: tuple[str, ...], split: str = "test", input_path: str | None = None,
              limit_per_subject: int | None = None) -> tuple[list[MathProblem], list[tuple[int, str]]]:
    """MATH problems of `subjects`: from `input_path` (JSONL etc.) when given, else from the HF hub."""
    if input_path:
        problems, excluded = to_problems(read_input(input_path, "math"))
        problems = [p for p in problems if p.subject in subjects]
        if limit_per_subject is not None:
            problems = [p for s in subjects for p in [q for q in problems if q.subject == s][:limit_per_subject]]
        return problems, excluded
    problems, excluded = [], []
    for subject in subjects:
        got, bad = to_problems(read_input(HF_DATASET, "math", from_flag=False, hf_config=subject, hf_split=split),
                               default_subject=subject, id_prefix=f"math_{split}")
        problems += got[:limit_per_subject] if limit_per_subject is not None else got
        excluded += bad
    return problems, excluded


def verl_row(problem: MathProblem, index: int, split: str) -> dict[str, Any]:
    """One verl row; the ground truth is the reference answer string (graded by `reward.math`)."""
    return {
        "data_source": "math",
        "prompt": [{"role": "user", "content": f"{problem.problem}\n\n{MATH_INSTRUCTION}"}],
        "ability": "math",
        "reward_model": {"style": "rule", "ground_truth": problem.answer},
        "extra_info": {"name": problem.id, "split": split, "index": index, "subject": problem.subject,
                       "level": problem.level},
    }
