"""The Lean options have one home (lean_env.options): the CLI flags, verify()'s defaults and the reward's
resolution all derive from its dataclass fields."""
from __future__ import annotations

import argparse
import dataclasses
import inspect

import pytest

import reward.lean.score as rl
from lean_env.options import BackendOptions, CheckOptions, LeanOptions, RecheckOptions, option_fields
from lean_env.verify import run_with_retries, verify
from reward.lean.cli import _parser
from sdpo_options.flags import value_type as option_type

SAMPLES = {bool: ("false", False), int: ("7", 7), float: ("2.5", 2.5), str: ("x y", "x y")}


def _verify_action(name: str) -> argparse.Action:
    sub = next(a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction))
    return next(a for a in sub.choices["verify"]._actions if a.dest == name)


def test_option_names_are_unique_and_every_option_has_a_type_and_a_doc():
    names = [f.name for _, f in option_fields()]
    assert len(names) == len(set(names))
    for owner, f in option_fields():
        assert option_type(owner, f) in SAMPLES, f.name
        assert f.metadata["doc"].strip(), f.name
    # every field of the four dataclasses is an option, except the three that hold the parts
    every = {f.name for cls in (BackendOptions, CheckOptions, RecheckOptions, LeanOptions)
             for f in dataclasses.fields(cls)}
    assert every - set(names) == {"backend_options", "check", "recheck"}


@pytest.mark.parametrize("owner, f", option_fields(), ids=lambda x: getattr(x, "name", ""))
def test_every_option_is_a_cli_flag_of_its_type_that_keeps_the_default(owner, f):
    action = _verify_action(f.name)
    assert action.option_strings == ["--" + f.name.replace("_", "-")]
    assert action.default is None   # unset: the option's own default applies (resolved below)
    text, value = SAMPLES[option_type(owner, f)]
    assert action.type(text) == value
    if f.metadata["env"]:
        assert f.metadata["env"] in action.help and str(f.metadata["fallback"]) in action.help
    else:
        assert f"default: {f.default}" in action.help


def test_cli_defaults_resolve_to_the_dataclass_defaults(monkeypatch):
    for _, f in option_fields():
        if f.metadata["env"]:
            monkeypatch.delenv(f.metadata["env"], raising=False)
    args = _parser().parse_args(["verify", "in.jsonl"])
    given = {f.name: getattr(args, f.name) for _, f in option_fields()}
    options = rl.resolve_config(**given)
    assert options == LeanOptions(backend_options=BackendOptions().resolved())
    assert options.check == CheckOptions() and options.backend_options.backend == "kimina"


def test_a_cli_flag_reaches_its_option(monkeypatch):
    args = _parser().parse_args(["verify", "in.jsonl", "--timeout-s", "12", "--num-repls", "3",
                                 "--statement-check", "no", "--lean-version", "v4.9.0"])
    options = rl.resolve_config(**{f.name: getattr(args, f.name) for _, f in option_fields()})
    assert (options.check.timeout_s, options.check.statement_check) == (12.0, False)
    assert (options.backend_options.num_repls, options.lean_version) == (3, "v4.9.0")


def test_verify_and_its_retries_take_their_limits_from_check_options_only():
    """No limit is written as a keyword default of verify() or run_with_retries() (a second home)."""
    limits = {f.name for f in dataclasses.fields(CheckOptions)}
    for fn in (verify, run_with_retries):
        assert limits.isdisjoint(inspect.signature(fn).parameters), fn.__name__


def test_env_fallbacks_and_explicit_values(monkeypatch):
    monkeypatch.setenv("LEAN_BACKEND", "repl")
    monkeypatch.setenv("LEAN_REPL_COMMAND", "my-repl")
    assert BackendOptions().resolved().repl_command == "my-repl"
    assert BackendOptions(repl_command="given").resolved().repl_command == "given"
    assert BackendOptions(backend="kimina").resolved().backend == "kimina"
    with pytest.raises(ValueError, match="backend must be"):
        BackendOptions(backend="lean3").resolved()


def test_equal_options_share_one_backend_key():
    a = rl.resolve_config(backend="repl", repl_command="r", timeout_s=5)
    b = rl.resolve_config(backend="repl", repl_command="r", timeout_s=90, lean_version="v4.9.0")
    c = rl.resolve_config(backend="repl", repl_command="r", num_repls=2)
    assert a.backend_options == b.backend_options and hash(a.backend_options) == hash(b.backend_options)
    assert a.backend_options != c.backend_options


def test_the_lean_docs_table_lists_exactly_the_options():
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[3] / "docs" / "lean.md").read_text()
    table = doc.split("## Config keys", 1)[1].split("\n\n", 2)[2].split("\n\n", 1)[0]
    keys = {k.strip(" `") for row in table.splitlines()[2:] for k in row.split("|")[1].split("/")}
    assert keys == {f.name for _, f in option_fields()}
