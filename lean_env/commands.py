"""Split Lean tokens into top-level commands, erring on the side of finding more commands than Lean would.

Contract: `split_commands(code, text)` never raises and runs in linear time; `code` is `lex(text)` without comments.
A new command starts at
- any command keyword (`theorem`, `instance`, `variable`, `namespace`, `macro`, Mathlib's `irreducible_def`, ...),
  any `#` command, `@[` or a declaration modifier, at ANY column: Lean ends a term or tactic block at such a
  keyword, so an indented `#check` or `variable` is still a command;
- `open …`/`set_option …` without `in`; with `in` they prefix the next command when one follows, else a tactic or
  term (then they are recorded in the body's `inner` list, so the screen still checks them);
- an identifier at column 0 after a declaration's `:=` or first `|` unless it is a continuation (`termination_by`,
  `decreasing_by`, `where`, a term keyword or a common tactic name): this catches command keywords that the list
  above misses.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from lean_env.lexer import Token

COMMAND_KEYWORDS = frozenset("""
theorem lemma def abbrev example instance axiom opaque structure class inductive coinductive mutual variable variable?
universe include omit namespace section end export attribute notation notation3 infix infixl infixr prefix postfix
macro macro_rules syntax elab elab_rules declare_syntax_cat initialize builtin_initialize deriving import
run_cmd run_elab run_meta add_decl_doc register_simp_attr register_option register_builtin_option declare_config_elab
binder_predicate irreducible_def alias assert_not_exists library_note initialize_simps_projections suppress_compilation
unseal seal compile_inductive proof_wanted recall test_extern simproc simproc_decl dsimproc dsimproc_decl
builtin_simproc register_label_attr declare_aesop_rule_sets add_aesop_rules erase_aesop_rules grind_pattern module
""".split())
MODIFIERS = frozenset("private protected noncomputable partial unsafe nonrec local scoped meta public".split())
PREFIX_KEYWORDS = frozenset({"open", "set_option"})
CONTINUATIONS = frozenset("""
termination_by decreasing_by where with then else do fun by at from in using calc show have let match if
norm_num simp simp_all simpa dsimp linarith nlinarith positivity omega ring ring_nf field_simp decide rfl exact
apply intro intros rintro refine use constructor cases rcases obtain induction rw rwa nth_rw nth_rewrite unfold
subst specialize by_contra by_cases push_neg norm_cast push_cast exact_mod_cast all_goals any_goals interval_cases
trivial tauto aesop gcongr left right ext funext congr contradiction exfalso split_ifs split generalize set suffices
symm change first try repeat focus case next exists zify qify linear_combination bound
""".split())   # keywords and tactic names: never a command, so harmless in column 0 (where all tactics of a block
               # may stand)
_STARTERS = COMMAND_KEYWORDS | MODIFIERS
_STOPS_OPEN = COMMAND_KEYWORDS | MODIFIERS | PREFIX_KEYWORDS | CONTINUATIONS


@dataclass
class Prefix:
    """`open A B [in]` or `set_option name value [in]`: `tokens` from the keyword up to, excluding, `in`."""

    tokens: list[Token]
    has_in: bool

    @property
    def keyword(self) -> str:
        return self.tokens[0].text


@dataclass
class Command:
    prefixes: list[Prefix] = field(default_factory=list)      # `open … in` / `set_option … in` before the head
    attributes: list[list[Token]] = field(default_factory=list)   # the tokens inside each `@[…]`
    modifiers: list[Token] = field(default_factory=list)
    head: Token | None = None            # None: prefixes or modifiers with nothing after them
    plain: Prefix | None = None          # the head's own `open`/`set_option` form when the head is one
    body: list[Token] = field(default_factory=list)
    inner: list[Prefix] = field(default_factory=list)         # `open … in` / `set_option … in` inside the body


def _read_prefix(code: list[Token], i: int) -> tuple[Prefix, int]:
    """The `open`/`set_option` form at `i` and the index after it (after `in` if present)."""
    j = i + 1
    if code[i].text == "open":
        while j < len(code) and ((code[j].kind == "ident" and code[j].text not in _STOPS_OPEN)
                                 or code[j].text in ("(", ")", "→", "scoped")):
            j += 1
    else:
        j = min(i + 3, len(code))
    has_in = j < len(code) and code[j].kind == "ident" and code[j].text == "in"
    return Prefix(code[i:j], has_in), j + 1 if has_in else j


def _starts(t: Token) -> bool:
    return t.kind == "hash" or t.text == "@[" or (t.kind == "ident" and t.text in _STARTERS)


def _read_chain(code: list[Token], i: int) -> tuple[list[Prefix], int, bool]:
    """The `… in` prefixes from `i`, the index after them, and whether a command begins at `i`."""
    chain = []
    while i < len(code) and code[i].kind == "ident" and code[i].text in PREFIX_KEYWORDS:
        prefix, j = _read_prefix(code, i)
        if not prefix.has_in:
            return chain, i, True
        chain.append(prefix)
        i = j
    return chain, i, i < len(code) and _starts(code[i])


def _at_column_0(text: str, t: Token) -> bool:
    return t.start == 0 or text[t.start - 1] in "\n\r"


def _closing(code: list[Token], i: int) -> int:
    """Index after the `]` that closes the `@[` at `i` (len(code) if none)."""
    depth = 0
    for j in range(i, len(code)):
        if code[j].text in ("[", "@["):
            depth += 1
        elif code[j].text == "]":
            depth -= 1
            if depth == 0:
                return j + 1
    return len(code)


def _read_command(code: list[Token], i: int, text: str) -> tuple[Command, int]:
    cmd = Command()
    while i < len(code):
        t = code[i]
        if t.kind == "ident" and t.text in PREFIX_KEYWORDS:
            prefix, j = _read_prefix(code, i)
            if not prefix.has_in:
                break
            cmd.prefixes.append(prefix)
            i = j
        elif t.text == "@[":
            j = _closing(code, i)
            cmd.attributes.append(code[i + 1:j - 1])
            i = j
        elif t.kind == "ident" and t.text in MODIFIERS:
            cmd.modifiers.append(t)
            i += 1
        else:
            break
    if i >= len(code):
        return cmd, i
    cmd.head = code[i]
    if cmd.head.kind == "ident" and cmd.head.text in PREFIX_KEYWORDS:
        cmd.plain, i = _read_prefix(code, i)
    else:
        i += 1
    after_assign, body_from = False, i
    while i < len(code):   # the hot loop: plain comparisons only
        t = code[i]
        if t.kind == "ident":
            if t.text in PREFIX_KEYWORDS:
                chain, j, opens = _read_chain(code, i)
                if opens:
                    break
                cmd.body.extend(code[body_from:i])
                cmd.inner.extend(chain)   # prefixes of a tactic or term
                i = body_from = j
                continue
            if t.text in _STARTERS or (after_assign and t.text not in CONTINUATIONS and _at_column_0(text, t)):
                break
        elif t.kind == "hash" or t.text == "@[":
            break
        elif t.text == ":=" or t.text == "|":
            after_assign = True
        i += 1
    cmd.body.extend(code[body_from:i])
    return cmd, i


def split_commands(code: list[Token], text: str) -> list[Command]:
    """The top-level commands of `code` (comment-free tokens of `text`), in order."""
    commands, i = [], 0
    while i < len(code):
        cmd, i = _read_command(code, i, text)
        commands.append(cmd)
    return commands
