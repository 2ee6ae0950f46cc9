"""MATH evaluation: scoring/tables/comparison with scripted engines, and end to end with SmolLM2 on CPU."""
from __future__ import annotations

import json

import pytest

import sdpo_eval.math_eval as math_eval
from sdpo_data.math_rows import MathProblem
from sdpo_eval.engines import Completion, ModelSpec, SamplingParams
from sdpo_eval.math_prompts import MINERVA_EXEMPLARS, RAW_STOP, math_prompt

PROBLEMS = [
    MathProblem("p1", "algebra", "Level 1", "What is $1+1$?", "2", ""),
    MathProblem("p2", "algebra", "Level 2", "What is $\\frac{1}{2}+\\frac{1}{4}$?", "\\frac{3}{4}", ""),
    MathProblem("p3", "number_theory", "Level 1", "What is $7 \\bmod 4$?", "3", ""),
]


class ScriptedEngine:
    """Answers each problem with a fixed text; records the prompts and params it was given."""

    def __init__(self, answers: dict[str, str], chat: bool = True):
        self.spec = ModelSpec("scripted")
        self.answers, self.chat, self.calls = answers, chat, []

    @property
    def has_chat_template(self) -> bool:
        return self.chat

    def generate(self, prompts, params, seeds=None):
        self.calls.append((prompts, params))
        texts = []
        for prompt in prompts:
            question = prompt[-1]["content"] if isinstance(prompt, list) else prompt.rsplit("Problem:\n", 1)[1]
            texts.append(next(a for q, a in self.answers.items() if q in question))
        return [Completion(t, 5, "stop") for t in texts]


A = {"1+1": "So $\\boxed{2}$.", "frac{1}{4}": "It is $\\boxed{0.75}$.", "bmod": "The answer is 3."}
B = {"1+1": "$\\boxed{3}$", "frac{1}{4}": "$\\boxed{\\frac34}$", "bmod": "no idea"}


def test_prompts_chat_and_raw():
    chat = math_prompt("Q?", chat=True, num_shots=2)
    assert [m["role"] for m in chat] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert chat[-1]["content"] == "Q?" and chat[2]["content"] == MINERVA_EXEMPLARS[0][1]
    raw = math_prompt("Q?", chat=False, num_shots=4)
    assert raw.count("Problem:\n") == 5 and raw.endswith("Problem:\nQ?\n\nSolution:\n")
    assert math_prompt("Q?", chat=True, num_shots=0)[1:] == [{"role": "user", "content": "Q?"}]
    with pytest.raises(ValueError):
        math_prompt("Q?", chat=True, num_shots=5)


def test_evaluate_tables_and_paired_comparison():
    params = SamplingParams(max_new_tokens=16)
    a = math_eval.evaluate(ScriptedEngine(A), PROBLEMS, params)
    b = math_eval.evaluate(ScriptedEngine(B), PROBLEMS, params)
    assert [r["correct"] for r in a] == [True, True, True] and [r["correct"] for r in b] == [False, True, False]
    assert [r["extracted"] for r in b] == ["3", "\\frac34", None]
    table = math_eval.accuracy_table(a)
    assert table["algebra"]["correct"] == 2 and table["algebra"]["n"] == 2 and table["overall"]["accuracy"] == 1.0
    assert table["overall"]["low"] < 1.0 == table["overall"]["high"]
    comparison = math_eval.compare(a, b)
    assert comparison["overall"]["difference"] == pytest.approx(2 / 3)
    assert comparison["overall"]["low"] < 2 / 3 < comparison["overall"]["high"]
    assert comparison["algebra"]["difference"] == pytest.approx(0.5) and comparison["number_theory"]["n"] == 1
    with pytest.raises(ValueError, match="same problems"):
        math_eval.compare(a, b[:2])


def test_raw_prompt_adds_stop_string():
    engine = ScriptedEngine(A, chat=False)
    math_eval.evaluate(engine, PROBLEMS[:1], SamplingParams())
    prompts, params = engine.calls[0]
    assert isinstance(prompts[0], str) and params.stop == RAW_STOP


def test_main_compares_two_models(tmp_path, monkeypatch, capsys):
    src = tmp_path / "math.jsonl"
    src.write_text("".join(json.dumps({"id": p.id, "problem": p.problem, "answer": p.answer, "subject": p.subject}) + "\n"
                           for p in PROBLEMS))
    engines = {"model_a": ScriptedEngine(A), "model_b": ScriptedEngine(B)}
    monkeypatch.setattr(math_eval, "load_engine", lambda spec, options: engines[spec.path])
    out = tmp_path / "res.json"
    assert math_eval.main(["--model", "model_a", "--model", "model_b", "--input", str(src), "--out", str(out),
                           "--samples-per-subject", "1"]) == 0
    printed = capsys.readouterr().out
    assert "M1 = model_a" in printed and "overall | 3 | 1.000" in printed and "+0.667" in printed
    report = json.loads(out.read_text())
    assert report["accuracy"]["model_b"]["overall"]["correct"] == 1
    assert report["comparison"]["overall"]["difference"] == pytest.approx(2 / 3)
    assert len(report["samples"]["model_a"]["algebra"]) == 1 and "completion" in report["samples"]["model_a"]["algebra"][0]
    assert [r["id"] for r in report["problems"]["model_a"]] == ["p1", "p2", "p3"]


def test_main_rejects_bad_arguments(tmp_path, capsys):
    with pytest.raises(SystemExit):
        math_eval.main(["--model", "a", "--model", "b", "--model", "c"])
    with pytest.raises(SystemExit):
        math_eval.main(["--model", "a", "--model", "b", "--gguf-file", "x.gguf"])
    assert math_eval.main(["--model", "a", "--subjects", "calculus"]) == 2
    assert "unknown MATH subject" in capsys.readouterr().err


def test_smollm2_end_to_end_on_cpu(tmp_path, smollm2_gguf):
    """Real model, real tokenizer chat template, real generation and grading; 2 problems, 8 new tokens."""
    src = tmp_path / "math.jsonl"
    src.write_text("".join(json.dumps({"problem": p.problem, "answer": p.answer, "subject": p.subject}) + "\n"
                           for p in PROBLEMS[:2]))
    out = tmp_path / "smol.json"
    assert math_eval.main(["--model", str(smollm2_gguf), "--input", str(src), "--max-new-tokens", "8",
                           "--num-shots", "1", "--backend", "transformers", "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    label = str(smollm2_gguf)
    assert report["config"]["chat_template"] == {label: True}
    rows = report["problems"][label]
    assert len(rows) == 2 and all(0 < r["num_tokens"] <= 8 for r in rows)
    assert all(r["finish_reason"] in ("stop", "length") for r in rows)
    assert report["accuracy"][label]["overall"]["n"] == 2
    assert report["samples"][label]["algebra"][0]["completion"].strip()
