r"""Issue 34's classes, one test per rule of a careful grader, written from that grader's own code (read, not copied):
- PRM800K: openai/prm800k `prm800k/grading/grader.py` (`_normalize`, `_inject_implicit_mixed_number`,
  `_strip_properly_formatted_commas`) and its README's sample format ("...\n\n# Answer\n\n320,000");
- Qwen2.5-Math: QwenLM/Qwen2.5-Math `evaluation/parser.py` (`strip_string`, `convert_word_number`,
  `extract_multi_choice_answer`) and `evaluation/grader.py` (`math_equal`, `is_numerical_equal`,
  `choice_answer_clean`);
- lm-eval: `lm_eval/tasks/minerva_math/utils.py` (`normalize_final_answer`: SUBSTITUTIONS, REMOVED_EXPRESSIONS) and
  `lm_eval/tasks/hendrycks_math/utils.py` (`remove_right_units`, `strip_string`).
Each docstring says whether we follow the rule; where the graders disagree, docs/eval.md says which convention we
keep and why. The timeout and speed classes are in test_math_grader.py and test_math_score.py.
"""
from __future__ import annotations

import pytest

from reward.math.answer import final_answer
from reward.math.canonical import canonical
from reward.math.equal import answers_equal
from reward.math.reply import visible_reply


def graded(reply: str, reference: str, prompt_opens_think: bool = False) -> bool:
    answer = final_answer(reply, prompt_opens_think)
    return answer is not None and answers_equal(answer, reference)


# --- Units ---------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("prediction, reference, equal", [
    ("4 cm", "4", True), ("30 minutes", "30", True), (r"90 \text{ degrees}", "90", True), ("5 feet", "5", True),
    ("4s", "4", False), ("4", "4s", False), ("2g", "2", False), ("3m", "3", False),
])
def test_prm800k_units_are_unit_words_not_letters(prediction, reference, equal):
    """PRM800K grader.py `_normalize` removes the unit words degree, cm, centimeter, meter, mile, second, minute,
    hour, day, week, month, year, foot, feet, inch, yard (and plurals), never a single letter. We agree; Qwen2.5-Math
    parser.py `unit_texts` also strips bare "s", "m", "g" (we do not: "4s" is 4 times s)."""
    assert answers_equal(prediction, reference) is equal


@pytest.mark.parametrize("prediction, reference, equal", [
    (r"5\text{ m}", "5", True), (r"60\text{s}", "60", True), (r"9.8\,\text{m/s}^2", "9.8", True),
    (r"15\mbox{ cm}^2", "15", True),
])
def test_minerva_drops_text_wrapped_unit_symbols(prediction, reference, equal):
    r"""lm-eval minerva_math utils.py `normalize_final_answer`: SUBSTITUTIONS turn "\text{m}" into "\text{}" and
    REMOVED_EXPRESSIONS drop "\text{s}", "\text{}^2". We agree: a unit symbol inside a text group is a unit."""
    assert answers_equal(prediction, reference) is equal


@pytest.mark.parametrize("prediction", [r"7 \text{ or more}", r"7\text{ at least}", r"7 \text{ if } n>2"])
def test_a_text_tail_that_is_no_unit_stays(prediction):
    r"""lm-eval hendrycks_math utils.py `remove_right_units` cuts everything after "\text{ " and Qwen2.5-Math
    parser.py `strip_string` removes any trailing "\text{...}"; both would grade "7 \text{ or more}" as 7. We do not:
    only a unit word or symbol is dropped, so the hedge or condition stays part of the answer."""
    assert canonical(prediction) != "7" and not answers_equal(prediction, "7")


# --- The trailing-number fallback ----------------------------------------------------------------------------------

@pytest.mark.parametrize("reply, answer", [
    (r"We have \frac{\frac{ 17", None),
    ("Then we multiply by 17", None),
    ("Adding the parts:\n\n17", "17"),
    ("Adding the parts:\n\n**17**", "17"),
    ("So the value is \u22125.", "-5"),
    ("So the side is \u221a2.", "\u221a2"),
    ("So the side is 3\u221a2.", "3\u221a2"),
    ("So it takes 7 3/4.", "7 3/4"),
    ("So the town has 2.5 million people.", "2.5 million"),
])
def test_trailing_number_is_a_whole_token_of_a_finished_reply(reply, answer):
    """Qwen2.5-Math parser.py `extract_answer` falls back to the last match of "-?\\d*\\.?\\d+" anywhere (so "√2"
    gives 2, "−5" gives 5, "7 3/4" gives 4, and a reply cut mid-formula still pays). We keep a fallback (replies
    without a box are common) but only for a finished last sentence and only for a whole number token."""
    assert final_answer(reply) == answer


@pytest.mark.parametrize("prediction, reference, equal", [
    ("7 3/4", r"\frac{31}{4}", True), (r"7\frac{3}{4}", r"\frac{31}{4}", True), ("-7 3/4", "-7.75", True),
    ("7 3/4", r"\frac{3}{4}", False), (r"7\frac{3}{4}", r"\frac{21}{4}", False),
])
def test_prm800k_mixed_numbers(prediction, reference, equal):
    """PRM800K grader.py `_inject_implicit_mixed_number` reads "7 3/4" as 7+3/4 (MATH writes mixed numbers as
    "7\\frac{3}{4}"). We agree, for a whole answer that is an integer and a proper fraction."""
    assert answers_equal(prediction, reference) is equal


@pytest.mark.parametrize("prediction, reference, equal", [
    ("\u22125", "-5", True), ("\u22125", "5", False), ("3\u221a2", r"3\sqrt{2}", True), ("\u221a2", "2", False),
    ("\u221a(x+1)", r"\sqrt{x+1}", True), ("2\u03c0", r"2\pi", True), ("x \u2264 3", r"x \le 3", True),
])
def test_unicode_math_reads_as_its_tex(prediction, reference, equal):
    """PRM800K grader.py `_parse_latex` maps the Unicode that pylatexenc emits back (√ -> sqrt, π -> pi); we map the
    Unicode a model writes (minus sign, root, pi, relations) to TeX before comparing. We agree."""
    assert answers_equal(prediction, reference) is equal


# --- Where the answer is -------------------------------------------------------------------------------------------

def test_prm800k_answer_heading():
    """PRM800K README: a generated solution ends "...\\n\\n# Answer\\n\\n320,000"; the heading is the commitment,
    also after an earlier box. We agree."""
    reply = "At first $\\boxed{16}$, but one case was counted twice.\n\n# Answer\n\n17"
    assert final_answer(reply) == "17"
    assert final_answer("The gcd is $320,\\!000$.\n\n# Answer\n\n320,000") == "320,000"


@pytest.mark.parametrize("reply, answer", [
    (r"So $a = \boxed{3}$ and $b = \boxed{4}$, hence $a + b = \boxed{7}$.", "7"),
    (r"$a = \boxed{3}$, so $a^2 = \boxed{9}$", "9"),
    (r"The roots are $\boxed{-2}$ and $\boxed{1}$.", "-2, 1"),
])
def test_a_derived_box_is_not_joined(reply, answer):
    """Every source grader takes the last box only (Qwen2.5-Math parser.py `extract_answer`, lm-eval
    `last_boxed_only_string`). We join boxes that only a joiner separates (one box per root), but a gap that derives
    the next box ("hence a + b =") ends the group: the derived box is the answer, as the sources say."""
    assert final_answer(reply) == answer


@pytest.mark.parametrize("reply, answer", [
    (r"So $\boxed{\text{The answer is } 3 \text{ or } 4}$.", r"\text{The answer is } 3 \text{ or } 4"),
    (r"$\boxed{\text{Final answer: } 12}$", r"\text{Final answer: } 12"),
])
def test_a_phrase_inside_a_box_is_the_box(reply, answer):
    """Qwen2.5-Math parser.py `extract_answer` reads the box before any "the answer is" when a box exists. We agree
    for a phrase inside the box: the box's whole content is the answer (so a hedge in it stays a hedge)."""
    assert final_answer(reply) == answer


@pytest.mark.parametrize("reply, answer", [
    ("The answer is $\\boxed{5}$.\n\nProblem:\nWhat is $2+2$?\n\nSolution:\n$\\boxed{4}$", "5"),
    ("So the answer is 12.\n\nQ: How many legs do 2 cats have?\nA: The answer is 8.", "12"),
    ("So it is $\\boxed{5}$.\n\n**Problem 2:** Find $y$.\n\n**Solution:** $\\boxed{9}$", "5"),
    ("The answer is $\\boxed{5}$.\n\nQuestion: is that right? No, recounting gives $\\boxed{6}$.", "6"),
    ("Problem: find the faces of a cube.\n\nA cube has $\\boxed{6}$ faces.", "6"),
])
def test_a_few_shot_continuation_is_cut(reply, answer):
    """Qwen2.5-Math parser.py `extract_multi_choice_answer` keeps the text before "Problem:", and lm-eval
    minerva_math stops generation at "Problem:". We agree, for a later line that opens Problem:, Question: or Q:
    followed by its own Solution:, Answer: or A: line (a reply that restates its own problem on its first line keeps
    it, and a lone "Question:" may be the reply questioning its own answer)."""
    assert final_answer(reply) == answer


@pytest.mark.parametrize("reply, opens, visible", [
    ("so 42.\n</think>\n\nThe answer is 42.", True, "\n\nThe answer is 42."),
    ("so 42.\n</think>\n\nThe answer is 42.", False, "\n\nThe answer is 42."),
    ("Let me add 10 and 32, so the answer is \\boxed{42}", True, None),
    ("Let me add 10 and 32, so the answer is \\boxed{42}", False, "Let me add 10 and 32, so the answer is \\boxed{42}"),
])
def test_prompt_opens_think(reply, opens, visible):
    """DeepSeek-R1's current chat template and Open-Reasoner-Zero's prompt end inside "<think>": the reply holds
    only "</think>", or nothing when it was cut off while thinking. With prompt_opens_think a reply without
    "</think>" is all reasoning (no answer), as a reply that opens "<think>" itself and never closes it."""
    assert visible_reply(reply, prompt_opens_think=opens) == visible
    assert graded(reply, "42", prompt_opens_think=opens) is (visible is not None)


# --- Equivalence ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("prediction, reference, equal", [
    (r"\textbf{(D)}", r"\text{(D)}", True), (r"\text{(D)}", r"\textbf{(D)}", True), ("(D)", r"\text{(D)}", True),
    (r"\textbf{(B)}", r"\text{(D)}", False), (r"\mathbf{(D)}", r"\text{(D)}", True),
    (r"\textbf{(D)}", r"\textbf{(D)}\ 12", True), (r"\textbf{(D)}\ 13", r"\textbf{(D)}\ 12", False),
])
def test_minerva_unwraps_textbf(prediction, reference, equal):
    r"""lm-eval minerva_math utils.py `normalize_final_answer` unwraps "\textbf{..}" as it does "\text{..}". We
    agree, and also read AMC's "\textbf{(D)}\ 12" (label and value) as the choice D."""
    assert answers_equal(prediction, reference) is equal


@pytest.mark.parametrize("reply, reference, equal", [
    ("The correct option is (E).", r"\text{(E)}", True),
    ("The correct choice is (E).", "E", True),
    ("The correct option is (B).", r"\text{(E)}", False),
])
def test_qwen_choice_phrase(reply, reference, equal):
    """Qwen2.5-Math parser.py `choice_answer_clean` reads "choice is" as "answer is" and grader.py `math_equal` compares
    a choice letter A-E. We agree: "the correct option/choice/answer is" is an answer phrase."""
    assert graded(reply, reference) is equal


@pytest.mark.parametrize("prediction, reference, equal", [
    ("twenty-five", "25", True), ("forty two", "42", True), ("one hundred and five", "105", True),
    ("ninety", "90", True), ("twenty-five", "35", False), ("five", "5", True),
])
def test_qwen_number_words(prediction, reference, equal):
    """Qwen2.5-Math parser.py `convert_word_number` (word2number's `w2n.word_to_num`) turns any number words into the
    number. We agree, for answers made only of number words."""
    assert answers_equal(prediction, reference) is equal


@pytest.mark.parametrize("prediction, reference, equal", [
    ("2.5 million", "2500000", True), (r"3\text{ billion}", "3000000000", True), ("2.5 million", "2.5", False),
])
def test_prm800k_scale_words(prediction, reference, equal):
    """PRM800K grader.py `_normalize` replaces million, billion, trillion by *10^6, *10^9, *10^12. We agree."""
    assert answers_equal(prediction, reference) is equal


@pytest.mark.parametrize("reply, reference, equal", [
    ("Checking every case, the answer is yes.", r"\text{yes}", True),
    ("Checking every case, the answer is no.", "No", True),
    ("Checking every case, the answer is yes.", r"\text{no}", False),
])
def test_yes_no_answers(reply, reference, equal):
    """PRM800K grader.py `_normalize` lower-cases text answers ("don't be case sensitive for text answers"), so a
    yes/no gold compares as text. We agree: "yes" and "no" are answers, not judgement words."""
    assert graded(reply, reference) is equal


@pytest.mark.parametrize("prediction, reference, equal", [
    (r"50\%", "0.5", True), (r"10\%", "0.1", True), (r"50\%", "50", True),
    (r"0.5\%", "0.5", False), (r"0.05\%", "5", False), (r"1\%", "1", False),
    ("0.5", r"50\%", True), ("50", r"50\%", True), ("12.5", r"12.5\%", True), ("0.125", r"12.5\%", True),
    (r"5\%", r"50\%", False),
])
def test_percent_leniency_one_way(prediction, reference, equal):
    """Qwen2.5-Math grader.py `is_numerical_equal` (include_percentage) accepts reference/100, reference and
    reference*100, and PRM800K grader.py `_normalize` and hendrycks `strip_string` delete "%" on both sides, so all
    three call "0.5\\%" equal to 0.5. We disagree for that direction: the reference's percent may be dropped or read as
    a fraction, but a predicted "p\\%" is p/100, or p only against a reference above 1 (one that left the sign off)."""
    assert answers_equal(prediction, reference) is equal


def test_prm800k_thousands_commas_not_tuple_commas():
    """PRM800K grader.py `_strip_properly_formatted_commas` removes "1,000"-style commas but keeps tuple commas. We
    agree ("32, 349" with a space is a list)."""
    assert answers_equal("40,000", r"40,\!000") and answers_equal("3,000,000,000", r"3\text{ billion}")
    assert not answers_equal("32, 349", "32349")
