"""The start-up check of the attention implementation (sdpo_ext.startup.checks.attention_problems): the chosen one
must be known to transformers and its package importable, before Ray starts."""
from __future__ import annotations

import importlib.util
import re

import pytest

from sdpo_ext.startup import attention as attention_check
from sdpo_ext.startup import checks as startup_checks
from sdpo_ext.startup.attention import attention_problems
from sdpo_ext.startup.checks import StartupChecks


def config(impl: str | None) -> dict:
    override = {} if impl is None else {"attn_implementation": impl}
    return {"actor_rollout_ref": {"model": {"override_config": override}}}


@pytest.fixture
def without(monkeypatch):
    """Make importlib.util.find_spec answer None for the given top-level modules (as on a machine without them)."""
    real = importlib.util.find_spec

    def hide(*modules: str) -> None:
        monkeypatch.setattr(attention_check.importlib.util, "find_spec",
                            lambda name, *a: None if name.split(".")[0] in modules else real(name, *a))
    return hide


def test_verls_default_flash_attention_2_without_flash_attn_names_the_key_and_the_fixes(without):
    without("flash_attn", "kernels")
    for cfg in (config(None), config("flash_attention_2")):
        (problem,) = attention_problems(cfg)
        assert problem.startswith("actor_rollout_ref.model.override_config.attn_implementation is flash_attention_2")
        assert "flash-attn" in problem and "sdpa_varlen on CPU" in problem and "fa4_varlen on Hopper" in problem


def test_our_fa4_varlen_needs_flash_attn_4_itself_not_a_hub_kernel(monkeypatch):
    monkeypatch.setattr(attention_check, "_installed", lambda module, dist: False)
    (problem,) = attention_problems(config("fa4_varlen"))
    assert "fa4_varlen, which needs the flash-attn-4 package" in problem and "choose fa4_varlen" not in problem
    assert problem.endswith("++actor_rollout_ref.model.override_config.attn_implementation=sdpa_varlen)")
    monkeypatch.setattr(attention_check, "_installed", lambda module, dist: dist == "flash-attn-4")
    assert attention_problems(config("fa4_varlen")) == []


def test_flash_attention_4_needs_its_own_distribution(without, monkeypatch):
    without("kernels")
    monkeypatch.setattr(attention_check, "_installed", lambda module, dist: dist == "flash-attn")  # only FA2 here
    (problem,) = attention_problems(config("flash_attention_4"))
    assert "flash-attn-4" in problem and "choose flash_attention_4" not in problem
    assert attention_problems(config("flash_attention_2")) == []


def test_the_kernels_package_is_transformers_fallback_for_flash_attention(without, monkeypatch):
    monkeypatch.setattr(attention_check, "_installed", lambda module, dist: False)
    monkeypatch.setattr(attention_check.importlib.util, "find_spec", lambda name, *a: object())  # kernels present
    assert attention_problems(config("flash_attention_2")) == []


def test_implementations_that_need_no_package_pass_and_a_typo_gets_a_suggestion():
    import sdpo_ext.plugin  # noqa: F401  (registers sdpa_varlen)

    for impl in ("sdpa", "eager", "sdpa_varlen", "flex_attention", "kernels-community/flash-attn2"):
        assert attention_problems(config(impl)) == [], impl
    (problem,) = attention_problems(config("sdpa_varlne"))
    assert "did you mean: sdpa_varlen" in problem
    assert attention_problems({"data": {}}) == []  # no model configured: nothing to check


def test_the_hydra_callback_stops_the_run_before_ray(without, monkeypatch, capsys):
    from omegaconf import OmegaConf

    without("flash_attn", "kernels")
    for other in ("check_config_keys", "check_cpu_budget"):  # the callback's other checks want a whole config
        monkeypatch.setattr(startup_checks, other, lambda cfg: None)
    for other in ("gpu_problems", "data_problems", "model_problems", "reward_problems", "ttrl_problems"):
        monkeypatch.setattr(startup_checks, other, lambda *args: [])
    cfg = OmegaConf.create({"actor_rollout_ref": {"model": {"override_config": {}}}})
    with pytest.raises(SystemExit):
        StartupChecks().on_run_start(cfg)
    assert re.search("Attention: .*flash_attention_2", capsys.readouterr().err)


def packed(impl: str) -> dict:
    cfg = config(impl)
    cfg["actor_rollout_ref"]["model"]["use_remove_padding"] = True
    return cfg


@pytest.mark.parametrize("version, refused", [("4.0.0b36", True), ("4.0.0b38", True), ("4.0.0b39", False),
                                              ("4.0.0b40", False), ("4.0.0", False), ("4.1.0", False)])
def test_flash_attention_4_packed_with_a_flash_attn_4_older_than_b39_is_the_known_hopper_failure(
        monkeypatch, version, refused):
    """transformers hands flash-attn-4 packed rows' length bounds as tensors; before 4.0.0b39 flash-attn-4 drops them
    only on Blackwell, so on Hopper the first forward fails ("Expected IntTuple ..."; H200, 2026-12-05)."""
    monkeypatch.setattr(attention_check, "_installed", lambda module, dist: dist == "flash-attn-4")
    monkeypatch.setattr(attention_check.importlib.metadata, "version", lambda dist: version)
    problems = attention_problems(packed("flash_attention_4"))
    assert bool(problems) == refused
    if refused:
        assert f"flash-attn-4 {version}" in problems[0] and "pip install flash-attn-4==4.0.0b40" in problems[0]
        assert "fa4_varlen" in problems[0]
    assert attention_problems(config("flash_attention_4")) == []  # not packed: the bounds are not tensors
    assert attention_problems(packed("fa4_varlen")) == []  # ours passes integers with any version


def test_the_install_hint_pins_the_flash_attn_4_that_ran_packed_on_hopper(monkeypatch):
    monkeypatch.setattr(attention_check, "_installed", lambda module, dist: False)
    (problem,) = attention_problems(config("fa4_varlen"))
    assert "pip install flash-attn-4==4.0.0b40" in problem
