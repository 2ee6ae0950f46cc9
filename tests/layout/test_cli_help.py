"""Every option of every command-line entry point has help text (issue 33: `--help` text and defaults on every
option); the parsers are captured as each module's main() builds them."""
from __future__ import annotations

import argparse
import importlib
import inspect
import re

import pytest

ENTRY_POINTS = ("sdpo_data.prepare", "sdpo_data.smollm2", "sdpo_data.addition_rows", "sdpo_data.toy_lean",
                "reward.lean.cli", "sdpo_eval.math_eval", "sdpo_eval.prover_eval", "sdpo_eval.discovery.cli",
                "sdpo_eval.discovery.sampler", "sdpo_eval.curves", "sdpo_eval.recheck")


class _Built(Exception):
    def __init__(self, parser: argparse.ArgumentParser):
        self.parser = parser


def parser_of(module_name: str, monkeypatch) -> argparse.ArgumentParser:
    def capture(self, args=None, namespace=None):
        raise _Built(self)

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", capture)
    main = importlib.import_module(module_name).main
    with pytest.raises(_Built) as built:
        main([]) if inspect.signature(main).parameters else main()
    return built.value.parser


def options(parser: argparse.ArgumentParser, prefix: str = ""):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from options(sub, f"{prefix}{name} ")
        elif action.option_strings and action.dest != "help":
            yield prefix + action.option_strings[-1], action


@pytest.mark.parametrize("module_name", ENTRY_POINTS)
def test_every_option_has_help(module_name, monkeypatch):
    found = list(options(parser_of(module_name, monkeypatch)))
    assert found, module_name
    bare = [name for name, action in found if not action.help]
    assert bare == [], f"python -m {module_name}: options without help text: {bare}"


@pytest.mark.parametrize("module_name", ENTRY_POINTS)
def test_an_option_with_a_default_says_what_it_is(module_name, monkeypatch):
    """A default other than None/False/[] is shown (`%(default)s` or the value written out) in the help."""
    silent = [name for name, action in options(parser_of(module_name, monkeypatch))
              if action.default not in (None, False, [], argparse.SUPPRESS) and action.required is False
              and "default" not in (action.help or "") and str(action.default) not in (action.help or "")]
    assert silent == [], f"python -m {module_name}: defaults not shown: {silent}"


def texts(parser: argparse.ArgumentParser, name: str = "") -> list[tuple[str, str]]:
    """(where, text) of the parser's description and of every option's help, its subcommands' included."""
    found = [(f"{name}description", parser.description or "")]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, sub in action.choices.items():
                found += texts(sub, f"{name}{sub_name} ")
        elif action.option_strings:
            found.append((name + action.option_strings[-1], action.help or ""))
    return found


@pytest.mark.parametrize("module_name", ENTRY_POINTS)
def test_no_help_text_runs_two_lines_into_one(module_name, monkeypatch):
    """A backslash line continuation in a non-raw docstring joins two lines with a run of spaces (issue 58 item 4);
    runs of spaces before a `#` comment (aligned examples) are meant."""
    joined = [f"{where}: {line.strip()[:100]}" for where, text in texts(parser_of(module_name, monkeypatch))
              for line in text.splitlines() if re.search(r"\S {3,}(?!#)\S", line)]
    assert joined == [], f"python -m {module_name}: lines joined by a continuation: {joined}"
