"""Teacher weights: EMA of the student and the trust-region logit mix (settings: `sdpo_ext.config.SDPOTeacherConfig`).

Modes: ``ema`` θ_T ← (1−r)·θ_T + r·θ_S after each policy update (authors' default, r = 0.05);
``trust_region`` teacher logits = ref + r·(student − ref) with a frozen reference (authors'
"trust-region"); ``frozen`` the initial policy; ``live`` the current student itself (the paper's
unregularised teacher, which diverged in its Table 4; kept for ablations).
"""

from __future__ import annotations

from collections.abc import Iterable

import torch

TEACHER_MODES = ("ema", "trust_region", "frozen", "live")


def _check_rate(rate: float) -> float:
    rate = float(rate)
    if not 0.0 <= rate <= 1.0:  # also rejects NaN
        raise ValueError(f"teacher update rate must be in [0, 1], got {rate}")
    return rate


@torch.no_grad()
def ema_update_(teacher_params: Iterable[torch.Tensor], student_params: Iterable[torch.Tensor], rate: float) -> None:
    """In place: θ_T ← (1−rate)·θ_T + rate·θ_S for each pair, computed in the teacher's dtype on the
    *student's* device, then copied back when the teacher lives elsewhere. The SDPO recipes keep the teacher on
    the GPU; with verl's default CPU-offloaded reference (`ref.fsdp_config.forward_only=true`) a lerp on the host
    costs seconds a step instead of milliseconds (bench/step_time/README.md, full verl runs), hence the device choice.
    Keep an fp32 teacher when rate is small: bf16 cannot hold a 1% step of a small difference."""
    rate = _check_rate(rate)
    teacher = list(teacher_params)
    student = list(student_params)
    if len(teacher) != len(student):
        raise ValueError(f"teacher has {len(teacher)} parameters, student {len(student)}")
    for i, (t, s) in enumerate(zip(teacher, student)):
        if t.shape != s.shape:
            raise ValueError(f"parameter {i}: teacher shape {tuple(t.shape)} != student shape {tuple(s.shape)}")
    if rate == 0.0:
        return
    for t, s in zip(teacher, student):
        s = s.detach()
        work = t.detach().to(device=s.device)  # t itself (no copy) when both share a device
        work.lerp_(s.to(dtype=t.dtype), rate)
        if work.data_ptr() != t.data_ptr():
            t.copy_(work, non_blocking=False)


def trust_region_logits(reference_logits: torch.Tensor, student_logits: torch.Tensor, rate: float) -> torch.Tensor:
    """Teacher logits ref + rate·(student − ref) (authors' torch.lerp of the two models' logits on
    the teacher input); both sides detached: the teacher is a constant."""
    rate = _check_rate(rate)
    if reference_logits.shape != student_logits.shape:
        raise ValueError(f"logit shapes differ: {tuple(reference_logits.shape)} vs {tuple(student_logits.shape)}")
    dtype = torch.promote_types(reference_logits.dtype, student_logits.dtype)
    return torch.lerp(reference_logits.detach().to(dtype), student_logits.detach().to(dtype), rate)
