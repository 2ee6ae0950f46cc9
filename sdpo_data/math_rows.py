"""MATH (Hendrycks et al. 2021, EleutherAI/hendrycks_math) problems and their verl rows.

The reference answer is the record's `answer`, else the final box(es) of its reference solution (as in the MATH
paper's grading). Records without one are excluded and counted. Local records need `problem` and either `answer` or
`solution`; the rest is optional: `type` (MATH) or `subject` (MATH-500, display names such as "Counting &
Probability" are mapped to the config names), `level` ("Level 3" or 3), `id` or `unique_id` (MATH-500).
A record without a subject gets "unknown" and is kept unless subjects are selected.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from reward.math.boxes import last_box_group
from sdpo_data.sources import read_input

HF_DATASET = "EleutherAI/hendrycks_math"
MATH_SUBJECTS = ("algebra", "counting_and_probability", "geometry", "intermediate_algebra", "number_theory",
                 "prealgebra", "precalculus")
_SUBJECT_OF_TYPE = {"Algebra": "algebra", "Counting & Probability": "counting_and_probability", "Geometry": "geometry",
                    "Intermediate Algebra": "intermediate_algebra", "Number Theory": "number_theory",
                    "Prealgebra": "prealgebra", "Precalculus": "precalculus"}
MATH_INSTRUCTION = "Let's think step by step and output the final answer within \\boxed{}."


@dataclass(frozen=True)
class MathProblem:
    """One MATH problem with its reference answer (see the module docstring for where it comes from)."""

    id: str
    subject: str
    level: str
    problem: str
    answer: str
    solution: str


def parse_subjects(text: str | None) -> tuple[str, ...] | None:
    """Comma-separated subjects, or None for 'all' (every record; all seven configs on the hub); unknown names raise."""
    if not text or text == "all":
        return None
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
        if answer is None or not str(answer).strip():
            boxed = last_box_group(solution) if isinstance(solution, str) else None
            answer = boxed[1] if boxed else None
        raw_subject = record.get("subject") or record.get("type")
        subject = _SUBJECT_OF_TYPE.get(raw_subject, raw_subject) if raw_subject else default_subject or "unknown"
        if not isinstance(problem, str) or not problem.strip():
            excluded.append((index, "missing problem"))
        elif not answer:
            excluded.append((index, "no reference answer (no `answer` field and no \\boxed{} in the solution)"))
        else:
            level = record.get("level", "")
            level = f"Level {level}" if isinstance(level, int) or str(level).isdigit() else str(level)
            problem_id = record.get("id") or record.get("unique_id") or f"{id_prefix}_{subject}_{index}"
            problems.append(MathProblem(id=str(problem_id), subject=subject, level=level, problem=problem,
                                        answer=str(answer), solution=solution))
    return problems, excluded


def load_math(subjects: tuple[str, ...] | None, split: str = "test", input_path: str | None = None,
              limit_per_subject: int | None = None) -> tuple[list[MathProblem], list[tuple[int, str]]]:
    """MATH problems of `subjects` (None: all) from `input_path` (JSONL etc.) when given, else from the HF hub."""
    if input_path:
        problems, excluded = to_problems(read_input(input_path, "math"))
        if subjects is not None:
            problems = [p for p in problems if p.subject in subjects]
        if limit_per_subject is not None:
            order = subjects or tuple(dict.fromkeys(p.subject for p in problems))
            problems = [p for s in order for p in [q for q in problems if q.subject == s][:limit_per_subject]]
        return problems, excluded
    problems, excluded = [], []
    for subject in subjects or MATH_SUBJECTS:
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
