import sys

import pytest

STATEMENT = "theorem t1 (x : ℝ) (h : x = 2) : x + 1 = 3 := by\n"


def _answer(proof: str, statement: str = "theorem t1 (x : ℝ) (h : x = 2) : x + 1 = 3 := by", pre: str = "") -> str:
    return f"<think>plan</think>\nHere it is:\n```lean4\n{pre}{statement}\n  {proof}\n```\n"


@pytest.fixture
def statement():
    return STATEMENT


@pytest.fixture
def answer():
    return _answer


@pytest.fixture
def fake_repl():
    return [sys.executable, "-m", "lean_env.testing.fake_repl"]
