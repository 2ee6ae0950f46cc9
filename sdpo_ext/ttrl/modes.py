"""How `sdpo.ttrl` names its problems, and what that mode sets (stdlib only).

One rule for the typed block (`sdpo_ext.config.TTRLConfig`) and for the recipes' resolvers (`sdpo_ext.resolvers`:
`sdpo.ttrl_pick`, `sdpo.ttrl_prompts`), which read the raw block before any dataclass exists. Pure, so that both can
import it at the top: `sdpo_ext.config` imports verl, and verl's plugin loading runs the resolvers' registration.
"""
from __future__ import annotations

from typing import Any, Optional

TTRL_SPLITS = ("train", "val")
"""The values of `sdpo.ttrl.split`: every problem of `data.train_files` or of `data.val_files`."""
PROTOCOLS = ("shared", "single")
"""The values of `sdpo.ttrl.protocol`: a set trained in one model (shared) or one problem at a time from the initial
state (single; `sdpo_ext.ttrl.queue`)."""


def ttrl_mode(theorem: Any, theorems: Any, split: Any) -> Optional[str]:
    """How `sdpo.ttrl` names its problems: "theorem", "theorems", "split", or None (full-dataset training). Never
    raises: `TTRLConfig` refuses two at once; here the first one named wins."""
    for mode, value in (("theorem", theorem), ("theorems", theorems), ("split", split)):
        if value not in (None, "", "null", "None"):
            return mode
    return None


def ttrl_prompts_per_step(theorem: Any, theorems: Any, split: Any, full_batch_size: int,
                          protocol: Any = "shared") -> int:
    """`data.train_batch_size` for the mode: one theorem, or any set under the single protocol, 1 (the paper's TTRL:
    1 question × n samples), a list one per problem up to `full_batch_size`, a split or full-dataset training
    `full_batch_size`. With one prompt slot per
    problem every problem of a small set gets n attempts a step, the pace of single-theorem TTRL; the set's draw keeps
    the batch this size as problems retire (`sdpo_ext.ttrl.problem_set`)."""
    mode = ttrl_mode(theorem, theorems, split)
    if mode == "theorem" or (mode is not None and protocol == "single"):
        return 1
    if mode == "theorems":
        return max(1, min(len(theorems), int(full_batch_size)))
    return int(full_batch_size)
