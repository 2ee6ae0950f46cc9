"""Rule-driven fake Lean semantics shared by the REPL double and the Kimina double.

Rules (JSON list, first match wins, regex searched in the command text):
  {"match": "nlinarith", "outcome": "error", "message": "linarith failed", "line": 2, "col": 2}
outcome: valid | error | sorry | tactic_sorry | axiom | unknown_constant | repl_error |
         hang | crash | garbage | forge (an error, but a clean copy of the answer is printed first, as
         elaboration-time IO could) | retyped (the statement check fails: the theorem's type is not the
         reference's)
optional side effects on any rule: "delay_s", "grow_mb", "stderr_bytes".
Without a matching rule a command is valid, except that a literal `sorry` gives a sorry entry
and the "declaration uses sorry" warning, `native_decide` adds `Lean.ofReduceBool`, and a
theorem mentioning a declared `axiom` depends on it. `#print axioms X` (also `_root_.X`) answers as Lean does:
"'X' depends on axioms: [...]" or "Unknown constant `X`"; `#check X` gives "X : Prop" or "Unknown identifier `X`";
the statement check `[set_option maxHeartbeats N in] theorem _root_.C : type_of% @_root_.R := @_root_.X` (or
`noncomputable def`) prints nothing and declares C with X's axioms when X is declared and R is an axiom (a
kernel-checked declaration that passes is silent), else C gets `sorryAx` (Lean's error recovery) and the error Lean 4.9
prints there: `unknown identifier '_root_.X'`, or, for a `retyped` rule, `type mismatch` in the layout of
`throwTypeMismatchError` (Lean/Elab/Term.lean) and `mkHasTypeButIsExpectedMsg` (Lean/Meta/Check.lean), at the
value's position;
`#eval Lean.versionString` answers the configured `lean_version` as Lean does (`"4.9.0"`, an info message);
`#print "text"` prints `text` as an info message at `#print`, as Lean's `elabPrint` does (`logInfoAt tk s.getString`,
Lean/Elab/Print.lean; escapes are not decoded here).
Version-dependent protocol details follow `lean_version` (the REPL tag equals the Lean toolchain), as
leanprover-community/repl's own tests show at v4.9.0 and at master: tactic answers carry `proofStatus` from v4.19
(repl 4a7e8af); `unknown identifier 'x'` became ``Unknown identifier `x` `` at v4.23 (repl 8e951c4); the sorry
warning's quote changed at v4.28 (repl 08ef67a); `{"path", "env"}` honours `env` from v4.22 (repl cbf2ca9).
Requests are decoded as the REPL's derived `FromJson` does: a form matches only when its fields have the right
types (`env`/`proofState` natural numbers or absent/null, texts strings), so `{"cmd": 5}` or `{"env": -1}` match
no form and kill the process, as a malformed request does. Pickling keeps the counters of repl's `Main.lean`:
`pickleTo`+`env` answers `{"env": n}` without a new env; unpickling an env makes a new env; pickling or unpickling
a proof state makes a new proof state; the pickle file holds the double's declarations, not an .olean.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from typing import Any

STANDARD_AXIOMS = ("propext", "Classical.choice", "Quot.sound")
_MODIFIERS = r"(?:(?:private|protected|noncomputable)\s+)*"
_DECL = re.compile(r"(?m)^[ \t]*(?:@\[[^\]]*\]\s*)?" + _MODIFIERS +
                   r"(?:theorem|lemma|def)\s+(?!_root_\.)([^\s():{}\[\]]+)")   # not the check's `_root_.C`
_AXIOM_DECL = re.compile(r"(?m)^[ \t]*axiom\s+([^\s():{}\[\]]+)")
_PRINT = re.compile(r"(?m)^#print axioms\s+(?:_root_\.)?(\S+)")
_CHECK = re.compile(r"(?m)^#check\s+([^\s(]\S*)")
_CHECK_HEAD = r"(?:set_option maxHeartbeats \d+ in )?(?:theorem|noncomputable def) _root_\.(\S+) : type_of% "
_STATEMENT_CHECK = re.compile(r"(?m)^" + _CHECK_HEAD + r"@_root_\.(\S+) := (@_root_\.(\S+))[ \t]*$")
_SIGNATURE = re.compile(r"(?m)^[ \t]*(?:@\[[^\]]*\]\s*)?" + _MODIFIERS + r"(?:theorem|lemma|def|axiom)\s+"
                        r"([^\s():{}\[\]]+)([^\n]*?)(?::=.*)?$")
_UNUSED = re.compile(r"(?m)^(?:axiom |#check |" + _CHECK_HEAD + r").*$")   # mentions of an axiom, no uses
_VERSION_QUERY = re.compile(r"(?m)^#eval Lean\.versionString[ \t]*$")
_PRINT_STRING = re.compile(r'(?m)^#print[ \t]+"([^"\\\n]*)"')
_SORRY = re.compile(r"(?<![\w.'])sorry(?![\w'])")
OUTCOMES = {"valid", "error", "sorry", "tactic_sorry", "axiom", "unknown_constant", "repl_error",
            "hang", "crash", "garbage", "forge", "retyped"}


@dataclass(frozen=True)
class Rule:
    """One rule (module docstring): a command matching `match` gets `outcome`, with its message, position, axioms
    and goal."""

    match: re.Pattern
    outcome: str = "valid"
    message: str = "error"
    line: int | None = None
    col: int | None = None
    axioms: tuple[str, ...] = ()
    goal: str = "⊢ False"
    delay_s: float = 0.0
    grow_mb: int = 0
    stderr_bytes: int = 0


@dataclass
class Effects:
    """What the process should do besides printing the response."""

    delay_s: float = 0.0
    grow_mb: int = 0
    stderr_bytes: int = 0
    action: str | None = None  # hang | crash | garbage | forge


def load_rules(spec: str | list | None) -> list[Rule]:
    """Rules from a JSON list, a JSON string, or a path to a JSON file."""
    if spec is None or spec == "":
        return []
    if isinstance(spec, str):
        spec = json.loads(open(spec).read() if os.path.exists(spec) else spec)
    rules = []
    for r in spec:
        if r.get("outcome", "valid") not in OUTCOMES:
            raise ValueError(f"unknown outcome {r.get('outcome')!r}; choose from {sorted(OUTCOMES)}")
        kw = {k: v for k, v in r.items() if k != "match"}
        if "axioms" in kw:
            kw["axioms"] = tuple(kw["axioms"])
        rules.append(Rule(match=re.compile(r["match"], re.M), **kw))
    return rules


def version_tuple(version: str) -> tuple[int, ...]:
    """'4.9.0' / 'v4.28.0-rc1' -> (4, 9, 0) / (4, 28, 0)."""
    return tuple(int(x) for x in re.findall(r"\d+", version.split("-")[0])[:3])


def _nat(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _opt_nat(req: dict, key: str) -> bool:
    return req.get(key) is None or _nat(req[key])


def _texts(req: dict, *keys: str) -> bool:
    return all(isinstance(req.get(k), str) for k in keys)


def _pos(text: str, offset: int) -> dict:
    line = text.count("\n", 0, offset) + 1
    return {"line": line, "column": offset - (text.rfind("\n", 0, offset) + 1)}


def _msg(severity: str, pos: dict, end: dict | None, data: str) -> dict:
    return {"severity": severity, "pos": pos, "endPos": end, "data": data.strip()}


@dataclass
class FakeLean:
    """Per-process state: env and proofState counters and the declarations of each env."""

    rules: list[Rule] = field(default_factory=list)
    sorry_quote: str | None = None    # None: "'" before Lean v4.28, "`" from v4.28
    lean_version: str = "4.9.0"       # what `#eval Lean.versionString` answers (Lean.versionString, no `v`)
    envs: list[dict[str, tuple[str, ...]]] = field(default_factory=list)
    env_axioms: list[set[str]] = field(default_factory=list)
    proof_states: int = 0

    def __post_init__(self) -> None:
        if self.sorry_quote is None:
            self.sorry_quote = "'" if self._before(4, 28) else "`"

    def _before(self, major: int, minor: int) -> bool:
        return version_tuple(self.lean_version) < (major, minor)

    def _proof_step(self) -> dict:
        """A new proof state's answer (the double has no goals: every step completes the proof)."""
        self.proof_states += 1
        out: dict[str, Any] = {"proofState": self.proof_states - 1, "goals": []}
        if not self._before(4, 19):
            out["proofStatus"] = "Completed"
        return out

    def handle(self, req: Any) -> tuple[dict, Effects]:
        """Answer one decoded request (forms in the REPL's precedence order)."""
        if not isinstance(req, dict):
            raise ValueError("request is not a JSON object")
        if _texts(req, "tactic") and _nat(req.get("proofState")):
            if req["proofState"] >= self.proof_states:
                return {"message": "Unknown proof state."}, Effects()
            return self._proof_step(), Effects()
        if _texts(req, "pickleTo") and _nat(req.get("env")):
            if req["env"] >= len(self.envs):
                return {"message": "Unknown environment."}, Effects()
            with open(req["pickleTo"], "w") as f:
                json.dump({"decls": self.envs[req["env"]], "axioms": sorted(self.env_axioms[req["env"]])}, f)
            return {"env": req["env"]}, Effects()
        if _texts(req, "unpickleEnvFrom"):
            try:
                saved = json.load(open(req["unpickleEnvFrom"]))
            except (OSError, ValueError) as e:   # the REPL does not catch this: the process dies
                raise ValueError(f"unpickling failed: {e}") from None
            return {"env": self._new_env({k: tuple(v) for k, v in saved["decls"].items()},
                                         set(saved["axioms"]))}, Effects()
        if _texts(req, "pickleTo") and _nat(req.get("proofState")):
            if req["proofState"] >= self.proof_states:
                return {"message": "Unknown proof State."}, Effects()   # sic, capital S in repl's Main.lean
            with open(req["pickleTo"], "w") as f:
                json.dump({"proofState": req["proofState"]}, f)
            return self._proof_step(), Effects()
        if _texts(req, "unpickleProofStateFrom") and _opt_nat(req, "env"):
            if req.get("env") is not None and req["env"] >= len(self.envs):
                return {"message": "Unknown environment."}, Effects()
            if not os.path.exists(req["unpickleProofStateFrom"]):
                raise ValueError(f"no such file {req['unpickleProofStateFrom']}")
            return self._proof_step(), Effects()
        if _texts(req, "cmd") and _opt_nat(req, "env"):
            return self.command(req["cmd"], req.get("env"))
        if _texts(req, "path") and _opt_nat(req, "env"):
            try:
                text = open(req["path"]).read()
            except OSError as e:
                return {"message": str(e)}, Effects()
            return self.command(text, None if self._before(4, 22) else req.get("env"))
        raise ValueError("could not parse as a valid JSON command")

    def _new_env(self, decls: dict, axioms: set) -> int:
        self.envs.append(decls)
        self.env_axioms.append(axioms)
        return len(self.envs) - 1

    def command(self, text: str, env: int | None) -> tuple[dict, Effects]:
        """Run one command in environment `env` (None: a fresh one) -> the REPL's response dict and its effects."""
        if env is not None and not 0 <= env < len(self.envs):
            return {"message": "Unknown environment."}, Effects()
        decls = dict(self.envs[env]) if env is not None else {}
        axioms = set(self.env_axioms[env]) if env is not None else set()
        messages: list[dict] = []
        sorries: list[dict] = []
        effects = Effects()
        if re.match(r"\s*import\b", text) and env is not None:
            messages.append(_msg("error", {"line": 1, "column": 0}, {"line": 1, "column": 6},
                                 "invalid 'import' command, it must be used in the beginning of the file"))
        rule = next((r for r in self.rules if r.match.search(text)), None)
        extra_axioms: set[str] = set()
        warn_sorry = False
        if rule is not None:
            effects = Effects(rule.delay_s, rule.grow_mb, rule.stderr_bytes,
                              rule.outcome if rule.outcome in ("hang", "crash", "garbage", "forge") else None)
            m = rule.match.search(text)
            assert m is not None
            pos = _pos(text, m.start())
            if rule.line is not None:
                pos = {"line": rule.line, "column": rule.col or 0}
            end = {"line": pos["line"], "column": pos["column"] + max(1, m.end() - m.start())}
            if rule.outcome == "repl_error":
                return {"message": "Lean error:\n" + rule.message}, effects
            if rule.outcome in ("error", "forge"):
                messages.append(_msg("error", pos, end, rule.message))
                extra_axioms.add("sorryAx")
            elif rule.outcome == "sorry":
                sorries.append({"proofState": self.proof_states, "pos": pos, "goal": rule.goal, "endPos": end})
                self.proof_states += 1
                extra_axioms.add("sorryAx")
                warn_sorry = True
            elif rule.outcome == "tactic_sorry":
                extra_axioms.add("sorryAx")
                warn_sorry = True
            elif rule.outcome == "axiom":
                extra_axioms.update(rule.axioms or ("cheat",))
        for m in _AXIOM_DECL.finditer(text):
            axioms.add(m.group(1))
        if rule is None or rule.outcome == "valid":
            for m in _SORRY.finditer(text):
                sorries.append({"proofState": self.proof_states, "pos": _pos(text, m.start()), "goal": "⊢ False",
                                "endPos": _pos(text, m.end())})
                self.proof_states += 1
                extra_axioms.add("sorryAx")
                warn_sorry = True
        if "native_decide" in text:
            extra_axioms.add("Lean.ofReduceBool")
        used = _UNUSED.sub("", text)
        extra_axioms.update(a for a in axioms if re.search(r"(?<![\w.])" + re.escape(a) + r"(?![\w'])", used))
        for m in _DECL.finditer(text):
            decls[m.group(1)] = tuple(sorted(set(STANDARD_AXIOMS) | extra_axioms))
            if warn_sorry:
                name_pos = _pos(text, m.start(1))
                name_end = {"line": name_pos["line"], "column": name_pos["column"] + len(m.group(1))}
                messages.append(_msg("warning", name_pos, name_end,
                                     f"declaration uses {self.sorry_quote}sorry{self.sorry_quote}"))
        if rule is not None and rule.outcome == "unknown_constant":
            decls.pop(next(iter(_DECL.findall(text)), ""), None)
        for m in _STATEMENT_CHECK.finditer(text):   # the check's constant, before any audit reads it
            check, reference, name = m.group(1), m.group(2), m.group(4)
            passed = name in decls and reference in axioms and (rule is None or rule.outcome != "retyped")
            decls[check] = decls[name] if passed else tuple(sorted(set(STANDARD_AXIOMS) | {"sorryAx"}))
        for m in _PRINT.finditer(text):
            name, pos = m.group(1), _pos(text, m.start())
            end = {"line": pos["line"], "column": pos["column"] + len(m.group(0))}
            if name in decls:
                axs = decls[name]
                data = (f"'{name}' depends on axioms: [{', '.join(axs)}]" if axs
                        else f"'{name}' does not depend on any axioms")
                messages.append(_msg("info", pos, end, data))
            else:
                messages.append(_msg("error", {"line": pos["line"], "column": 15}, end, f"Unknown constant `{name}`"))
        for m in _CHECK.finditer(text):   # info at the `#check` keyword, an unknown name's error at the name
            name, pos, at = m.group(1), _pos(text, m.start(1)), _pos(text, m.start())
            end = {"line": pos["line"], "column": pos["column"] + len(name)}
            unknown = f"unknown identifier '{name}'" if self._before(4, 23) else f"Unknown identifier `{name}`"
            messages.append(_msg("info", at, {"line": at["line"], "column": at["column"] + 6}, f"{name} : Prop")
                            if name in decls else _msg("error", pos, end, unknown))
        signatures = {m.group(1): " ".join(m.group(2).split()) for m in _SIGNATURE.finditer(text)}
        for m in _STATEMENT_CHECK.finditer(text):
            reference, value, name = m.group(2), m.group(3), m.group(4)
            pos = _pos(text, m.start(3))
            end = {"line": pos["line"], "column": pos["column"] + len(value)}
            if name not in decls:
                messages.append(_msg("error", pos, end, f"unknown identifier '_root_.{name}'"))
            elif reference not in axioms:
                messages.append(_msg("error", _pos(text, m.start(2)), end, f"unknown identifier '_root_.{reference}'"))
            elif rule is not None and rule.outcome == "retyped":
                messages.append(_msg("error", pos, end, f"type mismatch\n  @{name}\nhas type\n  "
                                     f"{signatures.get(name, '?')} : Prop\nbut is expected to have type\n  "
                                     f"{signatures.get(reference, '?')} : Prop"))
        for m in _VERSION_QUERY.finditer(text):
            pos = _pos(text, m.start())
            messages.append(_msg("info", pos, {"line": pos["line"], "column": pos["column"] + 5},
                                 f'"{self.lean_version}"'))
        for m in _PRINT_STRING.finditer(text):
            pos = _pos(text, m.start())
            messages.append(_msg("info", pos, {"line": pos["line"], "column": pos["column"] + 6}, m.group(1)))
        out: dict[str, Any] = {"env": self._new_env(decls, axioms)}
        if messages:
            out["messages"] = messages
        if sorries:
            out["sorries"] = sorries
        return out, effects
