"""Our grader against the expected verdicts of the grading table (in-process: extraction + equivalence)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from reward.math_answer import final_answer, reference_answer
from reward.math_equal import answers_equal

_spec = importlib.util.spec_from_file_location("grading_cases", Path(__file__).with_name("grading_cases.py"))
grading_cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(grading_cases)
CASES = grading_cases.CASES


def _verdict(case) -> bool:
    extracted = final_answer(case.reply)
    return extracted is not None and answers_equal(extracted, reference_answer(case.reference))


def test_table_covers_every_public_suite_and_both_verdicts():
    sources = {c.source for c in CASES}
    assert {"hendrycks", "math-verify", "lm-eval", "realistic", "adversarial"} <= sources
    assert sum(c.expected for c in CASES) > 100 and sum(not c.expected for c in CASES) > 100


@pytest.mark.parametrize("case", CASES, ids=[f"{i}-{c.source}" for i, c in enumerate(CASES)])
def test_case(case):
    assert _verdict(case) is case.expected, (case.reference, case.reply[:200], case.note)
