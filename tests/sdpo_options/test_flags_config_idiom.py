"""One config idiom (issue 51, item 1): every dataclass named `*Config` or `*Options` in our packages follows the
naming rule of `sdpo_options` and documents each of its fields in the field, with `option(default, doc)` or
`block(factory, doc)`: one line, not a line of the class docstring.

Naming rule: a `*Config` is built by verl from the recipes' YAML, so it is reachable from verl's config (a subclass
of verl's `BaseConfig`, or the type of a field of one); an `*Options` is our own settings and is not.
The classes are found by reading the sources (ast), then imported, so a class added later is checked too.
"""
from __future__ import annotations

import ast
import dataclasses
import importlib
import typing
from pathlib import Path

import pytest
from verl.base_config import BaseConfig

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("sdpo_attempts", "sdpo_options", "lean_env", "reward", "sdpo_data", "sdpo_eval", "sdpo_ext")
SUFFIXES = ("Config", "Options")


def named_classes(root: Path = ROOT) -> list[tuple[str, str]]:
    """(module, class name) of every top-level class named `*Config` or `*Options` in the packages' sources."""
    found = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            module = ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")
            found += [(module, node.name) for node in ast.parse(path.read_text()).body
                      if isinstance(node, ast.ClassDef) and node.name.endswith(SUFFIXES)]
    return found


def config_classes() -> list[type]:
    """The dataclasses among `named_classes`, imported."""
    classes = [getattr(importlib.import_module(module), name) for module, name in named_classes()]
    return [cls for cls in classes if dataclasses.is_dataclass(cls)]


def _dataclass_types(hint: object) -> list[type]:
    """The dataclasses a field's type hint names (Optional and other wrappers unwrapped)."""
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        return [hint]
    return [t for arg in typing.get_args(hint) for t in _dataclass_types(arg)]


def reachable_from_verl(classes: list[type]) -> set[type]:
    """The classes verl builds: the BaseConfig subclasses and, recursively, the dataclass types of their fields."""
    todo = [cls for cls in classes if issubclass(cls, BaseConfig)]
    seen: set[type] = set()
    while todo:
        cls = todo.pop()
        if cls not in seen:
            seen.add(cls)
            todo += [t for hint in typing.get_type_hints(cls).values() for t in _dataclass_types(hint)]
    return seen


def naming_problems(classes: list[type]) -> list[str]:
    """One line per class whose suffix breaks the rule."""
    verl_built = reachable_from_verl(classes)
    problems = []
    for cls in classes:
        if cls.__name__.endswith("Config") and cls not in verl_built:
            problems.append(f"{cls.__module__}.{cls.__name__}: a *Config that verl does not build (name it *Options "
                            f"or build it from a BaseConfig)")
        if cls.__name__.endswith("Options") and cls in verl_built:
            problems.append(f"{cls.__module__}.{cls.__name__}: an *Options that verl builds (name it *Config)")
    return problems


def own_fields(cls: type) -> list[dataclasses.Field]:
    """The fields `cls` or a base class of ours declares (not verl's, e.g. BaseConfig's `_target_`)."""
    ours = {name for base in cls.__mro__ if base.__module__.split(".")[0] != "verl"
            for name in vars(base).get("__annotations__", {})}
    return [f for f in dataclasses.fields(cls) if f.name in ours]


def _docstring_documents(line: str, names: set[str]) -> bool:
    """Whether a docstring line is `name: ...` or `a, b: ...` for field names: a field documented in the docstring."""
    head, colon, _ = line.partition(":")
    return bool(colon) and all(part.strip(" `") in names for part in head.split(","))


def field_doc_problems(cls: type) -> list[str]:
    """One line per field without a one-line doc from `option`/`block`, and per docstring line documenting a field."""
    where, hints = f"{cls.__module__}.{cls.__name__}", typing.get_type_hints(cls)
    problems = []
    for f in own_fields(cls):
        doc, nested = f.metadata.get("doc"), bool(_dataclass_types(hints[f.name]))
        if not isinstance(doc, str) or not doc.strip() or "\n" in doc:
            problems.append(f"{where}.{f.name}: no one-line doc (declare it with option(default, doc) or block)")
        elif nested != bool(f.metadata.get("block")):
            problems.append(f"{where}.{f.name}: a nested dataclass is a block(factory, doc), any other field an option")
    names = {f.name for f in own_fields(cls)}
    problems += [f"{where}: its docstring documents a field: {line.strip()!r} (move it into the field's doc)"
                 for line in (cls.__doc__ or "").splitlines() if _docstring_documents(line, names)]
    return problems


CLASSES = config_classes()


def test_the_walk_finds_the_config_and_options_dataclasses():
    names = {cls.__name__ for cls in CLASSES}
    assert {"SDPOConfig", "SDPOActorConfig", "RunConfig", "RepromptConfig", "LeanOptions", "RecheckOptions",
            "MathGradingOptions", "EngineOptions"} <= names


def test_the_suffix_follows_the_naming_rule():
    assert naming_problems(CLASSES) == []


@pytest.mark.parametrize("cls", CLASSES, ids=lambda cls: cls.__name__)
def test_every_field_has_a_one_line_doc_in_the_field(cls):
    assert field_doc_problems(cls) == []


# ------------------------------------------------------------------ the checks themselves fail where they should

@dataclasses.dataclass
class _LooseConfig:
    """Not reachable from verl.

    limit: documented here instead of in the field.
    """

    limit: int = 3


@dataclasses.dataclass
class _VerlBuiltOptions(BaseConfig):
    """Built by verl, named as our own settings."""


def test_the_checks_find_a_wrong_suffix_and_a_field_documented_in_the_docstring():
    assert len(naming_problems([_LooseConfig, _VerlBuiltOptions])) == 2
    problems = field_doc_problems(_LooseConfig)
    assert any(".limit: no one-line doc" in p for p in problems)
    assert any("its docstring documents a field: 'limit: documented here" in p for p in problems)
