"""The no-download demo's data, model export and reward (sdpo_data.addition_rows, sdpo_data.smollm2,
reward.addition)."""
from __future__ import annotations

import copy
from types import SimpleNamespace

from reward.addition import compute_score, first_answer
from sdpo_data.addition_rows import addition_rows
from sdpo_data.smollm2 import align_special_tokens


def test_exported_tokenizer_ends_turns_like_its_chat_template(smollm2_tokenizer):
    tokenizer = copy.deepcopy(smollm2_tokenizer)
    assert tokenizer.eos_token == "<|im_start|>"  # what the GGUF metadata says
    model = SimpleNamespace(config=SimpleNamespace(), generation_config=SimpleNamespace())
    align_special_tokens(tokenizer, model)
    end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    assert tokenizer.eos_token_id == tokenizer.pad_token_id == end == 2
    assert model.config.eos_token_id == model.generation_config.pad_token_id == end
    rendered = tokenizer.apply_chat_template([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "5"}],
                                             tokenize=False)
    assert rendered.rstrip("\n").endswith("5" + tokenizer.eos_token)


def test_rows_record_their_operands_and_content_accuracy_ignores_later_numbers():
    row = addition_rows(1, seed=3, split="test")[0]
    a, b = row["extra_info"]["operands"]
    assert int(row["reward_model"]["ground_truth"]) == a + b
    info = row["extra_info"]
    right = f"{a} + {b} = {a + b}. Then {a + b + 1} and more."
    result = compute_score("sdpo_demo_addition", right, row["reward_model"]["ground_truth"], info)
    # graded on the last number, content on the first
    assert result["score"] == 0.0 and result["content_correct"] == 1.0
    assert compute_score("sdpo_demo_addition", f"It is {a + b}.", a + b, info)["score"] == 1.0
    assert first_answer(f"{a} plus {b}", (a, b)) is None
    assert compute_score("sdpo_demo_addition", "no idea", a + b, info) | {"feedback": ""} == {
        "score": 0.0, "verdict": "no_answer", "infra": 0.0, "content_correct": 0.0, "pred": "", "feedback": ""}


def test_a_harder_split_draws_larger_operands_and_a_bad_bound_is_refused(tmp_path, capsys):
    from sdpo_data.addition_rows import main

    rows = addition_rows(200, seed=0, split="train", max_operand=999)
    operands = [x for r in rows for x in r["extra_info"]["operands"]]
    assert max(operands) > 30 and all(1 <= x <= 999 for x in operands)
    assert all(str(sum(r["extra_info"]["operands"])) == r["reward_model"]["ground_truth"] for r in rows)
    assert max(x for r in addition_rows(200, seed=0, split="train") for x in r["extra_info"]["operands"]) <= 30
    assert main(["--out-dir", str(tmp_path), "--max-operand", "0"]) == 2
    assert capsys.readouterr().err.startswith("error: --max-operand must be >= 1")
