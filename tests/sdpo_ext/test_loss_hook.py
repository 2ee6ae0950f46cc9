"""SDPOLoss as verl's FSDP engine calls it (logits hook, then loss), on a tiny random Llama on CPU.

The micro-batch is built the way verl's agent loop + TransferQueue deliver it (nested input_ids / prompts /
responses, nested response-length old_log_probs) and the teacher callable runs the same model on
[teacher prompt | response]. Checked: the hook's per-token divergence equals a direct per-sample computation,
masked samples contribute nothing, and gradients reach the student logits.
"""
from __future__ import annotations

import pytest
import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode
from transformers import LlamaConfig, LlamaForCausalLM
from verl.utils import tensordict_utils as tu
from verl.utils.torch_functional import logprobs_from_logits
from verl.workers.config import PolicyLossConfig

from sdpo_ext.config import SDPOActorConfig, SDPOConfig
from sdpo_ext.loss.divergence import divergence
from sdpo_ext.loss.logprobs import gather_logp, student_topk
from sdpo_ext.loss_hook import SDPOLoss

VOCAB = 64


def nested(rows):
    return torch.nested.as_nested_tensor(rows, layout=torch.jagged)


def tiny_llama() -> LlamaForCausalLM:
    """A tiny random Llama on CPU: the `model` fixture of tests/sdpo_ext/conftest.py."""
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128)
    return LlamaForCausalLM(cfg).eval()


def forward_logits(model, seq: torch.Tensor) -> torch.Tensor:
    return model(input_ids=seq.unsqueeze(0), use_cache=False).logits.squeeze(0)


def make_batch(mask, distill_weight=None, pg_weight=None):
    g = torch.Generator().manual_seed(1)
    prompts = [torch.randint(0, VOCAB, (n,), generator=g) for n in (5, 3, 6)]
    responses = [torch.randint(0, VOCAB, (n,), generator=g) for n in (4, 6, 2)]
    teacher_prompts = [torch.cat([p, torch.randint(0, VOCAB, (k,), generator=g)]) for p, k in zip(prompts, (3, 5, 2))]
    data = tu.get_tensordict({
        "input_ids": nested([torch.cat([p, r]) for p, r in zip(prompts, responses)]),
        "prompts": nested(prompts),
        "responses": nested(responses),
        "response_mask": nested([torch.ones(len(r), dtype=torch.int64) for r in responses]),
        "old_log_probs": nested([torch.full((len(r),), -2.0) for r in responses]),
        "teacher_prompt_ids": nested(teacher_prompts),
        "sdpo_mask": torch.tensor(mask, dtype=torch.float32),
        "sdpo_distill_weight": torch.tensor(distill_weight or [1.0] * len(mask)),
        "sdpo_pg_weight": torch.tensor(pg_weight or [0.0] * len(mask)),
    })
    tu.assign_non_tensor(data, dp_size=1, batch_num_tokens=None, global_batch_size=None)
    return data, prompts, responses, teacher_prompts


def sdpo_loss(model, mode="topk", topk=8, alpha=0.5, grpo_weight=0.0, **options):
    config = SDPOActorConfig(
        ppo_mini_batch_size=4, ppo_micro_batch_size_per_gpu=1, rollout_n=1,
        policy_loss=PolicyLossConfig(loss_mode="sdpo"),  # as omega_conf_to_dataclass builds it from the recipe
        sdpo=SDPOConfig(distillation_mode=mode, topk=topk, alpha=alpha, grpo_weight=grpo_weight, **options),
    )

    def teacher(data, active):
        rows = []
        for i in active.nonzero().squeeze(-1).tolist():
            seq = torch.cat([data["teacher_prompt_ids"].unbind()[i], data["responses"].unbind()[i]])
            r = len(data["responses"].unbind()[i])
            with torch.no_grad():
                rows.append(forward_logits(model, seq)[len(seq) - r - 1 : len(seq) - 1])
        return torch.cat(rows) if rows else None  # the worker's contract: None when no sample is active

    return SDPOLoss(config, teacher)


@pytest.mark.parametrize("mask", [[1, 0, 1], [1, 1, 1]])
def test_hook_divergence_matches_direct_computation(model, mask):
    data, prompts, responses, teacher_prompts = make_batch(mask)
    packed = data["input_ids"].values()
    student_logits = (torch.cat([forward_logits(model, s) for s in data["input_ids"].unbind()])
                      .detach().requires_grad_(True))
    loss_fn = sdpo_loss(model)
    out = loss_fn(student_logits=student_logits.unsqueeze(0), data=data)
    div_rows = out["sdpo_divergence"].squeeze(0)
    assert div_rows.shape == (packed.shape[0],)

    offset = 0
    for i, (p, r, tp) in enumerate(zip(prompts, responses, teacher_prompts)):
        seq_len = len(p) + len(r)
        got = div_rows[offset + len(p) - 1 : offset + seq_len - 1]
        if mask[i]:
            s = student_logits[offset + len(p) - 1 : offset + seq_len - 1]
            t = forward_logits(model, torch.cat([tp, r]))[len(tp) - 1 : len(tp) + len(r) - 1]
            s_logp, ids = student_topk(s, 8)
            want = divergence(s_logp, gather_logp(t, ids), 0.5, add_tail=True)
            torch.testing.assert_close(got, want.float(), atol=1e-5, rtol=1e-4)
            assert (got > 0).all()
        else:
            assert torch.count_nonzero(got) == 0
        offset += seq_len

    model_output = {
        "log_probs": nested(list(torch.log_softmax(student_logits, -1).gather(-1, torch.roll(packed, -1).unsqueeze(-1))
                                 .squeeze(-1).split([len(p) + len(r) for p, r in zip(prompts, responses)]))),
        **{k: nested(list(v.squeeze(0).split([len(p) + len(r) for p, r in zip(prompts, responses)])))
           for k, v in out.items()},
    }
    total, metrics = loss_fn(model_output=model_output, data=data)
    assert torch.isfinite(total) and total.item() > 0
    total.backward()
    assert student_logits.grad is not None and student_logits.grad.abs().sum() > 0
    assert metrics["sdpo/active_sample_fraction"] == pytest.approx(sum(mask) / 3)


def test_token_mode_uses_teacher_token_logprob(model):
    data, prompts, responses, teacher_prompts = make_batch([1, 1, 1])
    student_logits = torch.cat([forward_logits(model, s) for s in data["input_ids"].unbind()])
    out = sdpo_loss(model, mode="token", alpha=1.0)(student_logits=student_logits.unsqueeze(0), data=data)
    p, r, tp = prompts[0], responses[0], teacher_prompts[0]
    t = forward_logits(model, torch.cat([tp, r]))[len(tp) - 1 : len(tp) + len(r) - 1]
    want = torch.log_softmax(t, -1).gather(-1, r.unsqueeze(-1)).squeeze(-1)
    got = out["sdpo_teacher_token_logp"].squeeze(0)[len(p) - 1 : len(p) + len(r) - 1]
    torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_under_distillation_only_the_hook_gives_the_log_probs_verl_would(model, dtype):
    """The trainer sends distillation_only=True, so verl's engine skips its per-token log-probs; the hook supplies
    them: verl's value (its fallback here, no flash-attn) and verl's gradient, for every row of the packed batch."""
    data, _, _, _ = make_batch([1, 0, 1])
    tu.assign_non_tensor(data, distillation_only=True)
    logits = torch.cat([forward_logits(model, s) for s in data["input_ids"].unbind()]).detach().to(dtype)
    ours_in = logits.clone().requires_grad_(True)
    verls_in = logits.clone().requires_grad_(True)
    ours = sdpo_loss(model)(student_logits=ours_in.unsqueeze(0), data=data)["log_probs"].squeeze(0)
    verls = logprobs_from_logits(verls_in, torch.roll(data["input_ids"].values(), -1)).float()
    torch.testing.assert_close(ours, verls, rtol=0, atol=1e-6)
    weights = torch.linspace(-1.0, 1.0, len(ours))
    (ours_grad,) = torch.autograd.grad((ours * weights).sum(), ours_in)
    (verls_grad,) = torch.autograd.grad((verls * weights).sum(), verls_in)
    torch.testing.assert_close(ours_grad.float(), verls_grad.float(), rtol=0, atol=1e-6 if dtype == torch.float32
                               else 1e-2)


def test_without_distillation_only_verl_keeps_the_log_probs(model):
    data, _, _, _ = make_batch([1, 0, 1])
    logits = torch.cat([forward_logits(model, s) for s in data["input_ids"].unbind()]).detach()
    assert "log_probs" not in sdpo_loss(model)(student_logits=logits.unsqueeze(0), data=data)


@pytest.mark.parametrize("flash, disabled, npu, fp32", [(True, "0", False, True), (True, "1", False, False),
                                                        (False, "0", False, False), (False, "0", True, True)])
def test_the_hook_uses_fp32_exactly_where_verl_would(monkeypatch, flash, disabled, npu, fp32):
    from verl.utils import torch_functional

    from sdpo_ext.loss_hook import verl_log_probs_in_fp32

    monkeypatch.setattr(torch_functional, "FLAH_ATTN_CROSS_ENTROPY_LOSS_AVAILABLE", flash)
    monkeypatch.setattr(torch_functional, "NPU_CROSS_ENTROPY_LOSS_AVAILABLE", npu)
    monkeypatch.setenv("VERL_DISABLE_FLASH_ATTN_CE", disabled)
    assert verl_log_probs_in_fp32() is fp32


class _LargestFp32VocabBlock(TorchDispatchMode):
    """Records the most rows of any fp32 [rows, VOCAB] tensor an operator returns (forward and backward)."""

    def __init__(self):
        super().__init__()
        self.rows = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in out if isinstance(out, (tuple, list)) else (out,):
            if isinstance(t, torch.Tensor) and t.dtype == torch.float32 and t.dim() == 2 and t.shape[-1] == VOCAB:
                self.rows = max(self.rows, t.shape[0])
        return out


@pytest.mark.parametrize("fp32_log_probs", [False, True])
def test_no_full_vocabulary_fp32_block_is_larger_than_the_chunk(model, monkeypatch, fp32_log_probs):
    """bf16 logits, as on the GPU: every fp32 softmax block of the hook (top-K, teacher gathers, entropies, the
    per-token log-probs), forward and backward, stays within SOFTMAX_CHUNK_ROWS rows."""
    from sdpo_ext import loss_hook

    monkeypatch.setattr(loss_hook, "SOFTMAX_CHUNK_ROWS", 2)
    monkeypatch.setattr(loss_hook, "verl_log_probs_in_fp32", lambda: fp32_log_probs)
    data, _, _, _ = make_batch([1, 1, 1])
    tu.assign_non_tensor(data, distillation_only=True)
    logits = torch.cat([forward_logits(model, s) for s in data["input_ids"].unbind()]).detach()
    student = logits.to(torch.bfloat16).requires_grad_(True)
    loss_fn = sdpo_loss(model)
    teacher = loss_fn.teacher_logits(data, data["sdpo_mask"].bool()).to(torch.bfloat16)  # the model's, not the hook's
    loss_fn.teacher_logits = lambda d, a: teacher
    largest = _LargestFp32VocabBlock()
    with largest:
        out = loss_fn(student_logits=student.unsqueeze(0), data=data)
        (out["sdpo_divergence"].sum() + out["log_probs"].sum()).backward()
    assert student.grad is not None and student.grad.abs().sum() > 0
    assert 0 < largest.rows <= 2


class _VocabNormalisations(TorchDispatchMode):
    """Counts the rows each operator that normalises over the vocabulary (logsumexp, log_softmax, softmax) reads."""

    def __init__(self):
        super().__init__()
        self.rows = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func.overloadpacket in (torch.ops.aten.logsumexp, torch.ops.aten._log_softmax, torch.ops.aten._softmax):
            self.rows += args[0].shape[0] if args[0].shape[-1] == VOCAB else 0
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize("mode", ["topk", "token"])
@pytest.mark.parametrize("distillation_only", [False, True])
def test_each_side_is_normalised_once_per_row(model, mode, distillation_only):
    """The divergence on the top-K support, the teacher's sampled-token log-prob and both entropies come from one
    normalisation of each distilled row, teacher and student (the hook made three of the teacher's and two of the
    student's before). Under distillation_only the per-token log-probs (verl's numerics) normalise every row of the
    micro-batch once more. The tiny Llama's own forward inside the teacher callable normalises nothing."""
    data, _, responses, _ = make_batch([1, 0, 1])
    tu.assign_non_tensor(data, distillation_only=distillation_only)
    logits = torch.cat([forward_logits(model, s) for s in data["input_ids"].unbind()]).detach().requires_grad_(True)
    counter = _VocabNormalisations()
    with counter:
        out = sdpo_loss(model, mode=mode, alpha=1.0 if mode == "token" else 0.5)(
            student_logits=logits.unsqueeze(0), data=data)
    log_prob_rows = logits.shape[0] if distillation_only else 0
    assert counter.rows == 2 * (len(responses[0]) + len(responses[2])) + log_prob_rows
    assert torch.isfinite(out["sdpo_student_entropy"]).all() and out["sdpo_teacher_entropy"].abs().sum() > 0


class _HostReads(TorchFunctionMode):
    """Counts the tensor reads back to the host (item, tolist): on a GPU each one waits for the queued kernels."""

    def __init__(self):
        super().__init__()
        self.reads = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.reads += getattr(func, "__name__", "") in ("item", "tolist")
        return func(*args, **(kwargs or {}))


def test_the_metrics_are_masked_means_read_back_at_once(model):
    g = torch.Generator().manual_seed(7)
    shape = (3, 5)
    log_prob, teacher_token, teacher_entropy, student_entropy, token_weight, is_weights, divergence_mat = (
        torch.randn(shape, generator=g) for _ in range(7))
    response_mask = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [1, 1, 0, 0, 0]], dtype=torch.float32)
    sample_mask = torch.tensor([1.0, 0.0, 1.0])
    distill_weight = torch.tensor([0.5, 0.0, 1.0])
    reads = _HostReads()
    with reads:
        metrics = sdpo_loss(model)._metrics(log_prob, teacher_token, teacher_entropy, student_entropy, token_weight,
                                            is_weights, response_mask, sample_mask, distill_weight, divergence_mat)
    assert reads.reads == 1
    active = [(0, t) for t in range(3)] + [(2, t) for t in range(2)]

    def mean(values, cells):
        return sum(float(values[i, t]) for i, t in cells) / len(cells)

    gap = teacher_token - log_prob
    assert metrics["sdpo/teacher_minus_student_token_logp"] == pytest.approx(mean(gap, active), rel=1e-5)
    assert metrics["sdpo/teacher_minus_student_final_token_logp"] == pytest.approx(mean(gap, [(0, 2), (2, 1)]),
                                                                                    rel=1e-5)
    assert metrics["sdpo/divergence_mean"] == pytest.approx(mean(divergence_mat, active), rel=1e-5)
    flatter = (teacher_entropy > student_entropy).float()
    assert metrics["sdpo/teacher_flatter_fraction"] == pytest.approx(mean(flatter, active))
    every_response_token = [(i, t) for i in range(3) for t in range(5) if response_mask[i, t]]
    assert metrics["sdpo/is_weight_mean"] == pytest.approx(mean(is_weights, every_response_token), rel=1e-5)
    assert metrics["sdpo/active_sample_fraction"] == pytest.approx(2 / 3)
    assert metrics["sdpo/distill_weight_mean"] == pytest.approx(0.5)


class _FakeCudaEvent:
    """torch.cuda.Event as the hook uses it: record(), synchronize(), elapsed_time() in ms between two records
    (here one record per call to a fake clock that advances 250 ms a record)."""
    clock_ms = 0.0

    def __init__(self, enable_timing: bool = False):
        assert enable_timing
        self.at = None

    def record(self):
        _FakeCudaEvent.clock_ms += 250.0
        self.at = _FakeCudaEvent.clock_ms

    def synchronize(self):
        assert self.at is not None, "synchronize() on an event never recorded"

    def elapsed_time(self, end: "_FakeCudaEvent") -> float:
        return end.at - self.at


def test_the_teacher_forward_is_timed_on_the_device_without_waiting_for_it(model, monkeypatch):
    """On a GPU the teacher's time comes from two CUDA events read after the metrics' host transfer, not from two
    device synchronisations per micro-batch (a launch-bound step pays for each one)."""
    syncs = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a, **k: syncs.append(1))
    monkeypatch.setattr(torch.cuda, "Event", _FakeCudaEvent)
    data, prompts, responses, _ = make_batch([1, 0, 1])
    student_logits = torch.cat([forward_logits(model, s) for s in data["input_ids"].unbind()]).detach()
    loss_fn = sdpo_loss(model)
    out = loss_fn(student_logits=student_logits.unsqueeze(0), data=data)
    lengths = [len(p) + len(r) for p, r in zip(prompts, responses)]
    log_probs = torch.log_softmax(student_logits, -1).gather(-1, torch.roll(data["input_ids"].values(), -1)[:, None])
    model_output = {"log_probs": nested(list(log_probs.squeeze(-1).split(lengths))),
                    **{k: nested(list(v.squeeze(0).split(lengths))) for k, v in out.items()}}
    _, metrics = loss_fn(model_output=model_output, data=data)
    assert syncs == []
    assert metrics["timing_s/sdpo_teacher_forward"].aggregate() == pytest.approx(0.25)  # one record apart
    _, again = loss_fn(model_output=model_output, data=data)   # no teacher forward since: no stale time
    assert "timing_s/sdpo_teacher_forward" not in again


def test_a_stopwatch_read_before_it_stopped_is_an_error():
    from sdpo_ext.loss_hook import _Stopwatch

    watch = _Stopwatch()
    with pytest.raises(RuntimeError, match="before stop"):
        watch.seconds()
    watch.stop()
    assert watch.seconds() >= 0.0


@pytest.mark.gpu
def test_the_stopwatch_times_device_work_with_cuda_events():
    from sdpo_ext.loss_hook import _Stopwatch

    a = torch.randn(4096, 4096, device="cuda")
    torch.cuda.synchronize()
    watch = _Stopwatch()
    for _ in range(20):
        a = a @ a / 64.0
    watch.stop()
    a.sum().item()                                  # the host transfer the hook's metrics make
    assert 0.0 < watch.seconds() < 10.0
