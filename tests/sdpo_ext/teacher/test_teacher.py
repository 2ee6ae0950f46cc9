"""EMA and trust-region teacher updates against their closed forms."""

import pytest
import torch

from sdpo_ext.teacher.weights import ema_update_, trust_region_logits


def test_ema_closed_form_after_n_updates():
    # constant student s, teacher t0: after n updates t_n = s + (1-r)^n (t0 - s)
    rate, n = 0.05, 30
    t0 = torch.tensor([1.0, -2.0, 4.0], dtype=torch.float64)
    s = torch.tensor([0.0, 1.0, 1.0], dtype=torch.float64)
    teacher = [t0.clone(), t0[:2].clone()]
    student = [s.clone(), s[:2].clone()]
    for _ in range(n):
        ema_update_(teacher, student, rate)
    torch.testing.assert_close(teacher[0], s + (1 - rate) ** n * (t0 - s))
    torch.testing.assert_close(teacher[1], s[:2] + (1 - rate) ** n * (t0[:2] - s[:2]))
    torch.testing.assert_close(student[0], s)  # the student is untouched


def test_ema_on_parameters_with_other_dtype_and_grad():
    teacher = torch.nn.Linear(3, 2).double()
    student = torch.nn.Linear(3, 2).to(torch.bfloat16)
    before = [p.detach().clone() for p in teacher.parameters()]
    ema_update_(teacher.parameters(), student.parameters(), 0.25)
    for t, b, s in zip(teacher.parameters(), before, student.parameters()):
        assert t.dtype == torch.float64
        torch.testing.assert_close(t.detach(), 0.75 * b + 0.25 * s.detach().double())
        assert t.grad is None


@pytest.mark.gpu
def test_ema_with_host_teacher_and_gpu_student_updates_the_host_copy():
    """verl's reference slot is CPU-offloaded: the lerp runs on the GPU and the result lands back on the host."""
    t0 = torch.randn(1000, dtype=torch.float32)
    teacher = t0.clone()
    student = torch.randn(1000, device="cuda").to(torch.bfloat16)
    ema_update_([teacher], [student], 0.05)
    assert teacher.device.type == "cpu"
    torch.testing.assert_close(teacher, torch.lerp(t0, student.float().cpu(), 0.05))


def test_ema_rate_edges_and_errors():
    t, s = torch.ones(2), torch.zeros(2)
    ema_update_([t], [s], 0.0)
    assert t.tolist() == [1.0, 1.0]
    ema_update_([t], [s], 1.0)
    assert t.tolist() == [0.0, 0.0]
    with pytest.raises(ValueError, match="parameters"):
        ema_update_([t, t], [s], 0.1)
    with pytest.raises(ValueError, match="shape"):
        ema_update_([t], [torch.zeros(3)], 0.1)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        ema_update_([t], [s], 1.5)


def test_trust_region_logits():
    ref = torch.tensor([[1.0, 2.0, 3.0]])
    student = torch.tensor([[3.0, 2.0, -1.0]], requires_grad=True)
    out = trust_region_logits(ref, student, 0.25)
    torch.testing.assert_close(out, ref + 0.25 * (student.detach() - ref))
    assert not out.requires_grad
    torch.testing.assert_close(trust_region_logits(ref, student, 0.0), ref)
    torch.testing.assert_close(trust_region_logits(ref, student, 1.0), student.detach())
    # r-mixing of logits is a geometric mixture of the two distributions
    p = torch.softmax(trust_region_logits(ref, student, 0.3), -1)
    q = torch.softmax(ref, -1) ** 0.7 * torch.softmax(student.detach(), -1) ** 0.3
    torch.testing.assert_close(p, q / q.sum())
    with pytest.raises(ValueError, match="shapes"):
        trust_region_logits(ref, torch.zeros(1, 4), 0.1)
