"""`python -m reward.cli` (the path before the move) says where the command went, in one line, exit 2 (issue 50)."""
from __future__ import annotations

import runpy
import shlex
import sys

import pytest

from tests.layout.test_cli_help import parser_of


def test_the_old_path_names_the_new_one(capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["reward.cli", "verify", "in.jsonl"])
    with pytest.raises(SystemExit) as stop:
        runpy.run_module("reward.cli", run_name="__main__")
    err = capsys.readouterr().err
    assert stop.value.code == 2 and err.count("\n") == 1
    assert err.startswith("error: reward.cli moved to reward.lean.cli (run python -m reward.lean.cli verify")


def test_the_command_it_names_is_one_the_new_module_parses(monkeypatch):
    from reward.cli import MOVED

    args = shlex.split(MOVED.split("run python -m reward.lean.cli ", 1)[1].split(" ...", 1)[0])
    assert parser_of("reward.lean.cli", monkeypatch).parse_known_args(args)[0].command == "verify"
