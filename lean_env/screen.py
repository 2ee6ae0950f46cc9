"""Screen a model output before any Lean run: an allowlist of commands over a Lean-faithful token stream.

Contract: `screen` never raises on any model output and runs in linear time. `.ok` is True only when the answer
block has exactly this shape (comments anywhere; the rules live in `lean_env.rules`):
  `import` lines and a verbatim copy of the trusted header, or of its plain `open`/`set_option` commands in any
    order (only what the header sets), also after the model's own plain ones   (dropped: the trusted header is used)
  any of, each optionally after `open … in` / `set_option … in`:
    helper `theorem`/`lemma`/`def`/`abbrev` under a fresh name (modifiers private/protected/noncomputable,
      allowlisted attributes), a helper `structure … : Prop` of fields only (`rules.structure_problem`),
      `namespace X … end X` / `[noncomputable] section … end` around helpers,
    plain `open A B` or `open X hiding a b` (no hidden name in the statement), `set_option <allowlisted option>
      <value>`, `universe u …`
  theorem <name> <the dataset's signature, token for token> := <proof>     (at root: in no namespace)
  the `end`s of the sections still open, if any                       (nothing else after the theorem)
and no kept token uses `sorry`/`admit`/`sorryAx` (SORRY), a forbidden name or option (FORBIDDEN). Then
`helpers + statement.core + " :=" + proof` is what the model wrote with its copy of the statement replaced by the
dataset's. Every rejection has a reason that the feedback shows. Code blocks over MAX_CODE_CHARS are rejected
unread, which bounds the screen's time (it is linear: about 0.3 s for 100k short lines, 1 s per MB of dense code).
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from lean_env.commands import Command, split_commands
from lean_env.evaluated import aesop_clause_problem, aesop_phase_words, answer_declarations, config_problem
from lean_env.lexer import Token, lex, name_parts
from lean_env.meta_code import answer_opens, name_problem, trusted_opens
from lean_env.meta_code import namespace_problem as meta_namespace_problem
from lean_env.parse import extract_answer
from lean_env.rules import (
    ALLOWED_MODIFIERS,
    DECLARATIONS,
    RAW_OPENERS,
    forbidden_names,
    helper_problem,
    namespace_problem,
    prefix_problem,
    raw_namespace_name,
    statement_names,
    structure_problem,
)
from lean_env.text import suspicious_character
from lean_env.types import Verdict


@dataclass(frozen=True)
class Statement:
    """A dataset's formal statement split into parts (all exact original text)."""

    name: str
    preamble: str   # non-import text before the theorem (trusted: open/set_option, also `open X in` on its line)
    core: str       # from `theorem` up to (excluding) the final `:=`
    signature: str  # the part of `core` after the name
    names: frozenset[str] = frozenset()   # identifiers the signature uses, minus its binders
    modifiers: tuple[str, ...] = ()       # e.g. ProofNet's `noncomputable def`
    kind: str = "theorem"                 # the declaration keyword: theorem, lemma, def or abbrev


@dataclass(frozen=True)
class ScreenResult:
    """The screen's answer: `ok`, or the `reason` and `verdict` (FORBIDDEN, BAD_STATEMENT, ...) of a refusal; when ok,
    the statement and the model's helpers and proof, which `build_check` assembles."""

    ok: bool
    reason: str
    verdict: Verdict | None = None   # None when ok
    statement: Statement | None = None
    helpers: str = ""                # model text kept before the theorem (helpers, open/set_option)
    proof: str | None = None         # model text after the statement's `:=`


MAX_CODE_CHARS = 2_000_000   # far above any generation budget (128k tokens ~ 500k characters); bounds the screen
# Line breaks of Python's `str.splitlines()` that Lean does not count (it counts `\n` only, and a `--` comment runs to
# `\n`): a lone CR, U+2028, U+2029 (the other such breaks are control characters, rejected before). The Kimina server
# re-joins the code's `splitlines()` with `\n` (`server/split.py`, `split_snippet`), so there such a break ends a
# `--` comment (the rest of its line is code this screen never saw) and adds a line the assembler did not count (the
# judge would read the check and the audit on the wrong lines). CRLF is one break for all of them and stays allowed.
_LINE_BREAK = re.compile("\r(?!\n)|[\u2028\u2029]")


class Reject(Exception):
    """A screen rejection: `verdict` and the reason shown in the feedback."""

    def __init__(self, verdict: Verdict, reason: str):
        super().__init__(reason)
        self.verdict, self.reason = verdict, reason


def _code(text: str) -> list[Token]:
    return [t for t in lex(text) if t.kind != "comment"]


def _expand(tokens: list[Token]) -> list[str]:
    """Token texts with symbol runs split into characters, so `) :` and `):` compare equal."""
    return [c for t in tokens for c in (t.text if t.kind == "sym" else (t.text,))]


def _is_prefix_chain(text: str) -> bool:
    """Whether `text` is only `open … in` / `set_option … in` prefixes (no attribute, modifier or command)."""
    commands = split_commands(_code(text), text)
    return len(commands) == 1 and commands[0].head is None and bool(commands[0].prefixes) and \
        not commands[0].attributes and not commands[0].modifiers


def parse_statement(formal_statement: str) -> Statement:
    """Split a dataset statement (`theorem n … := by`, `… := sorry`, `… :=` or a whole file); ValueError if none."""
    if not isinstance(formal_statement, str):
        raise ValueError("formal_statement must be a string")
    code = _code(formal_statement)
    i = next((k for k in range(len(code) - 1) if code[k].kind == "ident" and code[k].text in DECLARATIONS
              and code[k + 1].kind == "ident"), None)
    if i is None:
        raise ValueError(f"no `theorem <name>` in formal statement: {formal_statement[:200]!r}")
    k = len(code)
    for suffix in ("sorry", "by", ":="):
        if k > i + 2 and code[k - 1].text == suffix:
            k -= 1
    first = i
    while first > 0 and code[first - 1].text in ALLOWED_MODIFIERS:
        first -= 1
    before = formal_statement[:code[first].start]
    if not _is_prefix_chain(before[before.rfind("\n") + 1:]):   # keep only an `open X in ` on the theorem's line
        before = before[:before.rfind("\n") + 1]
    preamble = "".join(ln for ln in before.splitlines(keepends=True)
                       if not (_code(ln)[:1] and _code(ln)[0].text == "import"))
    return Statement(name=code[i + 1].text, preamble=preamble, core=formal_statement[code[first].start:code[k - 1].end],
                     signature=formal_statement[code[i + 1].end:code[k - 1].end],
                     names=statement_names(code[i + 2:k]), modifiers=tuple(t.text for t in code[first:i]),
                     kind=code[i].text)


def _line(text: str, t: Token) -> int:
    return text.count("\n", 0, t.start) + 1


def _header_keys(cmd: Command) -> frozenset[tuple[str, ...]] | None:
    """What a plain `open …` (one key per namespace) or `set_option n v` sets, None for any other command."""
    if cmd.plain is None or cmd.prefixes or cmd.attributes or cmd.modifiers or cmd.body:
        return None
    args = [t.text for t in cmd.plain.tokens[1:]]
    if cmd.plain.keyword == "set_option":
        return frozenset({("set_option", ".".join(name_parts(args[0])), *args[1:])}) if args else None
    scoped = args[:1] == ["scoped"]
    return frozenset(("open", str(scoped), ".".join(name_parts(a))) for a in args[scoped:])


def _kept_from(code: list[Token], text: str, header: str | None) -> int:
    """Index of the first kept token: after leading `import`s and a verbatim copy of the trusted header, or a copy of
    its `open`/`set_option` commands in any order (each plain and setting only what the header sets, so dropping it
    changes nothing: the header is in force anyway)."""
    i = 0
    while i + 1 < len(code) and code[i].text == "import" and code[i + 1].kind == "ident":
        i += 2
    if not header:
        return i
    trusted = _code(header)
    rest = trusted[_kept_from(trusted, header, None):]
    if rest and [t.text for t in code[i:i + len(rest)]] == [t.text for t in rest]:
        return i + len(rest)
    keys = frozenset().union(*(_header_keys(c) or () for c in split_commands(rest, header)))
    window = code[i:i + len(rest) + 2]   # a copy has the header's tokens: its last command ends inside the window
    for cmd in split_commands(window, text)[:-1]:
        cmd_keys = _header_keys(cmd)
        if not cmd_keys or not cmd_keys <= keys:
            break
        assert cmd.plain is not None
        i += len(cmd.plain.tokens)
    return i


def _header_option_keys(header: str | None) -> frozenset[tuple[str, ...]]:
    """What the trusted header's plain `open`/`set_option` commands set (`_header_keys`)."""
    if not header:
        return frozenset()
    trusted = _code(header)
    rest = trusted[_kept_from(trusted, header, None):]
    return frozenset().union(*(_header_keys(c) or () for c in split_commands(rest, header)))


def _drop_header_copies(commands: list[Command], header: str | None) -> tuple[list[Command], list[Command]]:
    """(the commands kept, the copies dropped): in the leading run of plain `open`/`set_option` commands, also after
    the model's own ones, each command that sets only what the trusted header sets is a copy of it (issue 48: a
    published prover writes its own `maxRecDepth` before the header's `maxHeartbeats 0`). Dropping it is safe: the
    header's opens are in force anyway, and an option then keeps the model's earlier value (in the screen's bounds)
    or the assembler's bound, so the code runs as code the model could have written and the screen accepts."""
    keys, dropped, k = _header_option_keys(header), [], 0
    while k < len(commands) and (cmd_keys := _header_keys(commands[k])) is not None:
        if cmd_keys and cmd_keys <= keys:
            dropped.append(commands[k])
        k += 1
    return [c for c in commands if all(c is not d for d in dropped)], dropped


def _without(text: str, start: int, end: int, dropped: list[Command]) -> str:
    """`text[start:end]` with the dropped commands' text removed, their line breaks kept (lines still count)."""
    out, at = [], start
    for cmd in dropped:
        assert cmd.plain is not None
        a, b = cmd.plain.tokens[0].start, cmd.plain.tokens[-1].end
        out += [text[at:a], "\n" * text.count("\n", a, b)]
        at = b
    return "".join(out) + text[at:end]


def _scan_names(code: list[Token], text: str) -> None:
    """FORBIDDEN for lexing ambiguities, syntax quotations and `…%` term elaborators, SORRY for sorry-like names,
    FORBIDDEN for other forbidden names (identifiers and name literals alike; aesop's `unsafe` phase word is no
    name)."""
    error = next((t for t in code if t.kind == "error"), None)
    if error is not None:
        raise Reject(Verdict.FORBIDDEN, f"the answer contains {error.text} (line {_line(text, error)})")
    phase_words = aesop_phase_words(code)
    hit = forbidden_names([t for i, t in enumerate(code) if t.kind in ("ident", "name") and i not in phase_words])
    if hit is not None:
        token, name, is_sorry = hit
        raise Reject(Verdict.SORRY if is_sorry else Verdict.FORBIDDEN,
                     f"the answer uses `{name}` (line {_line(text, token)})")
    quote = next((t for t in code if t.kind == "sym" and "`" in t.text), None)
    if quote is not None:
        raise Reject(Verdict.FORBIDDEN, f"the answer contains a syntax quotation (line {_line(text, quote)})")
    elaborator = next((t for t in code if t.kind == "sym" and len(t.text) > 1 and t.text.endswith("%")), None)
    if elaborator is not None:   # `type_of%`, `eval%`, `decl_name%`, …: elaborator helpers, no mathematics
        raise Reject(Verdict.FORBIDDEN, f"the answer uses the term elaborator `{elaborator.text}`, which reads or "
                                        f"runs code at elaboration (line {_line(text, elaborator)})")


def _check_meta_code(code: list[Token], text: str, opens: frozenset[tuple[str, ...]]) -> None:
    """FORBIDDEN for a name of the meta-level API (`lean_env.meta_code`), and for a tactic configuration that is not
    a literal of known data fields or an aesop rule that could run the answer's code (`lean_env.evaluated`)."""
    declared = answer_declarations(code, text)
    for hit in (name_problem(code, opens | answer_opens(code)), config_problem(code),
                aesop_clause_problem(code, declared)):
        if hit is not None:
            raise Reject(Verdict.FORBIDDEN, f"{hit[1]} (line {_line(text, hit[0])})")


def _check_prefixes(cmd: Command, text: str, statement_uses: frozenset[str]) -> None:
    for prefix in cmd.prefixes + cmd.inner + ([cmd.plain] if cmd.plain else []):
        why = prefix_problem(prefix, statement_uses)
        if why is None and prefix.keyword == "open":
            why = next(filter(None, (meta_namespace_problem(name_parts(t.text), "open") for t in prefix.tokens[1:]
                                     if t.kind == "ident" and t.text != "scoped")), None)
        if why:
            raise Reject(Verdict.FORBIDDEN, f"{why} (line {_line(text, prefix.tokens[0])})")


def _target_proof(cmd: Command, statement: Statement, text: str) -> int:
    """Offset where the proof starts, after checking the theorem's form and signature against the dataset's."""
    where = f"(line {_line(text, cmd.head)})"
    if cmd.attributes or not {m.text for m in cmd.modifiers} <= set(statement.modifiers):
        raise Reject(Verdict.FORBIDDEN, f"the theorem `{statement.name}` may not carry attributes or modifiers {where}")
    want = _expand(_code(statement.signature))
    if _expand(cmd.body[1:len(want) + 2])[:len(want)] == want:
        seen = 0
        for t in cmd.body[1:len(want) + 2]:
            if seen == len(want):
                if t.text == ":=":
                    return t.end
                break
            seen += len(t.text) if t.kind == "sym" else 1
    raise Reject(Verdict.STATEMENT_MISMATCH, f"the statement of `{statement.name}` was changed {where}")


def _check_raw_openers(code: list[Token], text: str) -> None:
    """FORBIDDEN for the first atom of a global syntax that reads characters the lexer does not follow (`#help`),
    and for any identifier naming a namespace of scoped such syntax (`raw_namespace_name`)."""
    hit = next((t for t in code if t.text in RAW_OPENERS), None)
    if hit is not None:
        raise Reject(Verdict.FORBIDDEN, f"`{hit.text}` starts syntax that reads characters the screen cannot follow "
                                        f"(line {_line(text, hit)})")
    named = raw_namespace_name(code)
    if named is not None:
        token, why = named
        raise Reject(Verdict.FORBIDDEN, f"the identifier `{token.text}`: {why} (line {_line(text, token)})")


def _check_namespace(stack: list[tuple[str, tuple[str, ...]]], name: tuple[str, ...] | None, where: str) -> None:
    """FORBIDDEN when entering the namespace `name` inside `stack` activates syntax that reads characters."""
    if name is not None:
        full = tuple(p for kind, parts in stack if kind == "namespace" for p in parts) + name
        why = namespace_problem(full) or meta_namespace_problem(full, "namespace")
        if why:
            raise Reject(Verdict.FORBIDDEN, f"{why} {where}")


def _walk(commands: list[Command], statement: Statement, text: str) -> tuple[Command, int]:
    """Apply the allowlist; return the target theorem's command and the offset where its proof starts."""
    stack: list[tuple[str, tuple[str, ...]]] = []
    target: tuple[Command, int] | None = None
    target_name = name_parts(statement.name)
    for cmd in commands:
        _check_prefixes(cmd, text, statement.names)
        head = cmd.head
        if head is None:
            raise Reject(Verdict.FORBIDDEN, "`open … in`, `set_option … in` or a modifier ends the answer")
        where = f"(line {_line(text, head)})"
        if target is not None and (head.text != "end" or not stack):   # only the `end`s of its sections
            raise Reject(Verdict.FORBIDDEN,
                         f"nothing may follow the theorem `{statement.name}`; found `{head.text}` {where}")
        decorated = bool(cmd.attributes or cmd.modifiers)
        if cmd.plain is not None:
            if decorated or cmd.body:
                raise Reject(Verdict.FORBIDDEN, f"unexpected text after `{head.text}` {where}")
        elif head.text in ("namespace", "section"):
            names = [name_parts(t.text) for t in cmd.body if t.kind == "ident"]
            if len(cmd.body) != len(names) or len(names) > 1 or (head.text == "namespace" and not names) or \
                    cmd.attributes or [m.text for m in cmd.modifiers] not in ([], ["noncomputable"]):
                raise Reject(Verdict.FORBIDDEN, f"malformed `{head.text}` {where}")
            _check_namespace(stack, names[0] if head.text == "namespace" else None, where)
            stack.append((head.text, names[0] if names else ()))
        elif head.text == "universe":   # names universe variables for the model's section: no code, no constant
            if decorated or not cmd.body or any(t.kind != "ident" or t.text == "in" for t in cmd.body):
                raise Reject(Verdict.FORBIDDEN, f"malformed `universe` {where}")
        elif head.text == "end":
            closes = tuple(p for t in cmd.body for p in name_parts(t.text))
            if decorated or not stack or stack[-1][1] != closes or len(cmd.body) > 1:
                raise Reject(Verdict.FORBIDDEN, f"`end` does not close an open namespace or section {where}")
            stack.pop()
        elif head.text == "structure" and cmd.body and cmd.body[0].kind == "ident":
            prefix = tuple(p for kind, parts in stack if kind == "namespace" for p in parts)
            why = structure_problem(cmd, prefix + name_parts(cmd.body[0].text), statement.names, target_name, text)
            if why:
                raise Reject(Verdict.FORBIDDEN, f"{why} {where}")
        elif head.text in DECLARATIONS and cmd.body and cmd.body[0].kind == "ident":
            name = name_parts(cmd.body[0].text)
            if name == target_name and head.text != "abbrev":
                spaces = [".".join(parts) for kind, parts in stack if kind == "namespace"]
                if spaces:   # a section keeps the name at root; a namespace would rename the theorem
                    raise Reject(Verdict.FORBIDDEN,
                                 f"the theorem `{statement.name}` must be at root, outside `namespace {spaces[-1]}` "
                                 f"{where}")
                target = (cmd, _target_proof(cmd, statement, text))
                continue
            prefix = tuple(p for kind, parts in stack if kind == "namespace" for p in parts)
            why = helper_problem(cmd, prefix + name, statement.names, target_name)
            if why:
                raise Reject(Verdict.FORBIDDEN, f"{why} {where}")
        else:
            raise Reject(Verdict.FORBIDDEN, f"`{head.text}` is not allowed {where}: only helper theorem/lemma/def/"
                                            "abbrev/structure, namespace/section … end, universe, open, set_option "
                                            "may precede the theorem")
    if target is None:
        raise Reject(Verdict.STATEMENT_MISMATCH, f"no `theorem {statement.name}` in the answer")
    if stack:   # else the assembler's `end` would close it, and the check would run in the model's scope
        opened = f"{stack[-1][0]} {'.'.join(stack[-1][1])}".strip()
        raise Reject(Verdict.FORBIDDEN, f"`{opened}` around the theorem `{statement.name}` is not closed after it")
    return target


def screen(formal_statement: str, model_output: str, *, finish_reason: str | None = None,
           header: str | None = None) -> ScreenResult:
    """Decide whether `model_output` is a well-formed, honest attempt at `formal_statement`.

    `header` is the trusted header: a copy of it before the theorem is accepted and dropped."""
    statement = parse_statement(formal_statement)
    extracted = extract_answer(model_output, finish_reason)
    if extracted.status != "ok":
        verdict = Verdict.TRUNCATED if extracted.status == "truncated" else Verdict.NO_ANSWER
        return ScreenResult(False, extracted.reason, verdict, statement)
    text = extracted.code
    assert text is not None
    if len(text) > MAX_CODE_CHARS:
        return ScreenResult(False, f"the code block has {len(text)} characters (limit {MAX_CODE_CHARS})",
                            Verdict.FORBIDDEN, statement)
    bad_char = suspicious_character(text)
    if bad_char:
        return ScreenResult(False, f"contains the character {bad_char}", Verdict.FORBIDDEN, statement)
    brk = _LINE_BREAK.search(text)
    if brk:
        char = "CARRIAGE RETURN without LINE FEED" if brk.group() == "\r" else unicodedata.name(brk.group())
        line = text.count("\n", 0, brk.start()) + 1
        return ScreenResult(False, f"contains U+{ord(brk.group()):04X} {char} (line {line}), a line break for the "
                            "Kimina server but not for Lean", Verdict.FORBIDDEN, statement)
    code = _code(text)
    kept = code[_kept_from(code, text, header):]
    try:
        _scan_names(kept, text)
        _check_raw_openers(kept, text)
        _check_meta_code(kept, text, trusted_opens(_code(header or "") + _code(statement.preamble)))
        commands, dropped = _drop_header_copies(split_commands(kept, text), header)
        cmd, proof_from = _walk(commands, statement, text)
    except Reject as r:
        return ScreenResult(False, r.reason, r.verdict, statement)
    proof = text[proof_from:]
    if not any(t.start >= proof_from and t.text != "by" for t in cmd.body + [p for i in cmd.inner for p in i.tokens]):
        return ScreenResult(False, "the proof after `:=` is empty", Verdict.NO_ANSWER, statement)
    helpers = _without(text, kept[0].start, (cmd.modifiers or [cmd.head])[0].start, dropped)
    return ScreenResult(True, "", None, statement, helpers, proof)
