from lean_env.parse import extract_answer


def test_last_lean_block_after_think_wins():
    text = "<think>```lean4\nbad\n```</think>```lean4\nfirst\n```\nmore\n```lean\nsecond\n```\n```python\nx\n```"
    got = extract_answer(text)
    assert got.status == "ok" and got.code == "second\n"


def test_think_without_close_is_truncated():
    assert extract_answer("<think>long reasoning ```lean4\nx\n```").status == "truncated"


def test_unterminated_lean_block_is_truncated():
    assert extract_answer("</think>```lean4\ntheorem x : True := by\n  triv").status == "truncated"


def test_finish_reason_length_is_truncated_even_with_a_block():
    assert extract_answer("```lean4\nok\n```", finish_reason="length").status == "truncated"


def test_no_block_and_empty_block_are_no_answer():
    assert extract_answer("I cannot do it").status == "no_answer"
    assert extract_answer("```lean4\n-- nothing here\n```").status == "no_answer"
    assert extract_answer("").status == "no_answer"
    assert extract_answer(None).status == "no_answer"


def test_unterminated_non_lean_block_after_a_lean_block_keeps_the_lean_block():
    got = extract_answer("```lean4\nproof\n```\n```text\ndangling")
    assert got.status == "ok" and got.code == "proof\n"
