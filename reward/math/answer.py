r"""The final answer of a MATH-style reply: pure string scanning, stdlib only, linear in the reply's length.

Contract: `final_answer(reply, prompt_opens_think)` returns the answer the reply commits to, or None when it commits
to none.
1. Reasoning is not the answer: with a `</think>`, only the text after the last one counts; a `<think>` that
   never closes (a reply cut off while thinking, also one reopened after the last `</think>`) has no answer, and
   neither has a reply without `</think>` when `prompt_opens_think` (the prompt ended inside `<think>`, so the
   reply starts there). The reply ends at its first
   end-of-turn token (`<|im_end|>`, `<|im_start|>`, `<|eot_id|>`, `</s>`, ...: what follows is a turn the model made
   up) and at a few-shot continuation (a later line opening "Problem:", "Question:" or "Q:", then one opening
   "Solution:", "Answer:" or "A:"; a lone "Question:" may be the reply questioning itself); other special tokens
   and Minerva's "I hope it is correct." are dropped; a Unicode minus reads as "-".
2. The last commitment wins, by position: the last group of final boxes (`\boxed{..}`, `\fbox{..}`, `\boxed 5`;
   nested and escaped braces) or the last answer phrase ("Final Answer: ...", "the final answer is ...",
   "the answer is ...", "the correct option is ...", "Answer: ...", PRM800K's "# Answer" heading, GSM8K's
   "#### 72" line), whichever comes later; a phrase inside the box group is part of the box, not a commitment of
   its own. An `<answer>..</answer>` block (Open-Reasoner-Zero, DeepSeek-R1-Zero) is the commitment, unless a box
   or phrase after it takes it back: its box group, its phrase, or else its content read as an answer sentence.
   A box group is the last box plus the boxes right before it that only a joiner separates ("\boxed{-2} and
   \boxed{1}", "$x = \boxed{1}$, $y = \boxed{2}$"): their contents are joined with ", " (duplicates once). A gap
   that derives the next box ("hence $a + b = $") or picks one ("; the largest is $") is not a joiner.
   A later sentence can take the commitment back (`correction`): "... is actually 14" gives 14; "that is wrong"
   with no new value leaves no answer.
   A phrase's value runs to the end of its sentence; a sentence ("The volume of the prism is 120.") gives the
   part after its last "is" or "=".
3. Otherwise the last formula ($..$, \(..\), \[..\], $$..$$) or, failing that, the last number, but only when it
   sits in the reply's last sentence and that sentence is finished: it ends in '.', '!' or display math, or its last
   line is the number alone after balanced braces (a reply that trails off mid-derivation commits to nothing). A
   number is a whole token: "-5", "7 3/4" (a mixed number), "3√2", "2.5 million", never the "2" of "√2". An
   equality chain followed by a comment clause without math ("$3 \times 4 = 12$, which matches ...") gives its
   last side.
Every scan is one regex pass or one left-to-right brace match, so 20,000 unclosed `\boxed{` cost linear time.
"""
from __future__ import annotations

import re

_THINK_OPEN, _THINK_CLOSE = "<think>", "</think>"
_ANSWER_OPEN, _ANSWER_CLOSE = "<answer>", "</answer>"
_MINUS = str.maketrans({"\u2212": "-", "\uff0d": "-"})     # U+2212 and the full-width hyphen-minus
_NEXT_PROBLEM = re.compile(r"\n[ \t]*(?:\*\*|#+[ \t]*)?(?:Problem|Question|Q)(?:[ \t]*\d+)?(?:\*\*)?[ \t]*(?:\*\*)?:")
_ITS_SOLUTION = re.compile(r"\n[ \t]*(?:\*\*|#+[ \t]*)?(?:Solution|Answer|A)(?:\*\*)?[ \t]*(?:\*\*)?:")
_END_OF_TURN = re.compile(
    r"<\|(?:im_end|im_start|eot_id|endoftext|end_of_text|end)\|>|</s>|<end_of_turn>|<｜end▁of▁sentence｜>"
)
_SPECIAL_TOKEN = re.compile(r"<\|[^|<>]{1,40}\|>|<s>")
_HOPE = re.compile(r"(?<!\s)\s*I hope (?:it|this|that) is correct\.?", re.IGNORECASE)   # one start per run
_BOX = re.compile(r"\\(?:boxed|fbox)(?![A-Za-z])")
_PHRASE = re.compile(
    r"(?:\bfinal\s+answer\b(?:\s*(?:is|:|\*\*|#|\\\]|\\\)|\$)+)?|\bthe\s+(?:correct\s+)?(?:answer|option|choice)\s+is\b"
    r"|(?<![\w-])answer\s*(?:\*\*)?\s*:|^[ \t]*#{1,6}[ \t]*answer[ \t]*$"
    # GSM8K's "#### 72": a line of the mark and a number (and at most two unit words; not "#### 3. Setup")
    r"|^[ \t]*####(?=[ \t]*\$?-?[\d.,]*\d(?:[ \t]+[a-z]+){0,2}[ \t]*\.?[ \t]*$))",
    re.IGNORECASE | re.MULTILINE)
_GSM8K_LINE = re.compile(r"^[ \t]*####[ \t]*(\$?-?[\d.,]*\d)[ \t]*\.?\s*\Z", re.MULTILINE)
_PHRASE_SKIP = re.compile(r"(?:\s|\*\*|#|:|\bis\b)*")
_MATH_SPAN = re.compile(r"\$\$(.+?)\$\$|\\\[(.+?)\\\]|\\\((.+?)\\\)|\$([^$]+?)\$", re.DOTALL)
_NUMBER = re.compile(r"(?<![\w.√\\^_{/])-?(?:\d+[ \t]+\d+[ \t]*/[ \t]*\d+|\d*√\d+|\d[\d,]*(?:\.\d+)?(?:\s*/\s*\d+)?%?"
                     r"(?:[ \t]+(?:thousand|million|billion|trillion)\b)?|\.\d+)(?![\w√^_])")
_STATES = re.compile(r"\b(?:is|are|was|were|equals|gives|get|got|makes|totals)\b|=", re.IGNORECASE)
_UNIT_WORD = (r"zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|"
              r"sixteen|seventeen|eighteen|nineteen")
_TENS_WORD = r"twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety"
_NUMBER_WORDS = re.compile(rf"(?:(?:{_UNIT_WORD}|{_TENS_WORD}|hundred|thousand|million|billion|and|a)\b[\s-]*)+",
                           re.IGNORECASE)
_STATED_WORD = re.compile(rf"\b(?:is|are|was|were|equals)\s+((?:{_TENS_WORD})(?:[- ](?:{_UNIT_WORD}))?|{_UNIT_WORD}|"
                          r"(?:a|one) hundred)\s*[.!]?\s*$", re.IGNORECASE)
_LAST_WORD_IS = re.compile(r".*(?:\bis\b|=|\bare\b|\bequals\b)\s*(?::\s*)?", re.DOTALL)
_JOIN_TOKEN = re.compile(
    r"\s+|[,;.$&]|\\[()\[\]]|\\\\|\\q?quad\b|\\[,;:! ]|~|\\text\{[^{}]{0,30}\}|\\(?:mbox|textnormal)\{[^{}]{0,30}\}"
    r"|\\(?:begin|end)\{[a-z*]{1,10}\}|[A-Za-z]\w{0,12}|[(){}_^=\d+\-]")
_MAX_JOIN_GAP = 60
_MAX_JOIN_WORDS = 5
_MAX_SENTENCE = 1000        # an answer sentence longer than this is prose, not an answer
_TAIL = 2000                # the last formula / number is looked for only in the reply's last characters
_PHRASES_TRIED = 5          # the last phrases whose values are checked (bounded work on phrase-heavy replies)
_NOT_AN_ANSWER = {"correct", "right", "wrong", "incorrect", "below", "above", "as follows", "the following", "not",
                  "reasonable", "clear", "that", "this", "unknown"}
# A gap that picks one of the boxes before it ("; the largest is $") selects, it does not list.
_SELECTS = re.compile(r"\b(?:largest|smallest|greatest|least|biggest|maximum|minimum|max|min|only|valid|positive|"
                      r"negative|correct|final|answer|but|however|since|because|discard|reject|pick|choose|larger|"
                      r"smaller|greater|bigger|higher|lower)\b",
                      re.IGNORECASE)
# A sentence after the last commitment that takes it back: a value cue states the new value ("is actually 14",
# "should be 25"); a retraction cue only says it was wrong. A negation before a cue ("no mistake") is no retraction.
_VALUE_CUE = re.compile(r"\b(?:actually|in fact|should (?:be|have been)|instead)\b", re.IGNORECASE)
# A retraction says the reply itself erred ("I made a mistake", "that is wrong", "12 is incorrect"), not that an error
# exists somewhere ("this avoids the common error", "a frequent mistake is ...").
_RETRACTION_CUE = re.compile(
    r"\b(?:oops|miscalculat\w*|miscount\w*|(?:I|we)\s+(?:have\s+)?(?:made|make)\s+(?:a|an|some)\s+(?:\w+\s+)?"
    r"(?:mistakes?|errors?)|(?:that|this|it|which|my answer|the answer|[\d.]+)\s*(?:is|was|'s)\s+"
    r"(?:wrong|incorrect))\b",
    re.IGNORECASE)
_NEGATED = re.compile(r"\b(?:no|not|nothing|never|any|without|for|of)\W+(?:\w+\W+){0,2}$|n't\W+(?:\w+\W+){0,2}$",
                      re.IGNORECASE)
# A clause after an unboxed equality that only comments on it (", which matches the number of edges.").
_COMMENT_CLAUSE = re.compile(r"(?:\s+(?!(?:is|are|was|not)\b)[A-Za-z]+){0,3}\s*,\s*"   # "$..$ dollars a day, which"
                             r"(?:which|as|since|because|where|confirming|matching|and this|that is)\b[^$\\\d]*")
_DERIVES = re.compile(r"\b(?:hence|thus|so|therefore|then|gives?|giving|which|sum|product|total)\b|\w\s*[-+*/^]\s*\w"
                      r"|\\(?:cdot|times|div)\b", re.IGNORECASE)


def visible_reply(text: str, prompt_opens_think: bool = False) -> str | None:
    """The reply without its reasoning block, chat special tokens and made-up later turns or problems; None if a
    `<think>` block never closes (the prompt's own `<think>` when `prompt_opens_think`)."""
    close = text.rfind(_THINK_CLOSE)
    if close != -1:
        text = text[close + len(_THINK_CLOSE):]
    elif prompt_opens_think:
        return None
    if _THINK_OPEN in text:  # a think block (re)opened after the last `</think>` that never closes
        return None
    end = _END_OF_TURN.search(text)
    if end:
        text = text[:end.start()]
    start = len(text) - len(text.lstrip())
    follow_up = _NEXT_PROBLEM.search(text, start + 1)  # a reply may restate its own problem first
    if follow_up and _ITS_SOLUTION.search(text, follow_up.end()):  # a new problem with its own solution
        text = text[:follow_up.start()]
    return _HOPE.sub("", _SPECIAL_TOKEN.sub(" ", text.translate(_MINUS)))


def matching_braces(text: str) -> dict[int, int]:
    """{index of '{': index of its '}'} for every balanced group, in one pass (`\\{`, `\\}` are literal)."""
    pairs, stack, i, n = {}, [], 0, len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == "{":
            stack.append(i)
        elif c == "}" and stack:
            pairs[stack.pop()] = i
        i += 1
    return pairs


def boxes(text: str) -> list[tuple[int, int, str]]:
    """Every complete box as (start, end, content), in order: `\\boxed{..}` / `\\fbox{..}` and `\\boxed 5`."""
    pairs = matching_braces(text)
    found = []
    for match in _BOX.finditer(text):
        after = match.end()
        rest = text[after:after + 1]
        j = after
        while j < len(text) and text[j] in " \t" and j - after < 8:
            j += 1
        if j < len(text) and text[j] == "{":
            close = pairs.get(j)
            if close is not None:
                found.append((match.start(), close + 1, text[j + 1:close].strip()))
        elif rest == " ":
            token = re.match(r"[^\s$]+", text[j:j + 200])
            if token:
                found.append((match.start(), j + token.end(), token.group(0).rstrip(".,")))
    return found


def _is_joiner(gap: str) -> bool:
    """Whether the text between two boxes only lists them ("and", ",", "$ and $y =", "\\quad\\text{and}\\quad")."""
    if len(gap) > _MAX_JOIN_GAP or "\n\n" in gap or re.search(r"[.!?]\s+[A-Z]", gap):
        return False
    if _DERIVES.search(re.sub(r"[\s$]|\\[()]", "", gap) + " " + gap) or _SELECTS.search(gap):
        return False
    tokens = _JOIN_TOKEN.findall(gap)
    if sum(map(len, tokens)) != len(gap):
        return False
    return sum(1 for t in tokens if t[:1].isalpha() and len(t) > 2) <= _MAX_JOIN_WORDS


def last_box_group(text: str) -> tuple[int, str] | None:
    """(start of the group, contents joined by ", ") of the final boxes, or None without a complete box."""
    group = _box_group_span(text)
    return None if group is None else (group[0], group[2])


def _box_group_span(text: str) -> tuple[int, int, str] | None:
    """(start, end, contents joined by ", ") of the group of final boxes, or None without a complete box."""
    found = boxes(text)
    if not found:
        return None
    group = [found[-1]]  # newest first
    for box in reversed(found[:-1]):
        if box[1] > group[-1][0] or not _is_joiner(text[box[1]:group[-1][0]]):
            break
        group.append(box)
    contents = list(dict.fromkeys(content for _, _, content in reversed(group) if content))
    return group[-1][0], group[0][1], ", ".join(contents)


def _sentence_end(text: str, start: int) -> int:
    """Index where the sentence that starts at `start` ends: a newline, or a '.' followed by a space or the end,
    outside math and braces (so '3.5', '$x.$' and '\\frac{1}{2}.' stay whole). Display math is one unit."""
    depth, dollars, i, n = 0, 0, start, len(text)
    while i < n:
        c = text[i]
        if c == "\\" and text.startswith("\\[", i):
            close = text.find("\\]", i)
            i = n if close == -1 else close + 2
            continue
        if c == "$" and text.startswith("$$", i):
            close = text.find("$$", i + 2)
            i = n if close == -1 else close + 2
            continue
        if c == "\\":
            i += 2
            continue
        if c == "$":
            dollars ^= 1
        elif c == "{":
            depth += 1
        elif c == "}":
            depth = max(0, depth - 1)
        elif (c == "\n" and (not dollars or text.startswith("\n\n", i))) or \
                (c == "." and not dollars and depth == 0 and (i + 1 == n or text[i + 1].isspace())):
            return i
        i += 1
    return n


def _strip_value(value: str) -> str:
    value = re.sub(r"(?<!\\)\$(?!\$)", " ", value) if value.count("$") % 2 else value
    value = value.strip().strip("*").strip()
    for left, right in (("$$", "$$"), ("\\[", "\\]"), ("\\(", "\\)"), ("$", "$")):
        if value.startswith(left) and value.endswith(right) and len(value) >= len(left) + len(right):
            value = value[len(left):len(value) - len(right)].strip()
    return value.rstrip(".,;").strip()


def sentence_answer(sentence: str) -> str | None:
    """The answer a short sentence states: the part after its last "is" / "=" / "equals" if it has one (a
    "The volume is 120" sentence), else the sentence itself; None for an empty value or a non-answer word."""
    sentence = sentence.strip().strip("*").strip()
    spans = [m for m in _MATH_SPAN.finditer(sentence)]
    rest = sentence[spans[-1].end():] if spans else ""
    comment = bool(spans) and _COMMENT_CLAUSE.fullmatch(rest) is not None
    if spans and (comment or not rest.strip(" .,;*")):
        last = next(g for g in spans[-1].groups() if g is not None)
        prose = sentence[:spans[-1].start()]
        if not prose.strip() or re.search(r"(?:\bis|=|\bare|\bequals|:)\s*$", prose):
            return _strip_value(_right_side(last) if comment else last) or None
    stated = _LAST_WORD_IS.match(sentence)
    value = _strip_value(sentence[stated.end():] if stated and sentence[stated.end():].strip() else sentence)
    return value if _looks_like_answer(value) else None


def _looks_like_answer(value: str) -> bool:
    """A stated value, not prose: it has a digit or TeX, is number words, or is at most three words and not a
    judgement word."""
    if not value or value.lower() in _NOT_AN_ANSWER:
        return False
    return bool(re.search(r"[\\\d^_=<>()\[\]{}]", value)) or len(value.split()) <= 3 or \
        bool(_NUMBER_WORDS.fullmatch(value))


def last_phrase(text: str) -> tuple[int, str] | None:
    """(position, value) of the last answer phrase that states a value ("Final Answer: 7", "The answer is $x$")."""
    for match in list(_PHRASE.finditer(text))[::-1][:_PHRASES_TRIED]:
        start = _PHRASE_SKIP.match(text, match.end()).end()
        value = sentence_answer(text[start:_sentence_end(text, start)][:_MAX_SENTENCE])
        if value is not None:
            return match.start(), value
        if text[start:start + 1] == "\\" and _BOX.match(text, start):
            return None  # "Final Answer: \boxed{..}": the box speaks
    return None


def _last_sentence_start(text: str) -> int:
    body = text.rstrip()
    ends = [m.end() for m in re.finditer(r"[.!?](?=\s)|\n\s*\n", body)]
    ends = [e for e in ends if body[e:].strip(" .\n*")]
    return ends[-1] if ends else 0


def trailing_formula(text: str) -> str | None:
    """The last formula, or else the number, of the reply's last sentence, when that sentence is finished (ends in
    '.', '!' or a display formula) and the formula or number closes it (at most three words follow) or is its only
    number and follows a verb that states it ("there are 12 sequences that ..."); a sentence that ends "is six." gives
    the number word."""
    body = text.rstrip()[-_TAIL:]
    if not body or not (body.endswith((".", "!", "\\]", "$")) or _ends_in_a_lone_number(body)):
        return None
    start = _last_sentence_start(body)
    spans = [m for m in _MATH_SPAN.finditer(body) if m.end() > start]
    if spans:
        formula = next(g for g in spans[-1].groups() if g is not None).strip()
        rest = body[spans[-1].end():]
        if _closes_sentence(rest) or "=" in formula and _COMMENT_CLAUSE.fullmatch(rest):
            return _right_side(formula).rstrip(".,;").strip() or None
    word = _STATED_WORD.search(body, start)
    if word:
        return word.group(1).lower()
    numbers = list(_NUMBER.finditer(body, start))
    closing = [m for m in numbers if _closes_sentence(body[m.end():])]
    stated = len(numbers) == 1 and _STATES.search(body[start:numbers[0].start()])
    chosen = closing[-1] if closing else numbers[0] if stated else None
    return chosen.group(0).rstrip(",") if chosen else None


def _right_side(formula: str) -> str:
    """The last side of an equality chain ("3 \\times 4 = 12" -> "12"); a list ("x = 1, y = 2") stays whole."""
    return formula.rsplit("=", 1)[1].strip() if "=" in formula and "," not in formula else formula


def _ends_in_a_lone_number(body: str) -> bool:
    """Whether the last line is only a number ("**12**") after text whose braces and dollars all close, and is not
    the next label of a numbered list ("2. ...\n3": a reply cut off mid-list)."""
    head, _, last = body.rpartition("\n")
    if not re.fullmatch(r"[*\s]*" + _NUMBER.pattern + r"[*\s]*", last):
        return False
    label = re.search(r"(?:^|\n)[ \t]*(\d+)[.)][^\n]*\s*$", head)
    if label and last.strip(" *") == str(int(label.group(1)) + 1):
        return False
    return head.count("{") == head.count("}") and head.count("$") % 2 == 0


def _closes_sentence(rest: str) -> bool:
    return bool(re.fullmatch(r"[\s.,;!*]*(?:[A-Za-z]+[\s.,;!*]*){0,3}", rest))


def reference_answer(reference: str) -> str:
    """The reference as given, or its final box group when it is a worked solution ("... so $\\boxed{20}$ percent."),
    or the number of its GSM8K answer line ("...\\n#### 72")."""
    group = last_box_group(reference)
    if group and group[1]:
        return group[1]
    gsm8k = _GSM8K_LINE.search(reference)
    return gsm8k.group(1) if gsm8k else reference


def final_answer(reply: str | None, prompt_opens_think: bool = False) -> str | None:
    """The answer `reply` commits to (see the module docstring), or None."""
    if not reply:
        return None
    text = visible_reply(reply, prompt_opens_think)
    if text is None:
        return None
    tagged = answer_tag(text)
    text = text if tagged is None else tagged
    box = _box_group_span(text)
    phrase = last_phrase(text)
    if box and (phrase is None or phrase[0] < box[1]):  # a phrase inside the box group is the box's
        answer, end = box[2] or None, box[1]
    elif phrase:
        answer, end = phrase[1], _sentence_end(text, phrase[0])
    else:
        return trailing_formula(text) if tagged is None else sentence_answer(tagged[:_MAX_SENTENCE])
    retracted, corrected = correction(text[end:][-_TAIL:], answer)
    return corrected if retracted else answer


def correction(tail: str, answer: str | None = None) -> tuple[bool, str | None]:
    """(whether `tail`, the text after the last commitment, takes it back; the value it states instead or None).
    The last cue decides: a value cue ("is actually 14", "should be $25$") retracts only when a value follows it in
    its sentence; a retraction cue ("that is wrong", "I made a mistake") always does, and its value is the one a
    later sentence of the tail states, if any. A negated cue ("no mistake", "not wrong") is none, and so is one
    whose sentence names a number other than `answer` before it ("choosing 4 would be wrong"). Only the last
    `_PHRASES_TRIED` cues are read."""
    cues = sorted([*_VALUE_CUE.finditer(tail), *_RETRACTION_CUE.finditer(tail)], key=lambda m: m.start())
    for cue in cues[::-1][:_PHRASES_TRIED]:   # bounded work on cue-heavy tails
        if _NEGATED.search(tail[max(0, cue.start() - 40):cue.start()]):
            continue
        value = _stated_value(tail[cue.end():_sentence_end(tail, cue.end())])
        before = re.split(r"[.!?\n]", tail[max(0, cue.start() - 200):cue.start()])[-1]
        if value is None and answer and re.search(r"\d", before) and answer not in before:
            continue   # "choosing 4 would be wrong": about another value, not the answer
        if _VALUE_CUE.fullmatch(cue.group(0)):
            if value is not None:
                return True, value
            continue
        end = _sentence_end(tail, cue.end())
        for sentence in reversed(re.split(r"(?<=[.!?])\s+|\n", tail[end:])):
            stated = _stated_value(sentence)
            if stated is not None:
                return True, stated
        return True, value
    return False, None


def _stated_value(sentence: str) -> str | None:
    """The value a sentence states when it is math (a digit or TeX), else None."""
    value = sentence_answer(sentence[:_MAX_SENTENCE].strip(" ,:;"))
    return value if value is not None and re.search(r"[\d\\]", value) else None


def answer_tag(text: str) -> str | None:
    """The content of the last complete `<answer>..</answer>` block (found from the end: linear), or None when there
    is none or a box or answer phrase after it takes the answer back."""
    close = text.rfind(_ANSWER_CLOSE)
    start = text.rfind(_ANSWER_OPEN, 0, close) if close != -1 else -1
    after = text[close + len(_ANSWER_CLOSE):]
    if start == -1 or last_box_group(after) or last_phrase(after):
        return None
    return text[start + len(_ANSWER_OPEN):close]
