"""The type and range of every value of the plugin's typed blocks, checked before Ray starts, from the dataclasses.

The blocks are `actor_rollout_ref.actor.sdpo` (`SDPOConfig`, with `teacher` and `reprompt` inside) and the top-level
`sdpo` (`RunConfig`, with `ttrl`); a `_target_` in a block names its dataclass. Each value is checked against its
field's type hint (a float field takes any number, an int field a whole number, a bool field true or false,
`Optional` also null); then, when a block's values all have their types, the dataclass is built from them, so its own
`__post_init__` checks the ranges and the rules between fields, with the message it gives at run time. Without this
a mistyped value (`alpha=abc`) ended in a bare TypeError inside verl, naming neither the key nor the type, and a value
out of range only after Ray had started.
Contract: one problem per wrong value, `<key>=<value>: <what is expected>` (a wrong type: with the field's default and
its one-line doc, from its `option`); keys unknown to a dataclass are left to `checks.plugin_unknown_keys`.
"""
from __future__ import annotations

import dataclasses
import importlib
import re
import typing
from collections.abc import Mapping
from typing import Any

from omegaconf import DictConfig, OmegaConf

# root block -> its dataclass when the block names none (`module.Class`)
ROOTS = {"actor_rollout_ref.actor.sdpo": "sdpo_ext.config.SDPOConfig", "sdpo": "sdpo_ext.config.RunConfig"}
_KIND_TEXT = {float: "a number", int: "a whole number", bool: "true or false", str: "a string", list: "a list"}


def target_dataclass(target: str) -> type | None:
    """The dataclass a `_target_` names (`module.Class`), None when it is not an importable dataclass."""
    module, _, name = target.rpartition(".")
    try:
        cls = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError, ValueError):
        return None
    return cls if dataclasses.is_dataclass(cls) else None


def _show(value: Any) -> str:
    """A value as written in an override."""
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    return str(value)


def _fits(value: Any, hint: Any) -> bool:
    if hint is Any:
        return True
    args = typing.get_args(hint)
    if type(None) in args:
        return value is None or any(_fits(value, arg) for arg in args if arg is not type(None))
    origin = typing.get_origin(hint) or hint
    if origin is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if origin is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if origin in (bool, str, list):
        return isinstance(value, origin)
    return True


def _expected(hint: Any) -> str:
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    if len(args) < len(typing.get_args(hint)):
        return f"{_expected(args[0])} or null"
    return _KIND_TEXT.get(typing.get_origin(hint) or hint, str(hint))


def _about(f: dataclasses.Field) -> str:
    """` (default <value>; <the field's doc>)`, from the field's `option`."""
    parts = [f"default {_show(f.default)}"] if f.default is not dataclasses.MISSING else []
    parts += [f.metadata["doc"]] if f.metadata.get("doc") else []
    return f" ({'; '.join(parts)})" if parts else ""


def _range_problem(path: str, root: str, cls: type, values: Mapping[str, Any], error: Exception) -> str:
    """`<key>=<value>: <the dataclass's message>`, the key being the first field the message names."""
    message = re.sub(r"(?<![\w.])sdpo\.", f"{root}.", str(error))
    named = sorted((m.start(), name) for name in values
                   if (m := re.search(rf"(?<![\w])(?:[\w.]*\.)?{re.escape(name)}\b", message)))
    if not named:
        return f"{path}: {message}"
    name = named[0][1]
    key = f"{path}.{name}"
    if message.startswith(key + " "):   # "<key> must be ...": the key is already in front
        message = message[len(key) + 1:]
    return f"{key}={_show(values[name])}: {message}"


def block_problems(path: str, node: Mapping[str, Any], cls: type, root: str) -> list[str]:
    """Problems of the resolved block `node` at dotted `path`, read as dataclass `cls` (nested blocks included)."""
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    problems, scalars = [], {}
    for name, value in node.items():
        if name == "_target_" or name not in fields:
            continue
        hint, key = hints[name], f"{path}.{name}"
        inner = [a for a in (typing.get_args(hint) or (hint,)) if dataclasses.is_dataclass(a)]
        if inner and isinstance(value, Mapping):
            nested = target_dataclass(str(value["_target_"])) if "_target_" in value else inner[0]
            problems += block_problems(key, value, nested or inner[0], root)
        elif inner and value is not None:
            problems.append(f"{key}={_show(value)}: expected a block of {inner[0].__name__} fields")
        elif not inner and not _fits(value, hint):
            problems.append(f"{key}={_show(value)}: expected {_expected(hint)}{_about(fields[name])}")
        elif not inner:
            scalars[name] = value
    if problems:
        return problems
    try:
        cls(**scalars)
    except (ValueError, TypeError) as e:
        return [_range_problem(path, root, cls, scalars, e)]
    return []


def config_value_problems(config: DictConfig) -> list[str]:
    """Every wrong type or out-of-range value of the ROOTS blocks present in `config` (verl's composed config)."""
    problems = []
    for root, default in ROOTS.items():
        node = OmegaConf.select(config, root)
        if not isinstance(node, DictConfig):
            continue
        try:
            block = OmegaConf.to_container(node, resolve=True)
        except Exception:  # noqa: BLE001 - an interpolation that does not resolve: Hydra names it at run start
            continue
        cls = target_dataclass(str(block.get("_target_", default)))
        if cls is not None:
            problems += block_problems(root, block, cls, root)
    return problems
