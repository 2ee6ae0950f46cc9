r"""Boxed answers in a reply: every complete `\boxed{..}` / `\fbox{..}` / `\boxed 5` (nested and escaped braces,
one left-to-right brace match, so 20,000 unclosed `\boxed{` cost linear time), and the final box group.

A box group is the last box plus the boxes right before it that only a joiner separates ("\boxed{-2} and
\boxed{1}", "$x = \boxed{1}$, $y = \boxed{2}$"): their contents are joined with ", " (duplicates once). A gap that
derives the next box ("hence $a + b = $") or picks one ("; the largest is $") is not a joiner.
"""
from __future__ import annotations

import re

BOX = re.compile(r"\\(?:boxed|fbox)(?![A-Za-z])")
_JOIN_TOKEN = re.compile(
    r"\s+|[,;.$&]|\\[()\[\]]|\\\\|\\q?quad\b|\\[,;:! ]|~|\\text\{[^{}]{0,30}\}|\\(?:mbox|textnormal)\{[^{}]{0,30}\}"
    r"|\\(?:begin|end)\{[a-z*]{1,10}\}|[A-Za-z]\w{0,12}|[(){}_^=\d+\-]")
_MAX_JOIN_GAP = 60
_MAX_JOIN_WORDS = 5
# A gap that picks one of the boxes before it ("; the largest is $") selects, it does not list.
_SELECTS = re.compile(r"\b(?:largest|smallest|greatest|least|biggest|maximum|minimum|max|min|only|valid|positive|"
                      r"negative|correct|final|answer|but|however|since|because|discard|reject|pick|choose|larger|"
                      r"smaller|greater|bigger|higher|lower)\b",
                      re.IGNORECASE)
_DERIVES = re.compile(r"\b(?:hence|thus|so|therefore|then|gives?|giving|which|sum|product|total)\b|\w\s*[-+*/^]\s*\w"
                      r"|\\(?:cdot|times|div)\b", re.IGNORECASE)


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
    for match in BOX.finditer(text):
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
    group = box_group_span(text)
    return None if group is None else (group[0], group[2])


def box_group_span(text: str) -> tuple[int, int, str] | None:
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
