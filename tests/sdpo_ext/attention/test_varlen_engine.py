"""The path users run: verl's real FSDP engine with padding removed and dynamic batch size, so several sequences share a
micro-batch (packed into one row, kept apart by the attention), against the same step with one sequence per micro-batch.
No stand-in engine: our worker (`SDPOActorRolloutRefWorker`, verl's ActorRolloutRefWorker) on the CPU platform of
tests/sdpo_ext/cpu_platform.py, driven for one training step as verl's trainer drives it
(bench/step_time/step_batch).

Packed: `attn_implementation=sdpa_varlen` (sdpo_ext.attention.varlen), `use_dynamic_bsz=true` with a token budget of
PACKED_TOKENS, two to three sequences per micro-batch. One per micro-batch: torch's SDPA on each sequence alone, the
configuration every earlier test and GPU figure used. Parameters and compute in fp32, so any difference is packing's
own, not bf16 rounding; the tolerances: per-token log-probs, divergences and teacher logits within 2e-5 absolute,
each optimizer step's gradients within 1e-4 of their largest entry (measured gaps are printed on failure).

The batch: 2 prompts x 4 samples of different lengths, one correct attempt (sample 0 of prompt 0). SDPO distils the
7 failures with the teacher's prompt (the prompt plus the sibling's solution or the screen's feedback: longer than
the student's); SRPO only the 3 failures of the solved group, so some packed micro-batch distils nothing.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest
import torch
from verl.utils import tensordict_utils as tu
from verl.workers.utils.padding import no_padding_2_padding

from tests.bench.bench_scripts import on_path
from tests.sdpo_ext.cpu_platform import CPU_CONFIG_OVERRIDES

on_path("step_time")
from step_batch import random_rollout_batch  # noqa: E402
from step_phases import FAST, compose_config  # noqa: E402
from step_phases import packed as packed_settings  # noqa: E402

RECIPES = {"grpo": "grpo_kimina_1_7b", "sdpo": "sdpo_kimina_1_7b", "srpo": "srpo_kimina_1_7b"}
PACKED_TOKENS = 150  # sequences here are 40-70 tokens (teacher sequences longer): two or three per micro-batch
FP32 = tuple(f"+actor_rollout_ref.{role}.fsdp_config.mixed_precision.param_dtype=fp32" for role in ("actor", "ref"))
ONE_PER_MICRO_BATCH = FAST  # sdpa, no dynamic batch size, micro-batches of one sequence


def packed(attention: str = "sdpa_varlen") -> tuple[str, ...]:
    return packed_settings(attention, PACKED_TOKENS)


pytestmark = pytest.mark.usefixtures("run_dirs")


Key = tuple[int, ...]  # a sample's response tokens: random text, so they name the sample in any micro-batch order


@dataclass
class Step:
    """What one training step computed, per sample (keyed by its response) and per optimizer step."""

    old_log_probs: dict[Key, torch.Tensor] = field(default_factory=dict)
    log_probs: dict[Key, torch.Tensor] = field(default_factory=dict)       # the update's forward
    divergence: dict[Key, torch.Tensor] = field(default_factory=dict)      # SDPO's per-token loss before weighting
    teacher: dict[Key, torch.Tensor] = field(default_factory=dict)         # teacher logits at the response rows
    grads: list[dict[str, torch.Tensor]] = field(default_factory=list)
    samples_per_micro_batch: list[int] = field(default_factory=list)
    distilled_per_micro_batch: list[int] = field(default_factory=list)


def _keys(data) -> list[Key]:
    return [tuple(r.tolist()) for r in data["responses"].unbind()]


def _per_sample(nested: torch.Tensor, data, keys: list[Key], into: dict[Key, torch.Tensor]) -> None:
    """A nested per-token output of the packed forward -> each sample's response rows."""
    padded = no_padding_2_padding(nested, data)
    lengths = [len(k) for k in keys]
    for i, key in enumerate(keys):
        into[key] = padded[i, : lengths[i]].detach().float().clone()


def run_step(algo: str, settings: tuple[str, ...], model_dir: Path, tokenizer, monkeypatch) -> Step:
    from sdpo_ext.worker import SDPOActorRolloutRefWorker

    step = Step()
    teacher_forward = SDPOActorRolloutRefWorker._teacher_response_logits

    def recorded_teacher(self, micro_batch, active):
        logits = teacher_forward(self, micro_batch, active)
        step.distilled_per_micro_batch.append(int(active.sum()))
        keys = [k for k, a in zip(_keys(micro_batch), active.tolist()) if a]
        for key, rows in zip(keys, torch.split(logits, [len(k) for k in keys]) if keys else ()):
            step.teacher[key] = rows.detach().float().clone()
        return logits

    monkeypatch.setattr(SDPOActorRolloutRefWorker, "_teacher_response_logits", recorded_teacher)
    cfg = compose_config([f"+recipe={RECIPES[algo]}", f"actor_rollout_ref.model.path={model_dir}",
                          "data.max_prompt_length=1100", "data.max_response_length=64", "data.train_batch_size=2",
                          "sdpo.full_batch_size=2", "actor_rollout_ref.rollout.n=4", "trainer.n_gpus_per_node=1",
                          "actor_rollout_ref.actor.optim.lr=1e-3", *CPU_CONFIG_OVERRIDES, *FP32, *settings])
    batch = random_rollout_batch(cfg, tokenizer, 2, 4, first_length=12)
    worker = SDPOActorRolloutRefWorker(config=cfg.actor_rollout_ref,
                                       role="actor_rollout" if algo == "grpo" else "actor_rollout_ref")
    worker.init_model()

    loss_fn = worker.actor.loss_fn

    def recorded_loss(*args, **kwargs):
        model_output, data = kwargs.get("model_output"), kwargs["data"]
        if model_output is not None and not tu.get_non_tensor_data(data, "sdpo_log_probs_only", False):
            keys = _keys(data)
            step.samples_per_micro_batch.append(len(keys))
            _per_sample(model_output["log_probs"], data, keys, step.log_probs)
            if "sdpo_divergence" in model_output:
                _per_sample(model_output["sdpo_divergence"], data, keys, step.divergence)
        return loss_fn(*args, **kwargs)

    worker.actor.set_loss_fn(recorded_loss)
    compute_log_prob = worker.compute_log_prob

    def recorded_log_prob(data):
        output = compute_log_prob(data)
        _per_sample(output["log_probs"], data, _keys(data), step.old_log_probs)
        return output

    worker.compute_log_prob = recorded_log_prob
    engine = worker.actor.engine

    def grads(optimizer, args, kwargs):
        step.grads.append({name: (p.grad.full_tensor() if hasattr(p.grad, "full_tensor") else p.grad).float().clone()
                           for name, p in engine.module.named_parameters() if p.grad is not None})

    engine.optimizer.register_step_pre_hook(grads)
    batch.step(worker, sdpo_enabled=algo != "grpo")
    return step


def assert_same_per_token(a: dict[Key, torch.Tensor], b: dict[Key, torch.Tensor], what: str, samples: int) -> None:
    assert a.keys() == b.keys() and len(a) == samples, f"{what}: {len(a)} vs {len(b)} samples, expected {samples}"
    gap = max((a[k] - b[k]).abs().max().item() for k in a)
    assert gap <= 2e-5, f"{what}: packed and one-per-micro-batch differ by {gap:.3g}"


def assert_same_grads(a: list[dict], b: list[dict]) -> None:
    assert len(a) == len(b) >= 1 and a[0].keys() == b[0].keys()
    for step_a, step_b in zip(a, b):
        size = max(g.abs().max().item() for g in step_b.values())
        gap = max((step_a[n] - step_b[n]).abs().max().item() for n in step_b)
        assert size > 0 and gap <= 1e-4 * size, f"gradients: largest {size:.3g}, packed differs by {gap:.3g}"


@pytest.mark.parametrize("algo", ["grpo", "sdpo", "srpo"])
def test_a_packed_step_equals_the_step_with_one_sequence_per_micro_batch(algo, model_dir, smollm2_tokenizer, cpu,
                                                                         monkeypatch):
    one = run_step(algo, ONE_PER_MICRO_BATCH, model_dir, smollm2_tokenizer, monkeypatch)
    many = run_step(algo, packed(), model_dir, smollm2_tokenizer, monkeypatch)
    assert set(one.samples_per_micro_batch) == {1} and max(many.samples_per_micro_batch) >= 2
    assert_same_per_token(many.old_log_probs, one.old_log_probs, "old log-probs", 8)
    assert_same_per_token(many.log_probs, one.log_probs, "update log-probs", 8)
    assert_same_grads(many.grads, one.grads)
    if algo != "grpo":
        distilled = 7 if algo == "sdpo" else 3
        assert_same_per_token(many.teacher, one.teacher, "teacher logits", distilled)
        assert_same_per_token(many.divergence, one.divergence, "per-token divergence", 8)
        assert sum(many.distilled_per_micro_batch) == distilled
        longest_student = max(len(k) for k in many.log_probs)
        assert all(len(t) == len(k) for k, t in many.teacher.items()) and longest_student > 0
    if algo == "srpo":  # a packed micro-batch of several sequences, none distilled
        assert any(n == 0 for n in many.distilled_per_micro_batch)
        assert len(many.distilled_per_micro_batch) < len(one.distilled_per_micro_batch)


def test_teacher_sequences_are_longer_than_the_students(model_dir, smollm2_tokenizer, cpu, monkeypatch):
    """The teacher's prompt (prompt + feedback or a sibling's solution) is longer than the student's, in a packed
    teacher forward of several sequences."""
    from sdpo_ext.worker import SDPOActorRolloutRefWorker

    seen = []
    teacher_batch = SDPOActorRolloutRefWorker._teacher_batch

    def recorded(self, micro_batch, active):
        batch, rows = teacher_batch(self, micro_batch, active)
        idx = active.nonzero().flatten().tolist()
        students = [len(micro_batch["input_ids"].unbind()[i]) for i in idx]
        seen.append((students, [len(s) for s in batch["input_ids"].unbind()]))
        return batch, rows

    monkeypatch.setattr(SDPOActorRolloutRefWorker, "_teacher_batch", recorded)
    run_step("sdpo", packed(), model_dir, smollm2_tokenizer, monkeypatch)
    assert any(len(students) >= 2 for students, _ in seen)
    assert all(t > s for students, teachers in seen for s, t in zip(students, teachers))


def test_transformers_sdpa_also_keeps_packed_sequences_apart_in_verls_engine(model_dir, smollm2_tokenizer, cpu,
                                                                             monkeypatch):
    """Plain `sdpa` packed: transformers (>= 4.53) reads the sequence starts from verl's position ids when there is no
    mask and no cache, and builds a block-diagonal mask over the whole packed row (T x T), so the step is the same
    too: correct, but dense over the row."""
    one = run_step("grpo", ONE_PER_MICRO_BATCH, model_dir, smollm2_tokenizer, monkeypatch)
    many = run_step("grpo", packed("sdpa"), model_dir, smollm2_tokenizer, monkeypatch)
    assert max(many.samples_per_micro_batch) >= 2
    assert_same_per_token(many.log_probs, one.log_probs, "update log-probs", 8)
    assert_same_grads(many.grads, one.grads)


def test_fa4_varlen_keeps_packed_sequences_apart_in_verls_engine(model_dir, smollm2_tokenizer, cpu, monkeypatch):
    """`fa4_varlen` through verl's real engine, its kernel replaced by the torch stand-in of flash-attn's varlen
    contract (tests/sdpo_ext/attention/test_fa4_attention.py): verl's packed rows reach it with their position ids, and
    SDPO's step (student and teacher forwards) equals the one-sequence step. The kernel itself needs Hopper or
    Blackwell."""
    from sdpo_ext.attention import fa4 as fa4_attention
    from tests.sdpo_ext.attention.test_fa4_attention import StandIn

    kernel = StandIn()
    monkeypatch.setattr(fa4_attention, "_kernel", lambda: kernel)
    one = run_step("sdpo", ONE_PER_MICRO_BATCH, model_dir, smollm2_tokenizer, monkeypatch)
    many = run_step("sdpo", packed("fa4_varlen"), model_dir, smollm2_tokenizer, monkeypatch)
    assert max(many.samples_per_micro_batch) >= 2 and any(len(c["cu_seqlens_q"]) > 2 for c in kernel.calls)
    assert all(type(c["max_seqlen_q"]) is int for c in kernel.calls)
    assert_same_per_token(many.log_probs, one.log_probs, "update log-probs", 8)
    assert_same_per_token(many.teacher, one.teacher, "teacher logits", 7)
    assert_same_grads(many.grads, one.grads)
