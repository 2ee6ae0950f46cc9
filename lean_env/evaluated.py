"""What a trusted evaluator would run: tactic configurations and aesop rules. An allow-list (issue 57): model text may
define data and proofs, and nothing it defines may be run by a trusted evaluator.

Contract: every predicate returns `(token, reason)` for the first problem, or None when fine, and never raises.
- Tactic configurations. `(config := v)` and the other configuration arguments (CONFIG_ARGUMENTS, or any name ending
  in `config`/`Config`/`cfg`) are evaluated by the elaborator (`declare_config_elab` runs `evalExpr` on them), and
  some fields are functions it then calls while the proof elaborates (linarith's discharger, preprocessors and
  oracle). So `v` must be a literal of the known configuration structures: `{ field := value, … }` where every
  field is a data field of `lean_env/tables/config_fields.txt` and every value a number, `true`/`false`
  (`Bool.true`/`Bool.false`), an enum constructor of that table written `.ctor`, or such a literal again. No name of
  any declaration, however it was introduced, can stand there (`config_problem`).
- Aesop rules. The `tactic` builder runs the named declaration as TacticM code, and so does the default builder (no
  builder word) when the declaration has a tactic type. A rule clause `(add …)` may not use `tactic`, and a rule
  without a builder word may not name anything the answer declares other than a `theorem`/`lemma` (whose type is a
  proposition since lean4#3667, so the default builder is never `tactic`): `aesop_clause_problem`, with the answer's
  declarations from `answer_declarations`. The attribute form is checked by `lean_env.rules.attribute_problem`.
- Aesop's `unsafe` phase is a word of aesop's syntax, not the `unsafe` modifier: `aesop_phase_words` finds it in an
  `@[aesop …]` entry or right after `add`/`,` in a rule clause, so the name scan can let it through.
"""
from __future__ import annotations

from dataclasses import dataclass

from lean_env.lexer import Token, name_parts
from lean_env.tables import rows

_ROWS = rows("config_fields.txt")
CONFIG_FIELDS = frozenset(row[0] for row in _ROWS if not row[0].startswith("."))
CONFIG_CONSTRUCTORS = frozenset(row[0][1:] for row in _ROWS if row[0].startswith("."))
CONFIG_ARGUMENTS = frozenset({"config", "cfg", "simp_config", "options"})
_CONFIG_SUFFIXES = ("config", "Config", "cfg")
_BOOLEANS = frozenset({"true", "false", "Bool.true", "Bool.false"})
AESOP_BUILDERS = frozenset({"apply", "forward", "destruct", "constructors", "cases", "simp", "unfold"})
AESOP_PHASES = frozenset({"safe", "norm", "unsafe"})
_PROPOSITIONS = frozenset({"theorem", "lemma"})
_CODE_DECLARATIONS = frozenset({"def", "abbrev", "instance", "structure", "class", "inductive", "opaque", "rec",
                                "where"})


@dataclass(frozen=True)
class Declared:
    """Last name parts the answer declares: all of them, and those not declared as a `theorem`/`lemma`."""

    names: frozenset[str]
    code: frozenset[str]


def _line_positions(code: list[Token], text: str) -> tuple[list[bool], list[bool]]:
    """Per token: whether it is the first on its line, and whether it stands in column 0 (linear in `text`)."""
    first = [i == 0 or "\n" in text[code[i - 1].end:t.start] for i, t in enumerate(code)]
    return first, [t.start == 0 or text[t.start - 1] == "\n" for t in code]


def answer_declarations(code: list[Token], text: str) -> Declared:
    """Over-approximates what the answer's text declares (comment-free tokens of `text`): the identifier after a
    declaration keyword, `let rec` or `where`, and every identifier that starts a line inside a `where`/`let rec`
    block (up to the next column-0 token: the further auxiliary definitions of the block)."""
    names: set[str] = set()
    code_names: set[str] = set()
    first, column_0 = _line_positions(code, text)
    in_block = False
    for i, t in enumerate(code):
        in_block = (in_block and not column_0[i]) or t.text in ("where", "rec")
        if t.kind != "ident" or i == 0:
            continue
        before = code[i - 1].text
        if before in _PROPOSITIONS or before in _CODE_DECLARATIONS or (in_block and first[i]):
            last = (name_parts(t.text) or (t.text,))[-1]
            names.add(last)
            if before not in _PROPOSITIONS:
                code_names.add(last)
    return Declared(frozenset(names), frozenset(code_names))


def _is_config(name: str) -> bool:
    return name in CONFIG_ARGUMENTS or name.endswith(_CONFIG_SUFFIXES)


_MAX_NESTING = 4   # configuration literals nest one level (`simp_config := { … }` inside aesop's); bounds the recursion


def _value_end(tokens: list[Token], i: int, depth: int = 0) -> int | None:
    """Index after the literal value at `i`, None when it is not one (module docstring)."""
    t = tokens[i] if i < len(tokens) else None
    if t is None:
        return None
    if t.kind == "num" or t.text in _BOOLEANS:
        return i + 1
    if t.text == "." and i + 1 < len(tokens) and tokens[i + 1].text in CONFIG_CONSTRUCTORS and \
            tokens[i + 1].start == t.end:
        return i + 2
    return _structure_end(tokens, i, depth + 1) if t.text == "{" and depth < _MAX_NESTING else None


def _structure_end(tokens: list[Token], i: int, depth: int) -> int | None:
    """Index after the literal `{ field := value, … }` at `i`, None when it is not one."""
    i += 1
    while i < len(tokens) and tokens[i].text != "}":
        if tokens[i].text not in CONFIG_FIELDS or i + 1 >= len(tokens) or tokens[i + 1].text != ":=":
            return None
        end = _value_end(tokens, i + 2, depth)
        if end is None:
            return None
        i = end + (end < len(tokens) and tokens[end].text == ",")
    return i + 1 if i < len(tokens) else None


def config_problem(tokens: list[Token]) -> tuple[Token, str] | None:
    """The first configuration argument `(name := v)` of `tokens` whose value is not a literal of the known
    configuration structures, with the reason."""
    for i in range(len(tokens) - 2):
        head = tokens[i + 1]
        if tokens[i].text == "(" and head.kind == "ident" and _is_config(head.text) and tokens[i + 2].text == ":=":
            end = _value_end(tokens, i + 3) if tokens[i + 3:i + 4] and tokens[i + 3].text == "{" else None
            if end is None or end >= len(tokens) or tokens[end].text != ")":
                return head, (f"`({head.text} := …)` must be a literal `{{ field := value, … }}` of the known "
                              "configuration fields (lean_env/tables/config_fields.txt) with numbers, true/false or "
                              "their enum constructors (`.reducible`): Lean evaluates it and calls any code in it")
    return None


@dataclass
class _Rule:
    """What one rule of an aesop clause holds so far."""

    tokens: list[Token]
    builder: bool = False


def _rule_problem(head: Token, rule: _Rule, declared: Declared) -> tuple[Token, str] | None:
    if any(t.text == "tactic" for t in rule.tokens):
        return head, "an aesop rule with the `tactic` builder runs the named declaration as TacticM code"
    if rule.builder:
        return None
    named = next((t for t in rule.tokens if t.kind == "ident" and set(name_parts(t.text)) & declared.code), None)
    return None if named is None else (named, (
        f"the aesop rule `{named.text}` has no builder word and names a definition of the answer: aesop's default "
        "builder runs a definition of tactic type as a tactic (write the builder: apply, forward, destruct, cases, "
        "constructors, simp, unfold)"))


def aesop_clause_problem(tokens: list[Token], declared: Declared) -> tuple[Token, str] | None:
    """The first aesop rule clause `(add …)`/`(erase …)` of `tokens` that could run the answer's code as a tactic:
    the `tactic` builder, or no builder word (at the rule's top level) and a name the answer declares as code
    (`declared.code`). One pass: rules are split at the clause's top-level `,`."""
    clauses: list[tuple[int, Token, _Rule]] = []   # (bracket depth of the clause, its `add`, the current rule)
    depth = 0
    for i, t in enumerate(tokens):
        if t.text in ("(", "[", "{", "⟨"):
            depth += 1
            if t.text == "(" and i + 1 < len(tokens) and tokens[i + 1].text in ("add", "erase"):
                clauses.append((depth, tokens[i + 1], _Rule([])))
                continue
        elif t.text in (")", "]", "}", "⟩"):
            if clauses and clauses[-1][0] == depth:
                _, head, rule = clauses.pop()
                if (hit := _rule_problem(head, rule, declared)) is not None:
                    return hit
            depth = max(0, depth - 1)
        if not clauses or (t.text in ("add", "erase") and tokens[i - 1].text == "("):
            continue
        at, head, rule = clauses[-1]
        if t.text == "," and depth == at:
            if (hit := _rule_problem(head, rule, declared)) is not None:
                return hit
            clauses[-1] = (at, head, _Rule([]))
        else:
            rule.tokens.append(t)
            rule.builder = rule.builder or (depth == at and t.text in AESOP_BUILDERS)
    return next(filter(None, (_rule_problem(head, rule, declared) for _, head, rule in clauses)), None)


def aesop_phase_words(code: list[Token]) -> frozenset[int]:
    """Indices of the `unsafe` tokens of `code` that are aesop's phase word: in an `@[aesop …]` entry (after `aesop`)
    or first in a rule of an `(add …)` clause (after `add` or a `,` of it), followed by a number (`50%`) or a builder
    word."""
    found, clauses = set(), [False]   # a stack: whether each open `(` is an aesop `(add …)` clause
    for i, t in enumerate(code):
        if t.text == "(":
            clauses.append(i + 1 < len(code) and code[i + 1].text in ("add", "erase"))
        elif t.text == ")" and len(clauses) > 1:
            clauses.pop()
        elif t.text == "unsafe" and 0 < i < len(code) - 1 and (code[i + 1].kind == "num" or
                                                               code[i + 1].text in AESOP_BUILDERS):
            before = code[i - 1].text
            in_attribute = before == "aesop" and i > 1 and code[i - 2].text in ("@[", ",")
            if in_attribute or before == "add" or (before == "," and clauses[-1]):
                found.add(i)
    return frozenset(found)
