"""Every `python -m` command in the README and docs parses as written: a training command's overrides compose through
verl's real config with known keys (ours included), and every other command's module, subcommand and flags exist
(`--help` of that module, run in this process). Commands with placeholders (`<…>`, `...`) are skipped; brackets
around optional arguments are not allowed (they get pasted literally)."""
from __future__ import annotations

import re
import runpy
import shlex
import sys
from pathlib import Path

import pytest

from sdpo_ext.startup.checks import check_config_keys
from tests.recipes.test_recipes import compose_recipe

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PLACEHOLDER = re.compile(r"<[^>]*>|\.\.\.|…|path/to|/path/")
SEPARATORS = {"&&", "||", ";", "|"}


def _snippets(text: str) -> list[str]:
    """Inline code spans outside fences, and fenced-block lines (continuations joined), that hold `python -m`."""
    out, prose, block, fenced = [], [], [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            if fenced:
                out += [cmd for cmd in "\n".join(block).replace("\\\n", " ").splitlines() if "python -m " in cmd]
                block = []
            fenced = not fenced
        elif fenced:
            block.append(line)
        else:
            prose.append(line)
    out += [span for line in prose for span in re.findall(r"`([^`]+)`", line) if "python -m " in span]
    return out


def commands() -> list[tuple[str, list[str]]]:
    """(where, argv after `python -m`) of every command without placeholders."""
    found = []
    for doc in DOCS:
        for snippet in _snippets(doc.read_text(encoding="utf-8")):
            try:
                tokens = shlex.split(snippet, comments=True)
            except ValueError:
                continue
            current: list[str] = []
            for token in tokens + ["&&"]:
                if token in SEPARATORS or token.startswith((">", "2>")):
                    if len(current) > 2 and current[:2] == ["python", "-m"]:
                        found.append((f"{doc.name}: {' '.join(current)}", current[2:]))
                    current = []
                elif current or token == "python":
                    current.append(token)
    return [(where, argv) for where, argv in found if not PLACEHOLDER.search(" ".join(argv))]


OURS = ("sdpo_data.", "sdpo_eval.", "sdpo_attempts.", "reward.", "lean_env.", "verl.")
NOT_COMMANDS = {"reward.math.worker"}  # a worker process the grader starts (JSON lines over pipes), named in prose
COMMANDS = [(w, a) for w, a in commands() if a[0].startswith(OURS) and re.fullmatch(r"[\w.]+", a[0])
            and a[0] not in NOT_COMMANDS]
TRAINING = [(w, a) for w, a in COMMANDS if a[0] == "verl.trainer.main_ppo"]
OTHERS = [(w, a) for w, a in COMMANDS if a[0] != "verl.trainer.main_ppo"]


def test_the_docs_have_commands_to_check():
    assert len(TRAINING) >= 8 and len(OTHERS) >= 15


@pytest.mark.parametrize("where, argv", TRAINING, ids=[w[:90] for w, _ in TRAINING])
def test_a_training_command_composes_with_known_keys(where, argv, monkeypatch, tmp_path):
    monkeypatch.setenv("SDPO_DATA_DIR", str(tmp_path))
    overrides = [a for a in argv[1:] if not a.startswith("hydra.")]
    recipe = next(a.removeprefix("+recipe=") for a in overrides if a.startswith("+recipe="))
    cfg = compose_recipe(recipe, tuple(a for a in overrides if not a.startswith("+recipe=")))
    check_config_keys(cfg)


def _help(module: str, sub: list[str], capsys) -> str:
    argv = sys.argv
    sys.argv = [module, *sub, "--help"]
    try:
        with pytest.raises(SystemExit) as stop:
            runpy.run_module(module, run_name="__main__", alter_sys=True)
    finally:
        sys.argv = argv
    assert stop.value.code in (0, None), f"python -m {module} {' '.join(sub)} --help exited {stop.value.code}"
    return capsys.readouterr().out


@pytest.mark.parametrize("where, argv", OTHERS, ids=[w[:90] for w, _ in OTHERS])
def test_a_commands_module_subcommand_and_flags_exist(where, argv, capsys):
    assert not any(a.startswith("[") for a in argv), f"{where}: [optional] arguments are pasted literally"
    module, rest = argv[0], argv[1:]
    top = _help(module, [], capsys)
    sub = rest[:1] if rest and not rest[0].startswith("-") and re.search(rf"\{{[^}}]*\b{re.escape(rest[0])}\b", top) \
        else []
    text = _help(module, sub, capsys) if sub else top
    flags = {a.split("=", 1)[0] for a in rest if a.startswith("--")}
    missing = sorted(f for f in flags if not re.search(rf"(?<![\w-]){re.escape(f)}(?![\w-])", text))
    assert not missing, f"{where}: {missing} not in `python -m {module} {' '.join(sub)} --help`"
