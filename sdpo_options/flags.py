"""One bridge from an options dataclass to command-line flags: each default and each help text written once.

A field is `option(default, doc)` (optionally `env`/`fallback`: unset, it is read from an environment variable, then
from the fallback; `choices`: the values a flag accepts). `add_flags(parser, owners)` adds one flag per such field:
`--<prefix>-<field-name>` with the field's type (a bool reads true/false/yes/no/1/0), its default and the help
`"<doc> (default: <default>)"`. With `unset=True` every flag defaults to None, so a caller can tell "not given" and
let the dataclass (or its environment variable) decide. `from_flags(owner, args)` builds the dataclass from the
parsed flags. `unknown_names` words an unknown option name with its closest known ones;
`ClosestNamesParser` does the same for a CLI's misspelt subcommand, choice or flag; `deprecated_alias` keeps a renamed
flag's old spelling for one release, with a note. A nested dataclass is a
`block(factory, doc)`: it has its doc but no flag (its own fields are options).
The verl config dataclasses (`*Config`, built from the recipes' YAML) declare their fields the same way, so every
config field has its default and its one-line doc in one place.

Contract: `from_flags(owner, parser.parse_args([]))` equals `owner()` for every `owner` added without `unset`.
"""
from __future__ import annotations

import argparse
import dataclasses
import difflib
import re
import sys
import typing
from collections.abc import Callable, Collection, Iterator, Sequence
from typing import Any, NoReturn


def option(default: Any, doc: str, *, env: str | None = None, fallback: Any = None,
           choices: Sequence[Any] | None = None) -> Any:
    """A dataclass field with its one-line `doc` (the flag's help); `env`/`fallback` as the module docstring says."""
    return dataclasses.field(default=default,
                             metadata={"doc": doc, "env": env, "fallback": fallback, "choices": choices})


def block(factory: Callable[[], Any], doc: str) -> Any:
    """A nested dataclass field, built by `factory`, with its one-line `doc`; it gets no flag."""
    return dataclasses.field(default_factory=factory, metadata={"doc": doc, "block": True})


def parse_bool(text: str) -> bool:
    """A flag's true/false (yes/no, 1/0, any case); argparse.ArgumentTypeError otherwise."""
    if text.lower() not in ("true", "false", "1", "0", "yes", "no"):
        raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")
    return text.lower() in ("true", "1", "yes")


def options_of(owner: type) -> Iterator[dataclasses.Field]:
    """The fields of `owner` declared with `option`, in order (not its `block`s)."""
    return (f for f in dataclasses.fields(owner) if "doc" in f.metadata and not f.metadata.get("block"))


def value_type(owner: type, f: dataclasses.Field) -> type:
    """The value type of an option (Optional unwrapped): bool, int, float or str."""
    hint = typing.get_type_hints(owner)[f.name]
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    return args[0] if args else hint


def check_types(options: Any, what: str) -> None:
    """ValueError naming the field when a number option holds no number or a bool option no bool: a string "false"
    from a config would otherwise read as true. `what` names the options in the message ("Lean reward")."""
    for f in options_of(type(options)):
        value, kind = getattr(options, f.name), value_type(type(options), f)
        not_a_number = isinstance(value, bool) or not isinstance(value, (int, float))
        if value is not None and kind in (int, float) and not_a_number:
            raise ValueError(f"{what} option {f.name} must be a number, got {value!r}")
        if kind is bool and not isinstance(value, bool):
            raise ValueError(f"{what} option {f.name} must be true or false, got {value!r}")


def unknown_names(what: str, unknown: Collection[str], known: Collection[str]) -> str:
    """`unknown <what> 'x' (did you mean y?)`, one clause per unknown name, each with its closest known names; the
    whole list of known names only when none is close."""
    clauses = []
    for name in sorted(unknown):
        close = difflib.get_close_matches(name, sorted(known), n=3)
        clauses.append(f"'{name}'" + (f" (did you mean {', '.join(close)}?)" if close else ""))
    text = f"unknown {what} {', '.join(clauses)}"
    return text if "did you mean" in text else f"{text}; known: {', '.join(sorted(known))}"


_INVALID_CHOICE = re.compile(r"invalid choice: '(?P<given>[^']*)' \(choose from (?P<choices>.*)\)")
_UNRECOGNIZED = re.compile(r"unrecognized arguments: (?P<args>.*)")


def _option_strings(parser: argparse.ArgumentParser) -> list[str]:
    """Every flag of `parser` and of its subcommands."""
    names = []
    for action in parser._actions:
        names += [s for s in action.option_strings if s.startswith("--")]
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                names += _option_strings(sub)
    return sorted(set(names))


def closest_hint(parser: argparse.ArgumentParser, message: str) -> str:
    """` (did you mean ...?)` for argparse's error `message` about a misspelt choice or subcommand, or about unknown
    flags (the closest of `parser`'s flags); empty when none is close."""
    choice, unknown = _INVALID_CHOICE.search(message), _UNRECOGNIZED.search(message)
    if choice:
        options = re.findall(r"'([^']*)'", choice["choices"])
        close = difflib.get_close_matches(choice["given"], options, n=3)
    elif unknown:
        flags = _option_strings(parser)
        close = [m for arg in unknown["args"].split() if arg.startswith("--")
                 for m in difflib.get_close_matches(arg.partition("=")[0], flags, n=1)]
    else:
        close = []
    return f" (did you mean {', '.join(close)}?)" if close else ""


class ClosestNamesParser(argparse.ArgumentParser):
    """argparse's parser whose usage errors name the closest subcommand, choice or flag to a misspelt one (argparse
    before Python 3.14 lists every choice, and no flag); its subcommands' parsers are of this class too."""

    def error(self, message: str) -> NoReturn:
        """argparse's usage error (exit 2), with `closest_hint`."""
        super().error(message + closest_hint(self, message))


class _DeprecatedAlias(argparse.Action):
    """Sets what `new` sets, after a one-line note on stderr that the spelling is deprecated."""

    def __init__(self, option_strings: Sequence[str], dest: str, new: str, **kwargs: Any):
        super().__init__(option_strings, dest, **kwargs)
        self.new = new

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        print(f"note: {option_string} is deprecated, use {self.new} (the old spelling goes in the next release)",
              file=sys.stderr)
        setattr(namespace, self.dest, values)


def deprecated_alias(parser: argparse.ArgumentParser, old: str, new: str) -> None:
    """`old` (a renamed flag's former spelling) sets `new`'s value, with its type and choices, for one release,
    printing a one-line deprecation note when given."""
    target = next(a for a in parser._actions if new in a.option_strings)
    parser.add_argument(old, dest=target.dest, type=target.type, choices=target.choices, action=_DeprecatedAlias,
                        new=new, default=argparse.SUPPRESS, help=f"deprecated spelling of {new}")


def flag_name(f: dataclasses.Field, prefix: str = "") -> str:
    """`--<prefix>-<name>` with dashes for underscores (`--grading-timeout-s`), or `--<name>` without a prefix."""
    return "--" + (f"{prefix}-" if prefix else "") + f.name.replace("_", "-")


def _dest(f: dataclasses.Field, prefix: str) -> str:
    return f"{prefix}_{f.name}" if prefix else f.name


def _default_text(f: dataclasses.Field) -> str:
    if f.metadata["env"]:
        return f"default: env {f.metadata['env']}, else {f.metadata['fallback']}"
    return f"default: {f.default}"


def add_flags(parser: argparse.ArgumentParser, owners: type | Sequence[type], *, prefix: str = "",
              unset: bool = False, skip: Collection[str] = ()) -> None:
    """One flag per `option` field of each owner (names unique across them, fields named in `skip` left out), with
    its type, default and doc."""
    for owner in (owners,) if isinstance(owners, type) else owners:
        for f in options_of(owner):
            if f.name in skip:
                continue
            kind = value_type(owner, f)
            parser.add_argument(flag_name(f, prefix), dest=_dest(f, prefix), type=parse_bool if kind is bool else kind,
                                default=None if unset else f.default, choices=f.metadata["choices"],
                                help=f"{f.metadata['doc']} ({_default_text(f)})")


def given_flags(owners: type | Sequence[type], args: argparse.Namespace, *, prefix: str = "") -> dict[str, Any]:
    """`{field: value}` of the flags `add_flags(..., unset=True)` added that were given (not None)."""
    values = {f.name: getattr(args, _dest(f, prefix))
              for owner in ((owners,) if isinstance(owners, type) else owners) for f in options_of(owner)}
    return {name: value for name, value in values.items() if value is not None}


def from_flags(owner: type, args: argparse.Namespace, *, prefix: str = "", skip: Collection[str] = ()) -> Any:
    """The `owner` of the flags `add_flags` added (checked as any construction is); fields in `skip` keep their
    defaults."""
    return owner(**{f.name: getattr(args, _dest(f, prefix)) for f in options_of(owner) if f.name not in skip})
