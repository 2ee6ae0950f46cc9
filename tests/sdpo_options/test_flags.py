"""The one dataclass-to-flags bridge (sdpo_options.flags): every bridged option's default and help are written once,
in its dataclass, and no command line writes a bridged flag a second time by hand."""
from __future__ import annotations

import argparse
import ast
import dataclasses
from dataclasses import dataclass
from pathlib import Path

import pytest

from lean_env.options import OWNERS as LEAN_OWNERS
from reward.math.options import FLAG_PREFIX, MathGradingOptions
from sdpo_eval.engines import EngineOptions
from sdpo_options.flags import (
    add_flags,
    block,
    check_types,
    deprecated_alias,
    flag_name,
    from_flags,
    option,
    options_of,
    parse_bool,
)

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("sdpo_attempts", "sdpo_options", "lean_env", "reward", "sdpo_data", "sdpo_eval", "sdpo_ext")
# (dataclass, flag prefix): every options dataclass a command line exposes
BRIDGED = [*((owner, "") for owner in LEAN_OWNERS), (MathGradingOptions, FLAG_PREFIX), (EngineOptions, "")]


@pytest.mark.parametrize("owner, prefix", BRIDGED, ids=lambda x: getattr(x, "__name__", x))
def test_every_field_is_an_option_with_a_doc(owner, prefix):
    blocks = {f.name for f in dataclasses.fields(owner) if f.metadata.get("block")}   # LeanOptions' parts
    assert {f.name for f in options_of(owner)} == {f.name for f in dataclasses.fields(owner)} - blocks
    assert all(f.metadata["doc"].strip() for f in options_of(owner))


@pytest.mark.parametrize("owner, prefix", BRIDGED, ids=lambda x: getattr(x, "__name__", x))
def test_the_flags_carry_the_fields_defaults_and_docs(owner, prefix):
    parser = argparse.ArgumentParser()
    add_flags(parser, owner, prefix=prefix)
    if not any(f.metadata["env"] for f in options_of(owner)):   # env-backed fields resolve later
        assert from_flags(owner, parser.parse_args([]), prefix=prefix) == owner()
    actions = {a.option_strings[0]: a for a in parser._actions if a.option_strings and a.dest != "help"}
    assert set(actions) == {flag_name(f, prefix) for f in options_of(owner)}
    for f in options_of(owner):
        action = actions[flag_name(f, prefix)]
        assert action.help.startswith(f.metadata["doc"]) and "default: " in action.help


def _imported_modules(tree: ast.Module) -> set[str]:
    return {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}


def hand_written_copies(path: Path, root: Path = ROOT) -> set[str]:
    """The bridged flags that the module at `path` writes in an `add_argument(...)` call although it defines or
    imports their options (a CLI that has the dataclass at hand and derives a flag of it again)."""
    tree = ast.parse(path.read_text())
    imported = _imported_modules(tree) | {".".join(path.relative_to(root).with_suffix("").parts)}
    bridged = {flag_name(f, prefix) for owner, prefix in BRIDGED for f in options_of(owner)
               if owner.__module__ in imported}
    written = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "add_argument":
            written |= {a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)}
    return written & bridged


def test_no_command_line_writes_a_bridged_flag_again():
    again = sorted(f"{path.relative_to(ROOT)}: {flag}" for package in PACKAGES
                   for path in (ROOT / package).rglob("*.py") for flag in hand_written_copies(path))
    assert not again, again


def test_the_scan_finds_a_flag_written_again(tmp_path):
    module = tmp_path / "cli.py"
    module.write_text("import argparse\nfrom sdpo_eval.engines import EngineOptions\np = argparse.ArgumentParser()\n"
                      'p.add_argument("--dtype", default="auto")\np.add_argument("--grading-timeout-s")\n')
    assert hand_written_copies(module, tmp_path) == {"--dtype"}
    own = tmp_path / "sdpo_eval" / "engines.py"
    own.parent.mkdir()
    own.write_text('def add(parser):\n    parser.add_argument("--batch-size", type=int, default=8)\n')
    assert hand_written_copies(own, tmp_path) == {"--batch-size"}


@dataclass(frozen=True)
class _Example:
    limit: float = option(1.5, "a limit")
    on: bool = option(False, "a switch")
    name: str | None = option(None, "a name", env="EXAMPLE_NAME", fallback="x", choices=("x", "y"))


@dataclass(frozen=True)
class _WithBlock:
    part: _Example = block(_Example, "a nested part")
    count: int = option(2, "a count")


def test_a_block_has_its_doc_but_no_flag_and_keeps_its_default():
    parser = argparse.ArgumentParser()
    add_flags(parser, _WithBlock)
    assert [a.dest for a in parser._actions if a.dest != "help"] == ["count"]
    assert from_flags(_WithBlock, parser.parse_args(["--count", "5"])) == _WithBlock(count=5)
    assert dataclasses.fields(_WithBlock)[0].metadata["doc"] == "a nested part"


def test_a_flag_has_the_fields_type_and_unset_flags_are_none():
    parser = argparse.ArgumentParser()
    add_flags(parser, _Example, prefix="ex")
    args = parser.parse_args(["--ex-limit", "2", "--ex-on", "yes", "--ex-name", "y"])
    assert from_flags(_Example, args, prefix="ex") == _Example(limit=2.0, on=True, name="y")
    with pytest.raises(SystemExit):
        parser.parse_args(["--ex-name", "z"])
    unset = argparse.ArgumentParser()
    add_flags(unset, _Example, unset=True)
    assert vars(unset.parse_args([])) == {"limit": None, "on": None, "name": None}
    assert "default: env EXAMPLE_NAME, else x" in next(a.help for a in unset._actions if a.dest == "name")


@pytest.mark.parametrize("text, value", [("true", True), ("No", False), ("1", True), ("0", False)])
def test_parse_bool(text, value):
    assert parse_bool(text) is value


def test_parse_bool_refuses_other_words():
    with pytest.raises(argparse.ArgumentTypeError, match="expected true or false"):
        parse_bool("maybe")


def test_check_types_names_the_field():
    with pytest.raises(ValueError, match="Example option on must be true or false"):
        check_types(_Example(on="false"), "Example")
    with pytest.raises(ValueError, match="Example option limit must be a number"):
        check_types(_Example(limit="2"), "Example")


@pytest.mark.parametrize("module, argv, hint", [
    ("sdpo_eval.prover_eval", ["pask"],
     "invalid choice: 'pask' (choose from 'passk') (did you mean passk?)"),
    ("reward.lean.cli", ["verfy", "x.jsonl"], "(did you mean verify?)"),
    ("sdpo_data.prepare", ["lean", "--dataset", "minif2g"], "(did you mean minif2f?)"),
    ("sdpo_eval.math_eval", ["--model", "m", "--temprature", "0.5"],
     "unrecognized arguments: --temprature 0.5 (did you mean --temperature?)"),
])
def test_a_misspelt_subcommand_choice_or_flag_gets_the_closest_name(module, argv, hint, capsys):
    import importlib

    with pytest.raises(SystemExit) as stop:
        importlib.import_module(module).main(argv)
    assert stop.value.code == 2 and hint in capsys.readouterr().err


def test_a_deprecated_alias_sets_the_new_flag_with_a_one_line_note(capsys):
    parser = argparse.ArgumentParser()
    add_flags(parser, EngineOptions)
    deprecated_alias(parser, "--backend", "--engine")
    assert parser.parse_args(["--backend", "transformers"]).engine == "transformers"
    assert capsys.readouterr().err == ("note: --backend is deprecated, use --engine (the old spelling goes in the next "
                                       "release)\n")
    assert parser.parse_args([]).engine == "auto" and capsys.readouterr().err == ""
    with pytest.raises(SystemExit):
        parser.parse_args(["--backend", "tgi"])   # the new flag's choices hold for the old spelling


@pytest.mark.parametrize("module, argv, dest, value", [
    ("sdpo_eval.math_eval", ["--model", "m", "--backend", "transformers"], "engine", "transformers"),
    ("sdpo_eval.prover_eval", ["passk", "--model", "m", "--data", "d", "--n", "1", "--backend", "vllm"], "engine",
     "vllm"),
    ("sdpo_eval.discovery.sampler", ["--recipe", "r", "--problems", "a", "--budget", "1", "--runs", "best_of_k:1",
                                     "--out-dir", "o", "--backend", "vllm"], "engine", "vllm"),
    ("sdpo_eval.discovery.cli", ["run", "--task", "demo", "--budget", "1", "--out-dir", "o", "--sampler-backend",
                                 "transformers"], "sampler_engine", "transformers"),
    ("sdpo_eval.math_eval", ["--model", "m", "--log", "s.jsonl"], "sample_log", Path("s.jsonl")),
    ("sdpo_eval.discovery.cli", ["merge", "--chunk-dir", "a", "--out", "m"], "out_dir", Path("m")),
    ("sdpo_eval.discovery.cli", ["startup", "--run-dir", "r", "--out", "p"], "out_prefix", Path("p")),
    ("sdpo_eval.discovery.cli", ["report", "--log", "a.jsonl", "--budget", "4", "--out", "p"], "out_prefix", Path("p")),
])
def test_the_renamed_flags_keep_their_old_spelling(module, argv, dest, value, monkeypatch, capsys):
    """`--engine` (generation engine) is not the Lean `--backend` of reward.lean.cli, math_eval's `--sample-log` (an
    output) is not the `--log` (an input) of recheck and discovery report, and `--out` is one file (a prefix is
    `--out-prefix`, a folder `--out-dir`); the old spellings still work (docs/eval.md, "One vocabulary")."""
    import importlib

    parsed = {}

    def capture(self, args=None, namespace=None):
        parsed.update(vars(original(self, args, namespace)))
        raise SystemExit(0)

    original = argparse.ArgumentParser.parse_args
    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", capture)
    with pytest.raises(SystemExit):
        importlib.import_module(module).main(argv)
    assert parsed[dest] == value and "is deprecated, use --" in capsys.readouterr().err
