"""The per-sample SDPO fields the driver hands the worker's loss hook each step (pure: torch, sdpo_ext's pure core and
the sample record `sdpo_ext.judged`).

From one step's judged samples (`JudgedSample`), B of them in TransferQueue order:
- `teacher_prompt_ids` (nested [B, *]): the teacher prompt (sdpo_ext.teacher.reprompt); a sample without a teacher
  forward keeps its student prompt there, a placeholder the hook never reads;
- `sdpo_mask` [B]: 1 where the teacher is run: the sample has a teacher signal and a distillation weight > 0;
- `sdpo_distill_weight`, `sdpo_pg_weight` [B]: the variant's routing of each sample (sdpo_ext.loss.routing);
- with `sdpo.teacher.share_prompt_prefix` also `TEACHER_PREFIX_LEN` [B]: each sample's teacher-prompt prefix shared
  with its group (sdpo_ext.teacher.shared_prefix).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import torch

from sdpo_ext.judged import JudgedSample
from sdpo_ext.loss.packed_rows import jagged
from sdpo_ext.loss.routing import sample_weights
from sdpo_ext.teacher.reprompt import build_teacher_batch
from sdpo_ext.teacher.shared_prefix import TEACHER_PREFIX_LEN, group_prefix_lengths

if TYPE_CHECKING:
    from sdpo_ext.config import SDPOConfig


def teacher_fields(
    tokenizer: Any,
    cfg: SDPOConfig,
    samples: Sequence[JudgedSample],
    *,
    messages: list[list[dict]],
    prompts: Sequence[torch.Tensor],
    chat_template_kwargs: dict,
) -> tuple[dict[str, torch.Tensor], dict[str, float]]:
    """B judged samples (GRPO uid, score, decoded response, feedback; a masked one gets no teacher) with their student
    messages and prompt ids -> (the fields above, the step's `self_distillation/` and `sdpo_lean/` metrics)."""
    uids = [s.uid for s in samples]
    infra = [s.masked for s in samples]
    teacher = build_teacher_batch(
        tokenizer,
        messages,
        uids=uids,
        scores=[s.score for s in samples],
        responses=[s.text for s in samples],
        feedbacks=[s.feedback for s in samples],
        infra=infra,
        cfg=cfg.reprompt,
        chat_template_kwargs=chat_template_kwargs,
    )
    metrics = dict(teacher.metrics)
    weights = sample_weights(cfg.variant, uids, [s.success for s in teacher.signals], infra)
    # a sample whose distillation weight is 0 (SRPO's correct samples, SC-SDPO's solved or unsolved groups)
    # needs no teacher forward
    mask = [active and w > 0 for active, w in zip(teacher.mask, weights.distill)]
    metrics["sdpo_lean/distilled_sample_fraction"] = sum(mask) / max(1, len(mask))
    routed_to_pg = sum(w > 0 for w in weights.policy_gradient)
    metrics["sdpo_lean/policy_gradient_sample_fraction"] = routed_to_pg / max(1, len(mask))
    rows = [
        torch.tensor(ids, dtype=torch.int64) if ids is not None else prompt  # masked: placeholder, never used
        for ids, prompt in zip(teacher.prompt_ids, prompts)
    ]
    fields = {
        "teacher_prompt_ids": jagged(rows),
        "sdpo_mask": torch.tensor(mask, dtype=torch.float32),
        "sdpo_distill_weight": torch.tensor(weights.distill, dtype=torch.float32),
        "sdpo_pg_weight": torch.tensor(weights.policy_gradient, dtype=torch.float32),
    }
    if cfg.teacher.share_prompt_prefix:
        shared = group_prefix_lengths(teacher.prompt_ids, uids, mask)
        fields[TEACHER_PREFIX_LEN] = torch.tensor(shared, dtype=torch.int64)
        teacher_tokens = sum(len(ids) for ids, on in zip(teacher.prompt_ids, mask) if on)
        computed_once = sum(length for _, length in set(zip(uids, shared)))
        metrics["sdpo_lean/teacher_prompt_reused_fraction"] = (sum(shared) - computed_once) / max(1, teacher_tokens)
    return fields, metrics
