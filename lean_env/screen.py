"""Screen a model output before any Lean run (lexical anti-cheat and statement integrity).

All checks run on NFKC-normalised text with comments removed. The screen never raises on
any input string; `screen(...).ok` is True only for outputs worth sending to Lean.
Accepted shape of the answer block:
  [header lines: import / set_option / open (dropped, the trusted header is used instead)]
  [helper `theorem`/`lemma` declarations (kept, checked by Lean and by the axiom audit)]
  theorem <name> <the dataset's signature, any whitespace/comments> := <proof>
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from lean_env.parse import extract_answer
from lean_env.text import blank_comments, normalise, suspicious_character
from lean_env.types import Verdict

_ID = r"[^\s():{}\[\]⦃⦄,]+"
_DECL = re.compile(
    r"(?m)^[ \t]*(?:@\[[^\]]*\]\s*)?(?:(?:private|protected|noncomputable)\s+)*(theorem|lemma|def)\s+(" + _ID + ")"
)
_HEADER_LINE = re.compile(r"^\s*(import\s+\S.*|set_option\s+\S+\s+\S+\s*|open\s+[^\n]*)$")
_WORD = r"(?<![\w.'!?]){}(?![\w'!?])"
# (pattern, reason) checked anywhere in the answer block.
_ANYWHERE = r"(?<![\w'!?]){}(?![\w'!?])"   # also after a dot: `Lean.ofReduceBool`
_SORRY_WORDS = [(re.compile(_WORD.format("sorry")), "uses `sorry`"), (re.compile(_WORD.format("admit")), "uses `admit`"),
                (re.compile(_ANYWHERE.format("sorryAx")), "uses `sorryAx`")]
_DENY = [
    (re.compile(_WORD.format(w)), f"uses `{w}`")
    for w in ("axiom", "axioms", "implemented_by", "extern", "unsafe", "macro", "macro_rules", "syntax",
              "notation", "infix", "infixl", "infixr", "prefix", "postfix", "elab", "elab_rules",
              "run_cmd", "run_tac", "run_elab", "run_meta", "initialize", "builtin_initialize", "Lean.Elab", "Lean.Environment", "declare_syntax_cat", "csimp", "opaque")
] + [
    (re.compile(_ANYWHERE.format(w)), f"uses `{w}`")
    for w in ("native_decide", "ofReduceBool", "ofReduceNat", "trustCompiler", "addDecl", "addAndCompile")
] + [
    (re.compile(r"#(exit|eval|reduce|print|check_failure|guard_msgs|help|synth)\b"), "uses a `#` command"),
    (re.compile(r"\+native\b|native\s*:=\s*true"), "uses native evaluation"),
    (re.compile(r"(?<![\w.])debug\."), "sets a `debug.*` option"),
    (re.compile(r"(?<![\w.])(exact|apply|rw|hint)\?"), "uses a proof-search suggestion tactic (`exact?`/`apply?`)"),
]
# Only in the part that is sent to Lean (helpers + proof), not in the dropped header lines.
_DENY_IN_BODY = [
    (re.compile(r"(?m)^\s*import\b"), "has `import` after the header"),
    (re.compile(r"(?m)^\s*(namespace|section|end)\b"), "opens or closes a namespace/section"),
]
# Top-level commands allowed before the theorem, besides header lines.
_HELPER_START = re.compile(r"^(@\[\s*simp\s*\]\s*)?(theorem|lemma)\b")
_PUNCT = set("()[]{},:⦃⦄⟨⟩")


@dataclass(frozen=True)
class Statement:
    """A dataset's formal statement split into parts (all exact original text)."""

    name: str
    preamble: str   # non-import text before the theorem keyword (trusted: open/set_option lines)
    core: str       # from `theorem` up to (excluding) the final `:=`
    signature: str  # the part of `core` after the name


@dataclass(frozen=True)
class ScreenResult:
    ok: bool
    reason: str
    verdict: Verdict | None = None   # None when ok
    statement: Statement | None = None
    helpers: str = ""                # model's helper lemmas placed before the theorem
    proof: str | None = None         # model text after the statement's `:=`


def parse_statement(formal_statement: str) -> Statement:
    """Split a dataset statement (`theorem n … := by`, `… := sorry`, `… :=` or whole file)."""
    if not isinstance(formal_statement, str):
        raise ValueError("formal_statement must be a string")
    blank = blank_comments(formal_statement)
    m = _DECL.search(blank)
    if m is None:
        raise ValueError(f"no `theorem <name>` in formal statement: {formal_statement[:200]!r}")
    end = len(blank.rstrip())
    for suffix in ("sorry", "by", ":="):
        stripped = blank[:end].rstrip()
        if stripped.endswith(suffix):
            end = len(stripped) - len(suffix)
            if suffix == ":=":
                break
    end = len(blank[:end].rstrip())
    start = m.start(1)
    pre_lines = [ln for ln in formal_statement[: m.start()].splitlines(keepends=True)
                 if not re.match(r"\s*import\b", blank_comments(ln))]
    return Statement(
        name=m.group(2),
        preamble="".join(pre_lines),
        core=formal_statement[start:end],
        signature=formal_statement[m.end(2):end],
    )


def _canonical(text: str, offset: int = 0) -> tuple[str, list[int]]:
    """NFKC, comment-free, whitespace-insensitive form of `text` with an index map back."""
    chars: list[tuple[str, int]] = []
    for i, ch in enumerate(blank_comments(text)):
        for c in unicodedata.normalize("NFKC", ch):
            if c.isspace():
                if chars and chars[-1][0] != " ":
                    chars.append((" ", i + offset))
            else:
                chars.append((c, i + offset))
    kept = [
        (c, i) for k, (c, i) in enumerate(chars)
        if c != " " or not (k == 0 or k == len(chars) - 1 or chars[k - 1][0] in _PUNCT or chars[k + 1][0] in _PUNCT)
    ]
    return "".join(c for c, _ in kept), [i for _, i in kept]


def _deny(text: str, rules) -> str | None:
    for pattern, reason in rules:
        if pattern.search(text):
            return reason
    return None


def _skip_trusted_header(pre: str, header: str | None) -> str:
    """`pre` without a verbatim (whitespace/comment-insensitive) copy of the trusted header's
    non-import part, e.g. ProofNet headers that define `f` before the theorem."""
    if not header:
        return pre
    rest = "".join(ln for ln in header.splitlines(keepends=True) if not re.match(r"\s*import\b", ln))
    want, _ = _canonical(rest)
    body = "".join(ln if not re.match(r"\s*import\b", blank_comments(ln)) else "\n" for ln in pre.splitlines(keepends=True))
    have, index = _canonical(body)
    if not want or not have.startswith(want):
        return pre
    return body[index[len(want) - 1] + 1:]


def screen(formal_statement: str, model_output: str, *, finish_reason: str | None = None,
           header: str | None = None) -> ScreenResult:
    """Decide whether `model_output` is a well-formed, honest attempt at `formal_statement`.

    `header` is the trusted header: a copy of it before the theorem is accepted and dropped."""
    statement = parse_statement(formal_statement)
    extracted = extract_answer(model_output, finish_reason)
    if extracted.status != "ok":
        verdict = Verdict.TRUNCATED if extracted.status == "truncated" else Verdict.NO_ANSWER
        return ScreenResult(False, extracted.reason, verdict, statement)
    code = extracted.code
    assert code is not None
    bad_char = suspicious_character(code)
    if bad_char:
        return ScreenResult(False, f"contains the invisible/control character {bad_char}", Verdict.FORBIDDEN, statement)
    norm = normalise(code)
    reason = _deny(norm, _SORRY_WORDS)
    if reason:
        return ScreenResult(False, f"the answer {reason}", Verdict.SORRY, statement)
    reason = _deny(norm, _DENY)
    if reason:
        return ScreenResult(False, f"the answer {reason}", Verdict.FORBIDDEN, statement)

    blank = blank_comments(code)
    decl = next((m for m in _DECL.finditer(blank)
                 if unicodedata.normalize("NFKC", m.group(2)) == unicodedata.normalize("NFKC", statement.name)), None)
    if decl is None:
        return ScreenResult(False, f"no `theorem {statement.name}` in the answer", Verdict.STATEMENT_MISMATCH, statement)
    want, _ = _canonical(statement.signature)
    have, index = _canonical(code[decl.end(2):], decl.end(2))
    if not have.startswith(want) or not have[len(want):].startswith(":="):
        return ScreenResult(False, f"the statement of `{statement.name}` was changed", Verdict.STATEMENT_MISMATCH, statement)
    proof = code[index[len(want)] + 2:]

    pre_lines = _skip_trusted_header(code[: decl.start()], header).splitlines(keepends=True)
    helpers_from = 0
    while helpers_from < len(pre_lines):
        line = blank_comments(pre_lines[helpers_from])
        if line.strip() and not (_HEADER_LINE.match(line) and not line.rstrip().endswith(" in")):
            break
        helpers_from += 1
    helpers = "".join(pre_lines[helpers_from:])
    for line in blank_comments(helpers).splitlines():
        if line.strip() and not line[0].isspace() and not _HELPER_START.match(unicodedata.normalize("NFKC", line)):
            return ScreenResult(False, f"only helper lemmas may precede the theorem, found: {line.strip()[:80]!r}",
                                Verdict.FORBIDDEN, statement)
    reason = _deny(normalise(helpers + "\n" + proof), _DENY_IN_BODY)
    if reason:
        return ScreenResult(False, f"the answer {reason}", Verdict.FORBIDDEN, statement)
    if blank_comments(proof).strip() in ("", "by"):
        return ScreenResult(False, "the proof after `:=` is empty", Verdict.NO_ANSWER, statement)
    return ScreenResult(True, "", None, statement, helpers, proof)
