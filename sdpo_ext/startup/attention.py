"""Start-up check of the attention implementation, before Ray: `actor_rollout_ref.model.override_config.
attn_implementation` (verl's default flash_attention_2) must be one transformers knows, and its package must be
importable here. A missing flash-attn would otherwise surface minutes later, inside a Ray worker, as an import error
in the model; so would flash_attention_4 on packed rows with a flash-attn-4 older than 4.0.0b39 (Hopper). Which
implementation runs where: docs/training.md, "Attention and packed sequences".
"""
from __future__ import annotations

import difflib
import importlib.metadata
import importlib.util
from collections.abc import Mapping
from typing import Any

ATTENTION_KEY = "actor_rollout_ref.model.override_config.attn_implementation"
VERL_DEFAULT_ATTENTION = "flash_attention_2"  # verl/workers/config/model.py: override_config.get(..., this)
# What each flash-attention implementation imports (transformers 5.9: is_flash_attn_*_available), and how to get it.
FLASH_ATTENTION_PACKAGES = {
    "flash_attention_2": ("flash_attn", "flash-attn", "pip install flash-attn (a CUDA build)"),
    "flash_attention_3": ("flash_attn_interface", "flash-attn-3", "build flash-attention's hopper/ folder"),
    "flash_attention_4": ("flash_attn", "flash-attn-4", "pip install flash-attn-4==4.0.0b40 (Hopper or Blackwell)"),
}
# flash-attn-4 before 4.0.0b39 drops tensor length bounds only on Blackwell; transformers passes packed rows' bounds as
# tensors, so flash_attention_4 on packed rows fails on Hopper ("Expected IntTuple ...", bench/step_time/README.md)
FA4_PACKED_HOPPER_MIN = (4, 0, 0, 39)


def _fa4_release(version: str) -> tuple[int, ...]:
    """'4.0.0b36' -> (4, 0, 0, 36); a final release sorts after its betas: '4.0.0' -> (4, 0, 0, 10**9)."""
    main, _, beta = version.partition("b")
    numbers = tuple(int(x) for x in main.split(".")[:3] if x.isdigit())
    return numbers + (int(beta) if beta.isdigit() else 10**9,)


def _fa4_packed_problem(impl: str, model: Mapping[str, Any]) -> str | None:
    """The known failure of transformers' flash_attention_4 on packed rows with a flash-attn-4 older than b39."""
    if impl != "flash_attention_4" or not model.get("use_remove_padding", False):
        return None
    try:
        version = importlib.metadata.version("flash-attn-4")
    except importlib.metadata.PackageNotFoundError:
        return None
    if _fa4_release(version) >= FA4_PACKED_HOPPER_MIN:
        return None
    return (f"{ATTENTION_KEY} is flash_attention_4 with flash-attn-4 {version} and packed rows "
            f"(use_remove_padding): before 4.0.0b39 it fails on Hopper at the first forward (\"Expected IntTuple\"); "
            f"pip install flash-attn-4==4.0.0b40, or ++{ATTENTION_KEY}=fa4_varlen (the same kernel with integer "
            f"bounds, any version)")


def _alternatives(impl: str) -> str:
    """The other implementations, and the override that picks the first: `++` sets the key whether or not the
    recipe lists it (verl's default is not in its config)."""
    others = [(name, where) for name, where in (("fa4_varlen", " on Hopper/Blackwell"), ("sdpa_varlen", " on CPU"),
                                                ("sdpa", "")) if name != impl]
    return ", ".join(name + where for name, where in others) + f": ++{ATTENTION_KEY}={others[0][0]}"


def _installed(module: str, distribution: str) -> bool:
    if importlib.util.find_spec(module) is None:
        return False
    try:
        importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def attention_problems(config: Mapping[str, Any]) -> list[str]:
    """Why the attention the run asks for cannot run here; empty when it can (or no model is configured).

    A flash-attention implementation needs its package, or the `kernels` package, from which transformers then
    fetches a hub build of the kernel instead (modeling_utils: FLASH_ATTN_KERNEL_FALLBACK)."""
    from transformers import AttentionInterface

    from sdpo_ext.attention import fa4

    model = (config.get("actor_rollout_ref") or {}).get("model")
    if not model:
        return []
    impl = (model.get("override_config") or {}).get("attn_implementation", VERL_DEFAULT_ATTENTION)
    ours = impl == fa4.ATTN_IMPLEMENTATION  # flash-attn-4's kernel, called by us: no hub-kernel fallback
    if ours or impl in FLASH_ATTENTION_PACKAGES:
        module, distribution, install = FLASH_ATTENTION_PACKAGES["flash_attention_4" if ours else impl]
        if not _installed(module, distribution) and (ours or importlib.util.find_spec("kernels") is None):
            return [f"{ATTENTION_KEY} is {impl}, which needs the {distribution} package, which this Python cannot "
                    f"import ({install}; or choose {_alternatives(impl)})"]
        known_failure = _fa4_packed_problem(impl, model)
        return [known_failure] if known_failure else []
    known = ["eager", *AttentionInterface._global_mapping]
    if impl in known or "/" in str(impl):  # "org/repo" names a hub kernel, which transformers fetches itself
        return []
    close = difflib.get_close_matches(str(impl), known, n=3)
    return [f"{ATTENTION_KEY} is {impl}, not an attention implementation transformers knows"
            + (f" (did you mean: {', '.join(close)}?)" if close else f" (choose {_alternatives(impl)})")]
