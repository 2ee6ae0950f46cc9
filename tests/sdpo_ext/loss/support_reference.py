"""Test oracle: the student/teacher log-probs on one support, as the loss hook picks them, in one function.

Only tests call this (production code holds no test-only function): `sdpo_ext.loss_hook` composes the same
`student_topk` / `gather_logp` / `full_log_softmax` calls per `sdpo.distillation_mode`. Load it with
`importlib.util.spec_from_file_location` (the suite imports test files in importlib mode, not as packages).
"""
from __future__ import annotations

import torch

from sdpo_ext.loss.logprobs import full_log_softmax, gather_logp, student_topk


def topk_support(
    student_logits: torch.Tensor,
    teacher_logits: torch.Tensor,
    k: int | None,
    temperature: float = 1.0,
    chunk_rows: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """(student_logp, teacher_logp), both [N, k] fp32 (or [N, V] when ``k`` is None).

    Both are log_softmax(logits / T) over the FULL vocabulary; with top-K, the ids are the
    student's top-k and the teacher is gathered at the same ids. The teacher side is computed
    without autograd. ``chunk_rows`` bounds the fp32 working set to chunk_rows × V.
    """
    if k is None:
        student = full_log_softmax(student_logits, temperature, chunk_rows)
        with torch.no_grad():
            teacher = full_log_softmax(teacher_logits.detach(), temperature, chunk_rows)
        return student, teacher
    student, ids = student_topk(student_logits, k, temperature, chunk_rows)
    with torch.no_grad():
        teacher = gather_logp(teacher_logits.detach(), ids, temperature, chunk_rows)
    return student, teacher
