"""Every start-up check of a run, in one place; each error names the key and the fix.

1. Unknown config keys (a typo in a recipe or a `+key=` override). verl's structured sections fail late and
   obscurely on unknown keys, and its free sections (data, trainer) ignore them silently. `unknown_keys` walks the
   composed config against verl's generated default config: a key is unknown when its parent is a non-empty mapping
   in verl's defaults that lacks it. Free-form mappings (defaults `{}`/null, e.g. override_config, reward_kwargs)
   accept anything; the plugin's own namespaces are listed in PLUGIN_NAMESPACES, and their typed blocks (a mapping
   with a `_target_` dataclass) are checked against that dataclass's fields (`plugin_unknown_keys`).
   `ray_kwargs.ray_init` takes `ray.init`'s keyword arguments (verl passes the block to it).
2. verl settings that the SDPO loss would silently ignore or misread (`sdpo_setting_errors`). SDPO's loss is the
   distillation term alone (plus, with `sdpo.grpo_weight` > 0, verl's PPO loss), and the reference slot holds the
   teacher, not the initial policy. So:
   - `actor.use_kl_loss` / `algorithm.use_kl_in_reward` would measure KL to the (EMA) teacher, not to the
     initial policy, and pure SDPO would drop the KL loss term anyway;
   - `actor.entropy_coeff` != 0 is dropped by pure SDPO (the hybrid's PPO term applies it);
   - `model.use_fused_kernels`: verl's fused-kernel forward never calls the logits hook that computes the
     divergence, so the first update would fail on a missing key.
3. The CPU budget of a small host (`sdpo_ext.startup.small_host.check_cpu_budget`).
4. The attention implementation (`sdpo_ext.startup.attention`): known to transformers, its package importable here.
5. The machine (`sdpo_ext.startup.preflight`): GPUs, data files (with the command that makes them; what they hold:
   `sdpo_ext.startup.data_files`, a parquet with verl's columns and rows), the model; and the
   reward function's own `preflight(reward_kwargs) -> list[str]` when its module defines one (the Lean reward asks
   its backend: a Kimina server's /health, or that the REPL command exists; the MATH reward, given the model's
   rendered chat template, checks that `prompt_opens_think` matches it); vLLM's KV cache, where it is given in bytes,
   holds one sequence of the rollout's context (`sdpo_ext.startup.kv_cache`).

6. TTRL names (`ttrl_problems`): `sdpo.ttrl.theorem` or each of `sdpo.ttrl.theorems` names a row of the data
   file, looked up by `TheoremFilterDataset` itself (its "not found ... Closest names" message), not only once Ray
   has started the trainer.
7. The type and range of every value of the plugin's typed blocks, from their dataclasses
   (`sdpo_ext.startup.config_values`): `actor_rollout_ref.actor.sdpo.alpha=abc` or `=2.0` is named with what it takes.

When: `StartupChecks`, a Hydra callback the recipes install, runs 1-7 before verl's `main_ppo` body, hence
before Ray and before Hydra makes the run folder (so a refused run leaves none), and reports every problem in one
message ending in one `error:` line (exit code 2, bad input), the ones that block most first (CHECK_ORDER), so a
fresh machine learns all it lacks at once.
A check that raises is reported as one more problem, with the other checks still run: an exception in a callback
would otherwise be only a warning from Hydra, and Ray would start.
The callback runs 2 as well (`sdpo_refusals`); `SDPOTrainer.__init__` runs 1 (for runs started without the callback)
and 2 again, before any worker starts.
"""
from __future__ import annotations

import dataclasses
import difflib
import inspect
import io
import sys
import typing
from collections.abc import Callable, Iterator, Mapping
from contextlib import redirect_stderr, redirect_stdout
from functools import lru_cache
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf

from sdpo_ext.startup.attention import attention_problems
from sdpo_ext.startup.config_values import config_value_problems, target_dataclass
from sdpo_ext.startup.data_files import data_file_problems
from sdpo_ext.startup.kv_cache import kv_cache_problems
from sdpo_ext.startup.preflight import data_problems, generation_prompt, gpu_problems, model_problems, visible_gpus
from sdpo_ext.startup.small_host import TooFewCPUsError, check_cpu_budget
from sdpo_ext.startup.timeline import mark

PLUGIN_NAMESPACES = ("sdpo", "actor_rollout_ref.actor.sdpo", "data.sdpo_ttrl", "hydra")
# Keys verl reads but leaves out of its generated defaults (model_engine is a defaults-list choice).
VERL_UNLISTED_KEYS = ("model_engine", "reward.custom_reward_function.reward_kwargs", "reward.reward_kwargs")
# Sections verl reads but leaves out of its defaults, checked against a listed section of the same type:
# ref.optim is the reference's ActorConfig.optim, read when ref.fsdp_config.forward_only is false.
VERL_SECTION_ALIASES = {"actor_rollout_ref.ref.optim": "actor_rollout_ref.actor.optim"}
# verl hands this block to `ray.init(**block)` (main_ppo.run_ppo): its keys are ray.init's keyword arguments, not the
# two verl lists (`+ray_kwargs.ray_init.include_dashboard=false` is valid), and what is under them is free-form.
RAY_INIT_BLOCK = "ray_kwargs.ray_init"
REFUSED_EXIT_CODE = 2   # bad input: the exit code of every refusal of ours (docs/eval.md)


@lru_cache(maxsize=1)
def ray_init_keywords() -> tuple[str, ...]:
    """The keyword arguments `ray.init` takes (its `**kwargs` are Ray's private `_name` options)."""
    import ray

    return tuple(name for name in inspect.signature(ray.init).parameters if name != "kwargs")


def _aliased(path: str) -> str:
    for section, alias in VERL_SECTION_ALIASES.items():
        if path == section or path.startswith(section + "."):
            return alias + path[len(section):]
    return path


class UnknownConfigKeyError(ValueError):
    """A key in the composed config that neither verl nor sdpo-lean defines."""


@lru_cache(maxsize=1)
def verl_default_config() -> dict:
    """verl's full default PPO trainer config, unresolved (the keys a run may set)."""
    import verl

    path = Path(verl.__file__).parent / "trainer" / "config" / "_generated_ppo_trainer.yaml"
    return OmegaConf.to_container(OmegaConf.load(path), resolve=False)


def _walk(node: Any, prefix: str) -> Iterator[tuple[str, Any]]:
    if isinstance(node, dict):
        for key, value in node.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            yield path, value
            yield from _walk(value, path)


def _under(path: str, prefixes: tuple[str, ...]) -> bool:
    return any(path == prefix or path.startswith(prefix + ".") for prefix in prefixes)


def _container(config: DictConfig | dict) -> dict:
    return OmegaConf.to_container(config, resolve=False) if isinstance(config, DictConfig) else config


def unknown_keys(config: DictConfig | dict) -> list[tuple[str, list[str]]]:
    """[(dotted key, close matches)] for every key that verl's defaults do not define."""
    composed = _container(config)
    defaults = verl_default_config()
    problems = []
    for path, _ in _walk(composed, ""):
        if _under(path, PLUGIN_NAMESPACES + VERL_UNLISTED_KEYS):
            continue
        parent_path, _, leaf = _aliased(path).rpartition(".")
        if _under(parent_path, (RAY_INIT_BLOCK,)):
            keywords = ray_init_keywords()
            if parent_path == RAY_INIT_BLOCK and leaf not in keywords and not leaf.startswith("_"):
                problems.append((path, difflib.get_close_matches(leaf, keywords, n=3)))
            continue
        parent = defaults
        for part in parent_path.split(".") if parent_path else []:
            parent = parent.get(part) if isinstance(parent, dict) else None
            if parent is None:
                break
        if not isinstance(parent, dict) or not parent:
            continue  # under a free-form mapping, or under a key already reported
        if leaf not in parent:
            problems.append((path, difflib.get_close_matches(leaf, [str(k) for k in parent], n=3)))
    return problems


def _typed_unknown_keys(path: str, node: dict, cls: type) -> list[tuple[str, list[str]]]:
    """[(dotted key, close matches)] for the keys of `node` (read as dataclass `cls`) and of its nested blocks (a field
    whose type is a dataclass, e.g. RunConfig.ttrl -> TTRLConfig, or a nested `_target_`) that the dataclass lacks."""
    hints = typing.get_type_hints(cls)
    fields = [f.name for f in dataclasses.fields(cls)]
    problems = []
    for key, value in node.items():
        if key == "_target_":
            continue
        if key not in fields:
            problems.append((f"{path}.{key}", difflib.get_close_matches(str(key), fields, n=3)))
            continue
        inner = [a for a in (typing.get_args(hints[key]) or (hints[key],)) if dataclasses.is_dataclass(a)]
        if inner and isinstance(value, dict):
            nested = target_dataclass(str(value["_target_"])) if "_target_" in value else None
            problems += _typed_unknown_keys(f"{path}.{key}", value, nested or inner[0])
    return problems


def plugin_unknown_keys(config: DictConfig | dict) -> list[tuple[str, list[str]]]:
    """[(dotted key, close matches)] for keys of the plugin's typed blocks (a mapping with a `_target_` dataclass
    under PLUGIN_NAMESPACES, e.g. `actor_rollout_ref.actor.sdpo` -> SDPOConfig, `sdpo` -> RunConfig) and of their
    nested blocks (`sdpo.ttrl` -> TTRLConfig) that the dataclass lacks: a `+` override with a typo would otherwise
    end in a bare TypeError inside a Ray worker."""
    problems = []
    roots: list[str] = []   # the outermost typed blocks: a nested one is read with its parent
    for path, node in _walk(_container(config), ""):
        if isinstance(node, dict) and "_target_" in node and _under(path, PLUGIN_NAMESPACES) \
                and not _under(path, tuple(roots)):
            roots.append(path)
            cls = target_dataclass(str(node["_target_"]))
            problems += _typed_unknown_keys(path, node, cls) if cls is not None else []
    return problems


def check_config_keys(config: DictConfig | dict) -> None:
    """Raise UnknownConfigKeyError listing every key of `config` that neither verl nor our dataclasses know,
    with the closest names."""
    recipe = config.get("recipe", None)
    if isinstance(recipe, str):
        raise UnknownConfigKeyError(
            f"`+recipe={recipe}` was taken as a plain value: Hydra found no `recipe` group. "
            "Is sdpo-lean installed (pip install -e .) in this Python environment?"
        )
    composed = _container(config)   # once, for both walks
    problems = unknown_keys(composed) + plugin_unknown_keys(composed)
    if problems:
        lines = [f"  {key}" + (f"  (did you mean: {', '.join(m)}?)" if m else "") for key, m in problems]
        raise UnknownConfigKeyError(
            "Unknown config keys (typo in a recipe or a `+` override?):\n" + "\n".join(lines)
        )


def sdpo_setting_errors(config: Mapping[str, Any], grpo_weight: float) -> list[str]:
    """Problems with `config` (verl's composed config) for an SDPO run; empty when it is fine."""
    arr = config["actor_rollout_ref"]
    actor, model = arr["actor"], arr["model"]
    errors = []
    if actor.get("use_kl_loss", False):
        errors.append("actor_rollout_ref.actor.use_kl_loss=true: the reference slot holds the SDPO teacher, so this "
                      "would be a KL to the teacher, not to the initial policy (set it false)")
    if (config.get("algorithm") or {}).get("use_kl_in_reward", False):
        errors.append("algorithm.use_kl_in_reward=true: the reference slot holds the SDPO teacher, so this would "
                      "penalise distance to the teacher, not to the initial policy (set it false)")
    if float(actor.get("entropy_coeff", 0.0) or 0.0) != 0.0 and grpo_weight == 0.0:
        errors.append("actor_rollout_ref.actor.entropy_coeff != 0 has no effect on pure SDPO (only the hybrid, "
                      "sdpo.grpo_weight > 0, adds verl's PPO loss with its entropy term)")
    if model.get("use_fused_kernels", False):
        errors.append("actor_rollout_ref.model.use_fused_kernels=true: verl's fused forward never hands the logits "
                      "to the SDPO divergence hook (set it false)")
    return errors


def sdpo_refusals(config: DictConfig) -> list[str]:
    """`sdpo_setting_errors` of a run whose actor selects the SDPO loss (as `SDPOTrainer.__init__` asks them), here
    before Ray; a mistyped grpo_weight is left to config_values and read as 0."""
    from sdpo_ext.config import sdpo_loss_selected  # imports verl

    actor = OmegaConf.select(config, "actor_rollout_ref.actor")
    if actor is None or not sdpo_loss_selected(actor.get("policy_loss") or {}):
        return []
    weight = OmegaConf.select(config, "actor_rollout_ref.actor.sdpo.grpo_weight", default=0.0)
    ok = isinstance(weight, (int, float)) and not isinstance(weight, bool)
    return sdpo_setting_errors(config, float(weight) if ok else 0.0)


def reward_problems(config: DictConfig | dict) -> list[str]:
    """What the reward function's `preflight(reward_kwargs)` reports (nothing when its module defines none); a
    preflight that takes `generation_prompt` also gets the model's rendered chat template (None when not local)."""
    function = (config.get("reward") or {}).get("custom_reward_function") or {}
    if not function.get("path"):
        return []
    path = str(function["path"])
    if not path.startswith("pkg://") and not Path(path).expanduser().is_file():
        return [f"reward.custom_reward_function.path={path} is not a file (point it at the reward's module, e.g. "
                "reward.custom_reward_function.path=pkg://reward.lean)"]
    from verl.utils.import_utils import load_module  # how verl itself loads the reward function's module

    preflight = getattr(load_module(path), "preflight", None)
    if preflight is None:
        return []
    kwargs = function.get("reward_kwargs") or {}
    if isinstance(kwargs, DictConfig):
        kwargs = OmegaConf.to_container(kwargs, resolve=True)
    if "generation_prompt" not in inspect.signature(preflight).parameters:
        return list(preflight(dict(kwargs)))
    return list(preflight(dict(kwargs), generation_prompt=generation_prompt(config)))


def _run_settings(config: DictConfig) -> Any:
    """The typed `sdpo` block (`sdpo_ext.config.RunConfig`), or None without one or when it holds a key the dataclass
    lacks (UnknownConfigKeyError names it, with the closest names) or a mistyped value (ConfigValue names it)."""
    # not at the top: sdpo_ext.config imports verl, whose plugin loading imports the trainer, which imports this module
    from sdpo_ext.config import run_config

    try:
        return run_config(config)
    except ValueError:
        return None


def _ttrl_active(config: DictConfig) -> bool:
    settings = _run_settings(config)
    return settings is not None and settings.ttrl is not None and settings.ttrl.active


def data_content_problems(config: DictConfig) -> list[str]:
    """`sdpo_ext.startup.data_files.data_file_problems` for this run (extra_info.name is needed with TTRL)."""
    return data_file_problems(config, _ttrl_active(config))


def ttrl_problems(config: DictConfig) -> list[str]:
    """The TTRL names (`sdpo.ttrl.theorem` / `.theorems`) that `TheoremFilterDataset` does not find in the data
    files, with its closest names; nothing to check without TTRL, or while a file is missing (data_problems)."""
    from sdpo_ext.ttrl.dataset import TheoremFilterDataset, ttrl_data_config

    settings = _run_settings(config)
    ttrl = settings.ttrl if settings is not None else None
    if ttrl is None or not ttrl.active or ttrl.split is not None:
        return []
    data = OmegaConf.to_container(config.data, resolve=True)
    data.update(sdpo_ttrl=ttrl_data_config(ttrl, data), filter_overlong_prompts=False)
    files = data["sdpo_ttrl"].get("files") or data["train_files"]
    files = [files] if isinstance(files, str) else list(files)
    if not all(Path(f).expanduser().is_file() for f in files):
        return []
    key = "sdpo.ttrl.theorem" if ttrl.theorem else "sdpo.ttrl.theorems"
    try:
        with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):  # its length, the loader's progress
            TheoremFilterDataset(files, tokenizer=None, config=OmegaConf.create(data))
    except ValueError as e:
        return [f"{key}: {e} (give {key} names of the data file, e.g. one of the closest)"]
    return []


def _raised(check: Callable[[DictConfig], None]) -> Callable[[DictConfig], list[str]]:
    """A check that raises its one problem, as a check that returns it."""
    def problems(config: DictConfig) -> list[str]:
        try:
            check(config)
        except (UnknownConfigKeyError, TooFewCPUsError) as e:
            return [str(e)]
        return []
    return problems


def startup_problems(config: DictConfig) -> list[str]:
    """Every problem the checks that need no Ray find, each as one line (its check's name first), those that block
    most first: no GPU, too few CPUs, a missing attention package, model, data, Lean backend, TTRL names, config
    values, then typos. A check
    that raises is one more problem; the others still run."""
    checks: tuple[tuple[str, Callable[[DictConfig], list[str]]], ...] = (
        ("NotEnoughGPUs", lambda cfg: gpu_problems(cfg, visible_gpus())),
        ("TooFewCPUsError", _raised(check_cpu_budget)),
        ("Attention", attention_problems),
        ("ModelNotFound", model_problems),
        ("KVCache", kv_cache_problems),
        ("MissingData", data_problems),
        ("BadData", data_content_problems),
        ("RewardBackend", reward_problems),
        ("TTRLName", ttrl_problems),
        ("ConfigValue", config_value_problems),
        ("SDPOSetting", sdpo_refusals),
        ("UnknownConfigKeyError", _raised(check_config_keys)),
    )
    problems: list[str] = []
    for name, check in checks:
        try:
            found = check(config)
        except Exception as e:  # noqa: BLE001 - reported with the others, never a Hydra warning before Ray starts
            found = [f"the check stopped on {type(e).__name__}: {e} (fix the value it names)"]
        problems += [f"{name}: {problem}" for problem in found]
    return problems


class StartupChecks(Callback):
    """Hydra callback (recipes: `hydra.callbacks.sdpo_lean_startup`): checks that need no Ray, run before it."""

    def on_run_start(self, config: DictConfig, **kwargs: Any) -> None:
        """Hydra's hook before a single run: stop on any start-up problem."""
        # before Hydra makes the run folder (run_job makes it, then calls on_job_start): a refused run leaves none
        _stop_on_problems(config)

    def on_job_start(self, config: DictConfig, **kwargs: Any) -> None:
        """Hydra's hook before each job: in a multirun, stop on any start-up problem of that job."""
        # a multirun's jobs have no on_run_start; their folders are the launcher's
        if config.hydra.mode == RunMode.MULTIRUN:
            _stop_on_problems(config)


def _stop_on_problems(config: DictConfig) -> None:
    # Hydra 1.3 turns a callback's Exception into a warning and runs the job anyway; SystemExit is no Exception, so
    # it stops the run here, with the message on stderr and exit code 2 (bad input, as every CLI of ours).
    mark("preflight_start")
    problems = startup_problems(config)
    if problems:
        print(problems_message(problems), file=sys.stderr, flush=True)
        raise SystemExit(REFUSED_EXIT_CODE)
    mark("preflight_done")


def problems_message(problems: list[str]) -> str:
    """The one message a refused run prints: every problem, one line each, then the one `error:` line every CLI of
    ours ends a refusal with (docs/eval.md)."""
    listed = "\n".join(f"- {p}" for p in problems)
    return (f"sdpo-lean found {len(problems)} problem(s) before starting:\n{listed}\n"
            f"error: the run was refused before starting ({len(problems)} problem(s) above: fix each, then run again)")
