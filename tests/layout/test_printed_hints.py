"""Every fix the project prints works when pasted as is (issue 42): the messages are produced by the code that prints
them, on the mistakes a new user makes, and each `key=value` override in them goes through Hydra's composition of the
recipe it came from, each `python -m <module> ...` command through that module's own argparse parser."""
from __future__ import annotations

import re
import shlex
import socket
from pathlib import Path

import pytest
from omegaconf import OmegaConf

import reward.math.score as math_reward
from lean_env.version import LeanVersionError, check_lean_version
from reward.lean import cli
from sdpo_ext.startup import checks as startup_checks
from sdpo_ext.startup.checks import check_config_keys, startup_problems
from tests.layout.test_cli_help import parser_of
from tests.recipes.test_recipes import compose_recipe

# a dotted key (a leading + or ++ allowed) = a value, not inside a longer token
OVERRIDE = re.compile(r"(?<![\w.+/-])(\+{0,2}[a-z_]+(?:\.[A-Za-z_0-9]+)+)=([^\s(),;]+)")
COMMAND = re.compile(r"python3? -m ([\w.]+)([^();\n]*)")

# recipe, its mistakes: the pre-flight problems of each are printed hints
MISTAKES = (
    ("sdpo_kimina_1_7b", ()),                                      # a fresh CPU box: no GPU, data, model, server
    ("sdpo_math_qwen3_5_4b", ()),
    ("sdpo_demo", ()),
    ("sdpo_toy_lean", ("trainer.n_gpus_per_node=0", "reward.custom_reward_function.path=/nonexistent/reward.py",
                       "actor_rollout_ref.model.path=org/bad name",
                       "actor_rollout_ref.model.override_config.attn_implementation=sdpa_varlne",
                       "ray_kwargs.ray_init.num_cpus=1")),
)


def _unused_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def printed(tmp_path_factory) -> list[tuple[str, str]]:
    """(recipe the message is about, message) for the project's messages on the mistakes above."""
    tmp = tmp_path_factory.mktemp("hints")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SDPO_DATA_DIR", str(tmp / "data"))
        mp.setenv("SDPO_TOY_DATA_DIR", str(tmp / "toy"))
        mp.setenv("SDPO_OUTPUT_DIR", str(tmp / "runs"))
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("LEAN_SERVER_API_URL", f"http://127.0.0.1:{_unused_port()}")
        messages = []
        for visible in (0, 2):   # "run on a GPU machine", and the count this machine shows
            mp.setattr(startup_checks, "visible_gpus", lambda visible=visible: visible)
            for recipe, mistakes in MISTAKES:
                messages += [(recipe, p) for p in startup_problems(compose_recipe(recipe, mistakes))]
    try:
        check_lean_version("v4.15.0", "v4.9.0")
    except LeanVersionError as e:
        messages.append(("sdpo_kimina_1_7b", str(e)))
    for opens_think in (True, False):
        messages += [("sdpo_math_qwen3_5_4b", p) for p in math_reward.preflight(
            {"prompt_opens_think": opens_think}, generation_prompt="<|im_start|>assistant\n<think>\n"
            if not opens_think else "<|im_start|>assistant\n")]
    return messages


def _overrides(printed) -> list[tuple[str, str]]:
    return sorted({(recipe, f"{key}={value.rstrip('.:')}") for recipe, message in printed
                   for key, value in OVERRIDE.findall(message)})


def _commands(printed) -> list[tuple[str, list[str]]]:
    found = {(module, args.strip()) for _, message in printed for module, args in COMMAND.findall(message)}
    return [(module, shlex.split(args)) for module, args in sorted(found)]


def test_the_mistakes_print_the_hints_this_test_is_about(printed):
    """Guards the collection itself: the hints that were wrong before issue 42 are among those checked."""
    overrides = {o for _, o in _overrides(printed)}
    assert {"reward.custom_reward_function.reward_kwargs.backend=repl", "trainer.n_gpus_per_node=1",
            "trainer.n_gpus_per_node=2", "ray_kwargs.ray_init.num_cpus=3",
            "reward.custom_reward_function.path=pkg://reward.lean", "actor_rollout_ref.model.path=/path/to/model",
            "+reward.custom_reward_function.reward_kwargs.allow_lean_version_mismatch=true",
            "reward.custom_reward_function.reward_kwargs.prompt_opens_think=true"} <= overrides, overrides
    assert {m for m, _ in _commands(printed)} == {"sdpo_data.prepare", "sdpo_data.addition_rows",
                                                   "sdpo_data.toy_lean", "sdpo_data.smollm2"}


def test_every_printed_override_composes_on_its_recipe(printed):
    broken = []
    for recipe, override in _overrides(printed):
        try:
            cfg = compose_recipe(recipe, (override,))
            check_config_keys(cfg)
        except Exception as e:  # noqa: BLE001 - listed with the hint that does not work
            broken.append(f"{override} (printed for {recipe}): {type(e).__name__}: {str(e).splitlines()[0]}")
            continue
        if OmegaConf.select(cfg, override.lstrip("+").partition("=")[0], default="<absent>") == "<absent>":
            broken.append(f"{override} (printed for {recipe}): composes, but the key is not in the config")
    assert broken == []


def test_every_printed_command_parses(printed, monkeypatch):
    broken = []
    for module, args in _commands(printed) + [("reward.lean.cli", ["verify", "--help"])]:
        parser = parser_of(module, monkeypatch)
        try:
            _, extra = parser.parse_known_args(args)
        except SystemExit as stop:
            extra = [] if stop.code == 0 else ["(argparse refused it)"]
        if extra:
            broken.append(f"python -m {module} {shlex.join(args)}: {extra}")
    assert broken == []


def test_the_cli_prints_its_help_command_for_a_bad_option(tmp_path, capsys):
    (tmp_path / "in.jsonl").write_text("{}\n")
    assert cli.main(["verify", str(tmp_path / "in.jsonl"), "--backend", "repl", "--recheck-workers", "0"]) == 2
    err = capsys.readouterr().err
    assert [m for m, _ in COMMAND.findall(err)] == ["reward.lean.cli"] and "verify --help" in err


def test_a_quoted_data_folder_survives_the_paste(tmp_path):
    from sdpo_ext.startup.preflight import prepare_command

    command = prepare_command(Path("/my data") / "toy_fewshot_valid.parquet")
    assert shlex.split(command)[-1] == "/my data"
