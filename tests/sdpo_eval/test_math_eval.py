"""MATH evaluation CLI: formats, argument checks before any model, offline error, sample log, resume, n samples with
pass@k / maj@k, seeds per problem id; scripted engines, and end to end with SmolLM2 on CPU."""
from __future__ import annotations

import json

import pytest

import sdpo_eval.math_eval as math_eval
from sdpo_eval.engines import Completion, ModelSpec
from sdpo_eval.math_prompts import MINERVA_EXEMPLARS, RAW_STOP, math_prompt

PROBLEMS = [
    {"id": "p1", "problem": "What is $1+1$?", "answer": "2", "subject": "algebra", "level": "Level 1"},
    {"id": "p2", "problem": "What is $\\frac{1}{2}+\\frac{1}{4}$?", "answer": "\\frac{3}{4}", "subject": "algebra"},
    {"id": "p3", "problem": "What is $7 \\bmod 4$?", "answer": "3", "subject": "number_theory"},
]
A = {"1+1": "So $\\boxed{2}$.", "frac{1}{4}": "It is $\\boxed{0.75}$.", "bmod": "The answer is 3."}
B = {"1+1": "$\\boxed{3}$", "frac{1}{4}": "$\\boxed{\\frac34}$", "bmod": "no idea"}


class ScriptedEngine:
    """Answers each problem with a fixed text, or a text chosen by the sample's seed; records its calls."""

    def __init__(self, answers: dict, chat: bool = True):
        self.spec = ModelSpec("scripted")
        self.answers, self.chat, self.calls = answers, chat, []

    @property
    def has_chat_template(self) -> bool:
        return self.chat

    def generate(self, prompts, params, seeds=None):
        self.calls.append((prompts, params, seeds))
        out = []
        for prompt, seed in zip(prompts, seeds):
            question = prompt[-1]["content"] if isinstance(prompt, list) else prompt.rsplit("Problem:\n", 1)[1]
            answer = next(a for q, a in self.answers.items() if q in question)
            out.append(Completion(answer(seed) if callable(answer) else answer, 5, "stop"))
        return out


def _write(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


@pytest.fixture
def engines(monkeypatch):
    loaded = []
    table = {"model_a": ScriptedEngine(A), "model_b": ScriptedEngine(B)}

    def load(spec, options):
        loaded.append((spec.path, options))
        return table[spec.path]

    monkeypatch.setattr(math_eval, "load_engine", load)
    return table, loaded


def test_prompts_chat_and_raw():
    chat = math_prompt("Q?", chat=True, num_shots=2)
    assert [m["role"] for m in chat] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert chat[-1]["content"] == "Q?" and chat[2]["content"] == MINERVA_EXEMPLARS[0][1]
    raw = math_prompt("Q?", chat=False, num_shots=4)
    assert raw.count("Problem:\n") == 5 and raw.endswith("Problem:\nQ?\n\nSolution:\n")


def test_two_models_table_comparison_and_summary(tmp_path, engines, capsys):
    src = _write(tmp_path / "math.jsonl", PROBLEMS)
    out = tmp_path / "res.json"
    assert math_eval.main(["--model", "model_a", "--model", "model_b", "--input", src, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "M1 = model_a" in printed and "overall | 3 | 1.000" in printed and "+0.667" in printed
    report = json.loads(out.read_text())
    assert report["accuracy"]["model_b"]["overall"]["accuracy"] == pytest.approx(1 / 3)
    assert report["comparison"]["overall"]["difference"] == pytest.approx(2 / 3)
    assert [r["extracted"] for r in report["samples"]["model_b"]] == ["3", "\\frac34", None]
    assert [r["verdict"] for r in report["samples"]["model_b"]] == ["wrong", "valid", "no_answer"]


def test_raw_prompt_adds_stop_string(tmp_path, engines):
    table, _ = engines
    table["model_a"].chat = False
    assert math_eval.main(["--model", "model_a", "--input", _write(tmp_path / "m.jsonl", PROBLEMS[:1])]) == 0
    prompts, params, _ = table["model_a"].calls[0]
    assert isinstance(prompts[0], str) and params.stop == RAW_STOP


@pytest.mark.parametrize("argv, message", [
    (["--model", "a", "--model", "b", "--model", "c"], "at most two"),
    (["--model", "a", "--model", "b", "--gguf-file", "x.gguf"], "--gguf-file"),
    (["--model", "a", "--num-shots", "5"], "--num-shots"),
    (["--model", "a", "--n", "0"], "--n must be"),
    (["--model", "a", "--n", "4"], "--temperature > 0"),
    (["--model", "a", "--n", "4", "--temperature", "1", "--k", "8"], "every --k"),
    (["--model", "a", "--k", "one"], "--k must be"),
    (["--model", "a", "--top-p", "0"], "--top-p"),
    (["--model", "a", "--temperature", "-1"], "--temperature must be"),
    (["--model", "a", "--max-new-tokens", "0"], "--max-new-tokens"),
    (["--model", "a", "--batch-size", "0"], "--batch-size"),
    (["--model", "a", "--resume"], "--resume needs --sample-log"),
    (["--model", "a", "--dtype", "int3"], "--dtype"),
])
def test_argument_errors_before_any_model(argv, message, engines, capsys):
    with pytest.raises(SystemExit):
        math_eval.main(argv)
    assert message in capsys.readouterr().err and engines[1] == []


def test_data_errors_before_any_model(tmp_path, engines, capsys, monkeypatch):
    assert math_eval.main(["--model", "model_a", "--subjects", "calculus"]) == 2
    assert "unknown MATH subject" in capsys.readouterr().err
    assert math_eval.main(["--model", "model_a", "--input", str(tmp_path / "absent.jsonl")]) == 2
    assert "absent.jsonl" in capsys.readouterr().err
    src = _write(tmp_path / "m.jsonl", PROBLEMS)
    assert math_eval.main(["--model", "model_a", "--input", src, "--subjects", "geometry"]) == 2
    assert "no MATH problems selected" in capsys.readouterr().err

    def offline(*args, **kwargs):
        raise ConnectionError("cannot reach huggingface.co")

    monkeypatch.setattr("sdpo_data.sources.load_records", offline)
    assert math_eval.main(["--model", "model_a"]) == 2
    err = capsys.readouterr().err
    assert "hub (a local copy: --input FILE)" in err and "datasets/math.md" in err and "Traceback" not in err
    assert engines[1] == []


def test_math500_and_subjectless_records(tmp_path, engines, capsys):
    math500 = {"problem": "What is $1+1$?", "solution": "...", "answer": "2", "subject": "Counting & Probability",
               "level": 2, "unique_id": "test/counting_and_probability/1.json"}
    plain = {"problem": "What is $7 \\bmod 4$?", "answer": "3"}
    src = _write(tmp_path / "mixed.jsonl", [math500, plain])
    out = tmp_path / "r.json"
    assert math_eval.main(["--model", "model_a", "--input", src, "--out", str(out)]) == 0
    rows = json.loads(out.read_text())["samples"]["model_a"]
    assert [(r["id"], r["subject"], r["level"]) for r in rows] == [
        ("test/counting_and_probability/1.json", "counting_and_probability", "Level 2"),
        ("math_unknown_1", "unknown", "")]
    assert all(r["correct"] for r in rows)
    assert math_eval.main(["--model", "model_a", "--input", src, "--subjects", "counting_and_probability"]) == 0


def test_sample_log_and_resume(tmp_path, engines):
    table, loaded = engines
    src = _write(tmp_path / "m.jsonl", PROBLEMS)
    log = tmp_path / "samples.jsonl"
    argv = ["--model", "model_a", "--input", src, "--sample-log", str(log), "--seed", "5"]
    assert math_eval.main(argv) == 0
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert lines[0]["header"]["models"] == ["model_a"] and len(lines) == 4
    first = lines[1]
    assert {"prompt", "completion", "extracted", "verdict", "seed"} <= set(first)
    assert first["prompt"][-1]["content"] == PROBLEMS[0]["problem"]
    assert first["seed"] == math_eval.sample_seed(5, "p1", 0)

    assert math_eval.main(argv) == 2  # an existing log is not overwritten
    log.write_text("\n".join(log.read_text().splitlines()[:2]) + '\n{"model": "model_a", "id": "p2"')  # crash
    calls_before = len(table["model_a"].calls)
    assert math_eval.main(argv + ["--resume"]) == 0
    resumed_prompts = table["model_a"].calls[calls_before][0]
    assert [p[-1]["content"] for p in resumed_prompts] == [PROBLEMS[1]["problem"], PROBLEMS[2]["problem"]]
    records = [json.loads(line) for line in log.read_text().splitlines()[1:]]
    assert sorted(r["id"] for r in records) == ["p1", "p2", "p3"]

    n_loads = len(loaded)
    assert math_eval.main(argv + ["--resume"]) == 0 and len(loaded) == n_loads  # nothing left: no model load
    assert math_eval.main(["--model", "model_a", "--input", src, "--sample-log", str(log), "--seed", "6",
                           "--resume"]) == 2


def test_n_samples_pass_and_majority(tmp_path, engines, capsys):
    table, _ = engines
    table["model_a"].answers = {"1+1": lambda seed: "\\boxed{2}" if seed % 3 else "\\boxed{5}",
                                "frac{1}{4}": lambda seed: "\\boxed{1}" if seed % 4 else "\\boxed{0.75}",
                                "bmod": "\\boxed{3}"}
    src = _write(tmp_path / "m.jsonl", PROBLEMS)
    out = tmp_path / "r.json"
    assert math_eval.main(["--model", "model_a", "--input", src, "--n", "8", "--temperature", "0.7",
                           "--k", "1,4,8", "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    samples = report["samples"]["model_a"]
    seeds = {(r["id"], r["sample"]): r["seed"] for r in samples}
    assert len(seeds) == 24 and len(set(seeds.values())) == 24
    expected = {"p1": [bool(seeds[("p1", j)] % 3) for j in range(8)],
                "p2": [not seeds[("p2", j)] % 4 for j in range(8)], "p3": [True] * 8}
    overall = report["accuracy"]["model_a"]["overall"]
    assert overall["accuracy"] == pytest.approx(sum(sum(v) / 8 for v in expected.values()) / 3)
    from sdpo_attempts.pass_at_k import pass_at_k

    assert overall["pass@4"] == pytest.approx(sum(pass_at_k(8, sum(v), 4) for v in expected.values()) / 3)
    majority = [sum(v) > 4 or (sum(v) == 4 and v[0]) for v in expected.values()]  # a tie: the first answer
    assert overall["maj@8"] == pytest.approx(sum(majority) / 3)
    assert "pass@8" in capsys.readouterr().out


def test_seed_depends_on_problem_id_not_position(tmp_path, engines):
    table, _ = engines
    a = _write(tmp_path / "a.jsonl", PROBLEMS)
    b = _write(tmp_path / "b.jsonl", PROBLEMS[::-1][:2])
    for src in (a, b):
        assert math_eval.main(["--model", "model_a", "--input", src, "--n", "2", "--temperature", "1"]) == 0
    (prompts_a, _, seeds_a), (prompts_b, _, seeds_b) = table["model_a"].calls[-2:]
    by_problem_a = {(p[-1]["content"], s) for p, s in zip(prompts_a, seeds_a)}
    by_problem_b = {(p[-1]["content"], s) for p, s in zip(prompts_b, seeds_b)}
    assert by_problem_b <= by_problem_a


def test_grading_timeout_counts_as_wrong(tmp_path, engines):
    """A reply whose comparison runs past the limit is the model's own answer: judged, and wrong."""
    table, _ = engines
    table["model_a"].answers = {**A, "bmod": "\\boxed{9^{9^{9^9}}}"}
    out = tmp_path / "r.json"
    assert math_eval.main(["--model", "model_a", "--input", _write(tmp_path / "m.jsonl", PROBLEMS),
                           "--grading-timeout-s", "1", "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    overall = report["accuracy"]["model_a"]["overall"]
    assert overall["problems"] == 3 and overall["accuracy"] == pytest.approx(2 / 3)
    assert overall["infra_samples"] == 0 and overall["infra_problems"] == 0
    assert [s["verdict"] for s in report["samples"]["model_a"] if s["id"] == "p3"] == ["grader_timeout"]


def test_grading_prompt_opens_think_flag(tmp_path, engines):
    """The flag comes from MathGradingOptions: a reply without </think> has no answer when the prompt opened it."""
    table, _ = engines
    table["model_a"].answers = {**A, "1+1": "1+1 is 2, so \\boxed{2}", "bmod": "thinking</think>\\boxed{3}"}
    src = _write(tmp_path / "m.jsonl", PROBLEMS)
    verdicts = {}
    for flag in ("false", "true"):
        out = tmp_path / f"{flag}.json"
        assert math_eval.main(["--model", "model_a", "--input", src, "--grading-prompt-opens-think", flag,
                               "--out", str(out)]) == 0
        verdicts[flag] = {s["id"]: s["verdict"] for s in json.loads(out.read_text())["samples"]["model_a"]}
    assert verdicts["false"] == {"p1": "valid", "p2": "valid", "p3": "valid"}
    assert verdicts["true"] == {"p1": "no_answer", "p2": "no_answer", "p3": "valid"}


@pytest.mark.parametrize("flags, message", [
    (["--grading-timeout-s", "0"], "--grading-timeout-s must be a positive number"),
    (["--grading-prompt-opens-think", "maybe"], "expected true or false"),
])
def test_grading_flags_are_checked_before_any_model(tmp_path, engines, capsys, flags, message):
    _, loaded = engines
    with pytest.raises(SystemExit):
        math_eval.main(["--model", "model_a", "--input", _write(tmp_path / "m.jsonl", PROBLEMS), *flags])
    assert message in capsys.readouterr().err and not loaded


def test_smollm2_end_to_end_on_cpu(tmp_path, smollm2_gguf):
    """Real model, chat template, batched generation and grading; 2 problems, 8 new tokens."""
    src = _write(tmp_path / "math.jsonl", PROBLEMS[:2])
    out, log = tmp_path / "smol.json", tmp_path / "smol.jsonl"
    assert math_eval.main(["--model", str(smollm2_gguf), "--input", src, "--max-new-tokens", "8", "--num-shots", "1",
                           "--engine", "transformers", "--batch-size", "2", "--out", str(out),
                           "--sample-log", str(log)]) == 0
    report = json.loads(out.read_text())
    rows = report["samples"][str(smollm2_gguf)]
    assert len(rows) == 2 and all(0 < r["num_tokens"] <= 8 for r in rows)
    assert all(r["finish_reason"] in ("stop", "length") for r in rows)
    records = [json.loads(line) for line in log.read_text().splitlines()[1:]]
    assert all(r["chat_template"] and r["completion"].strip() for r in records)


def test_a_model_that_cannot_load_is_one_error_line_and_its_empty_log_does_not_block_the_rerun(tmp_path, engines,
                                                                                               monkeypatch, capsys):
    def missing(spec, options):
        raise OSError(f"{spec.path} is not a local folder and is not a valid model identifier\nmore lines")

    src = _write(tmp_path / "m.jsonl", PROBLEMS)
    log = tmp_path / "samples.jsonl"
    argv = ["--model", "no/such-model", "--input", src, "--sample-log", str(log)]
    real = math_eval.load_engine
    monkeypatch.setattr(math_eval, "load_engine", missing)
    assert math_eval.main(argv) == 2
    err = capsys.readouterr().err
    assert "error: --model no/such-model: cannot be loaded (OSError: no/such-model is not a local folder" in err
    assert "more lines" not in err and "Traceback" not in err
    monkeypatch.setattr(math_eval, "load_engine", real)
    assert math_eval.main(["--model", "model_a", "--input", src, "--sample-log", str(log)]) == 0  # the header-only log
    assert len(log.read_text().splitlines()) == 1 + len(PROBLEMS)


def test_a_chat_template_that_opens_think_needs_the_grading_flag(tmp_path, engines, capsys, smollm2_tokenizer,
                                                                 monkeypatch):
    """A real tokenizer whose template ends the prompt inside <think> (Qwen3.5-4B's generation-prompt branch): without
    --grading-prompt-opens-think true every reply would be graded from its thinking, so the run stops before
    generating; with it, it runs."""
    from tests.sdpo_ext.startup.test_preflight import THINKING_TEMPLATE

    table, _ = engines
    monkeypatch.setattr(smollm2_tokenizer, "chat_template", THINKING_TEMPLATE)  # the tokenizer is session-wide
    table["model_a"].tokenizer = smollm2_tokenizer
    src = _write(tmp_path / "m.jsonl", PROBLEMS[:1])
    assert math_eval.main(["--model", "model_a", "--input", src]) == 2
    err = capsys.readouterr().err
    assert "error: --model model_a: the chat template's generation prompt ends inside <think>" in err
    assert err.rstrip().endswith("(--grading-prompt-opens-think=true)") and not table["model_a"].calls
    table["model_a"].answers = {"1+1": "thinking...</think> So $\\boxed{2}$."}
    assert math_eval.main(["--model", "model_a", "--input", src, "--grading-prompt-opens-think", "true"]) == 0
    assert table["model_a"].calls


@pytest.mark.parametrize("flag", ["--out", "--sample-log"])
def test_an_output_it_cannot_write_is_one_error_before_any_model(tmp_path, engines, capsys, flag):
    """Found after generation, with a raw traceback, the results were lost (issue 50); the blocking file stays."""
    blocker = tmp_path / "a_file"
    blocker.write_text("kept")
    target = blocker / "sub" / "math.json"
    assert math_eval.main(["--model", "model_a", "--input", _write(tmp_path / "m.jsonl", PROBLEMS),
                           flag, str(target)]) == 2
    err = capsys.readouterr().err
    assert err == f"error: {flag} {target}: {blocker} is a file, so no folder can be made there (choose another path)\n"
    assert engines[1] == [] and blocker.read_text() == "kept"


def test_the_log_keeps_the_problem_order_whatever_order_the_grades_come_in(tmp_path, engines, monkeypatch):
    import time

    from reward.math.grader import Grade

    def grade(reply, reference, options):   # the first problem's grade comes last
        time.sleep(0.3 if reference == "2" else 0.0)
        return Grade("wrong", "x", "x")

    monkeypatch.setattr(math_eval, "grade", grade)
    log = tmp_path / "samples.jsonl"
    assert math_eval.main(["--model", "model_a", "--input", _write(tmp_path / "m.jsonl", PROBLEMS),
                           "--sample-log", str(log)]) == 0
    assert [json.loads(line)["id"] for line in log.read_text().splitlines()[1:]] == ["p1", "p2", "p3"]
