"""Teacher-context selection, message building, tokenisation and shortening."""

import copy

import pytest
import torch

from sdpo_ext.teacher.reprompt import (
    RepromptConfig,
    TeacherSignal,
    _as_token_ids,
    build_teacher_batch,
    build_teacher_messages,
    fit_teacher_prompt,
    remove_thinking,
    render_prompt_ids,
    select_teacher_signals,
    shorten_middle,
)

SYSTEM = "You are a Lean 4 expert. Write the complete proof in a ```lean4``` block."
INSTRUCTION = "\n\nCorrectly solve the original question."


def chat(i: int) -> list[dict]:
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user",
         "content": f"Complete the following Lean 4 code:\n\ntheorem t{i} (n : ℕ) : n + {i} = {i} + n := by\n  sorry"},
    ]


def realistic_batch():
    """Three uid groups of n = 4.

    g0: mixed success (1 and 3 succeed), failures have feedback.
    g1: all fail; feedback on 0 and 1, blank on 2, none on 3.
    g2: index 8 is an infra failure that got score 1.0 (must never be a demo), 10 succeeds,
        9 fails with feedback, 11 is infra with feedback.
    """
    uids = ["g0"] * 4 + ["g1"] * 4 + ["g2"] * 4
    scores = [0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0]
    responses = [f"<think>plan {i}</think>\n\nproof {i}" for i in range(12)]
    feedbacks = ["error: linarith failed", None, "error: unknown identifier", None,
                 "error: type mismatch", "error: unsolved goals", "   ", None,
                 "", "error: omega could not prove the goal", None, "server timeout"]
    infra = [False] * 8 + [True, False, False, True]
    return uids, scores, responses, feedbacks, infra


def test_select_teacher_signals_realistic_batch():
    uids, scores, responses, feedbacks, infra = realistic_batch()
    sig = select_teacher_signals(uids, scores, responses, feedbacks, infra, RepromptConfig())
    demo_index = [s.demonstration_index for s in sig]
    assert demo_index == [1, 3, 1, 1, None, None, None, None, None, 10, None, None]
    assert sig[0].demonstration == "proof 1"  # <think> removed
    assert sig[0].feedback is None and sig[0].feedback_available  # demo wins (only-without-solution)
    assert sig[4].feedback == "error: type mismatch" and sig[4].demonstration is None
    assert sig[5].active and not sig[6].active and not sig[7].active
    assert sig[6].masked_reason == "no_signal" and not sig[6].feedback_available  # blank feedback
    assert sig[8].masked_reason == "infra" and sig[11].masked_reason == "infra"
    assert not sig[8].success and not sig[11].feedback_available
    assert sig[9].demonstration == "proof 10" and sig[9].feedback is None
    assert sig[10].masked_reason == "no_signal"  # only success of its group, self excluded
    assert [s.active for s in sig] == [True, True, True, True, True, True, False, False, False, True, False, False]


def test_select_teacher_signals_switches():
    uids, scores, responses, feedbacks, infra = realistic_batch()
    cfg = RepromptConfig(dont_reprompt_on_self_success=False, environment_feedback_only_without_solution=False,
                         remove_thinking_from_demonstration=False)
    sig = select_teacher_signals(uids, scores, responses, feedbacks, infra, cfg)
    assert sig[1].demonstration_index == 1 and sig[10].demonstration_index == 10  # may show itself
    assert sig[0].demonstration == responses[1]  # thinking kept
    assert sig[0].feedback == "error: linarith failed"  # both sections
    no_fb = select_teacher_signals(uids, scores, responses, feedbacks, infra,
                                   RepromptConfig(include_environment_feedback=False))
    assert all(s.feedback is None for s in no_fb)
    assert [s.active for s in no_fb] == [True, True, True, True] + [False] * 5 + [True, False, False]
    strict = select_teacher_signals(uids, scores, responses, feedbacks, infra,
                                    RepromptConfig(success_reward_threshold=1.5))
    assert all(s.demonstration is None for s in strict)
    with pytest.raises(ValueError, match="scores"):
        select_teacher_signals(uids, scores[:-1], responses, feedbacks, infra, RepromptConfig())


def test_remove_thinking():
    assert remove_thinking("<think>a\nb</think>\n\nfinal") == "final"
    assert remove_thinking("x <think>a</think> y <think>b</think>z") == "x y z"
    assert remove_thinking("reasoning opened by the generation prompt</think>\nfinal") == "final"
    assert remove_thinking("no thinking here") == "no thinking here"


def test_build_teacher_messages_exact_text_and_verbatim_context():
    student = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "first question"},
        {"role": "assistant", "content": "first answer"},
        {"role": "user", "content": "Prove {x} with `simp`."},
    ]
    original = copy.deepcopy(student)
    msgs = build_teacher_messages(student, TeacherSignal(demonstration="by simp", feedback="err {0}"))
    assert student == original  # input untouched
    assert msgs[:3] == original[:3]
    assert msgs[3]["content"] == (
        "Prove {x} with `simp`."
        "\nCorrect solution:\n\nby simp"
        "\nThe following is feedback from your unsuccessful earlier attempt:\n\nerr {0}"
        "\n\nCorrectly solve the original question."
    )
    only_fb = build_teacher_messages(student, TeacherSignal(feedback="err"))[3]["content"]
    assert only_fb == ("Prove {x} with `simp`.\n"
                       "The following is feedback from your unsuccessful earlier attempt:\n\nerr" + INSTRUCTION)
    assert build_teacher_messages(student, TeacherSignal(masked_reason="no_signal")) is None
    with pytest.raises(ValueError, match="no user message"):
        build_teacher_messages([{"role": "system", "content": "s"}], TeacherSignal(feedback="f"))


def test_config_validation():
    with pytest.raises(ValueError, match="reprompt_template"):
        RepromptConfig(reprompt_template="{prompt}{solution}")
    with pytest.raises(ValueError, match="feedback_template"):
        RepromptConfig(feedback_template="feedback: {feedback}")
    with pytest.raises(ValueError, match="max_reprompt_len"):
        RepromptConfig(max_reprompt_len=0)


def test_token_id_output_shapes():
    assert _as_token_ids({"input_ids": [1, 2], "attention_mask": [1, 1]}) == [1, 2]
    assert _as_token_ids([[3, 4]]) == [3, 4]
    assert _as_token_ids(torch.tensor([[5, 6]])) == [5, 6]
    assert _as_token_ids([7]) == [7]


def test_shorten_middle():
    assert shorten_middle("abcdefgh", 8, "|") == "abcdefgh"
    assert shorten_middle("abcdefgh", 5, "|") == "abc|gh"
    assert shorten_middle("abcdefgh", 0, "|") == "|"


def test_teacher_prompt_keeps_system_and_user_bytes(smollm2_tokenizer):
    tok = smollm2_tokenizer
    student = chat(3)
    student_ids = render_prompt_ids(tok, student)
    student_text = tok.decode(student_ids)
    end_of_user = student_text.index(student[-1]["content"]) + len(student[-1]["content"])
    signal = TeacherSignal(demonstration="```lean4\ntheorem t3 (n : ℕ) : n + 3 = 3 + n := by\n  omega\n```")
    teacher_ids = fit_teacher_prompt(tok, student, signal, RepromptConfig()).ids
    closing = len(tok("<|im_end|>\n<|im_start|>assistant\n", add_special_tokens=False)["input_ids"])
    assert tok.decode(student_ids[len(student_ids) - closing:]) == "<|im_end|>\n<|im_start|>assistant\n"
    assert teacher_ids[: len(student_ids) - closing] == student_ids[: len(student_ids) - closing]
    common = next((i for i, (a, b) in enumerate(zip(student_ids, teacher_ids)) if a != b), len(student_ids))
    assert tok.decode(teacher_ids[:common]).startswith(student_text[:end_of_user])
    teacher_text = tok.decode(teacher_ids)
    assert teacher_text.startswith(student_text[:end_of_user] + "\nCorrect solution:\n\n```lean4")
    assert teacher_text.endswith(INSTRUCTION + "<|im_end|>\n<|im_start|>assistant\n")
    assert SYSTEM in teacher_text


def test_shortening_keeps_instruction_and_generation_prompt(smollm2_tokenizer):
    tok = smollm2_tokenizer
    student = chat(5)
    long_feedback = "error: " + " ".join(f"goal{i} unsolved" for i in range(400)) + " END_OF_FEEDBACK"
    signal = TeacherSignal(feedback=long_feedback)
    full = fit_teacher_prompt(tok, student, signal, RepromptConfig())
    minimal = fit_teacher_prompt(tok, student, TeacherSignal(feedback="x"), RepromptConfig())
    budget = (len(full.ids) + len(minimal.ids)) // 2
    cfg = RepromptConfig(max_reprompt_len=budget)
    fitted = fit_teacher_prompt(tok, student, signal, cfg)
    assert fitted.signal.truncated and fitted.signal.active
    assert budget - 20 < len(fitted.ids) <= budget  # nearly the whole budget is used
    text = tok.decode(fitted.ids)
    assert text.endswith(INSTRUCTION + "<|im_end|>\n<|im_start|>assistant\n")
    assert student[-1]["content"] in text and SYSTEM in text
    assert cfg.truncation_marker in fitted.signal.feedback
    assert fitted.signal.feedback.startswith("error: goal0 unsolved")
    assert fitted.signal.feedback.endswith("END_OF_FEEDBACK")


def test_too_long_even_when_emptied_is_masked(smollm2_tokenizer):
    tok = smollm2_tokenizer
    student = chat(1)
    cfg = RepromptConfig(max_reprompt_len=len(render_prompt_ids(tok, student)) + 3)
    fitted = fit_teacher_prompt(tok, student, TeacherSignal(feedback="some feedback " * 20), cfg)
    assert fitted.ids is None and fitted.signal.masked_reason == "too_long"


def test_build_teacher_batch_masks_and_metrics(smollm2_tokenizer):
    tok = smollm2_tokenizer
    uids, scores, responses, feedbacks, infra = realistic_batch()
    messages = [chat(i) for i in range(12)]
    batch = build_teacher_batch(tok, messages, uids, scores, responses, feedbacks, infra, RepromptConfig(),
                                chat_template_kwargs={"enable_thinking": False})
    assert batch.mask == [True, True, True, True, True, True, False, False, False, True, False, False]
    assert [ids is None for ids in batch.prompt_ids] == [not m for m in batch.mask]
    for i, ids in enumerate(batch.prompt_ids):
        if ids is not None:
            student_prompt = tok.decode(render_prompt_ids(tok, messages[i]))
            assert tok.decode(ids).startswith(student_prompt[: -len("<|im_end|>\n<|im_start|>assistant\n")])
    m = batch.metrics
    assert m["self_distillation/success_group_fraction"] == pytest.approx(2 / 3)  # g0, g2 (infra 8 is no success)
    assert m["self_distillation/success_sample_fraction"] == pytest.approx(3 / 12)
    assert m["self_distillation/feedback_available_fraction"] == pytest.approx(5 / 12)  # 0, 2, 4, 5, 9
    assert m["self_distillation/feedback_used_fraction"] == pytest.approx(2 / 12)  # 4, 5
    assert m["self_distillation/demonstration_used_fraction"] == pytest.approx(5 / 12)  # 0-3, 9
    assert m["self_distillation/reprompt_sample_fraction"] == pytest.approx(7 / 12)
    assert m["self_distillation/truncated_fraction"] == 0.0
    assert m["self_distillation/too_long_fraction"] == 0.0
    assert "self_distillation/infra_fraction" not in m  # one name for the infra share: sdpo_lean/infra_fraction
