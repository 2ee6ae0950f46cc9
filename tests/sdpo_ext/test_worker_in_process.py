"""The real worker (`SDPOActorRolloutRefWorker`, verl's FSDP engine) driven for one training step in this process on
CPU, as verl's trainer drives it (bench/step_time/step_batch.StepBatch: old log-probs, advantages, teacher prompts,
actor update, EMA): GRPO, SDPO and SRPO update the policy, and SDPO's update is the same whether verl's engine or the
SDPO loss hook computes the per-token log-probs (the hook does since the trainer sends distillation_only=True).

Tiny random Qwen3 (hidden 64, 2 layers) with SmolLM2-135M-Instruct's tokenizer; the real kimina recipes with the
benchmark's settings (bench/step_time/step_phases.overrides) and the CPU overrides of
tests/sdpo_ext/cpu_platform.py.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from verl.utils import tensordict_utils as tu

from tests.bench.bench_scripts import on_path
from tests.sdpo_ext.cpu_platform import CPU_CONFIG_OVERRIDES

on_path("step_time")
from step_batch import InProcessWorkerGroup, StepBatch, random_rollout_batch  # noqa: E402
from step_batch import bench_ground_truths as ground_truths  # noqa: E402
from step_phases import compose_config, overrides  # noqa: E402

pytestmark = pytest.mark.usefixtures("run_dirs")


def step_batch(algo: str, model_dir: Path, tokenizer, prompts: int = 2, n: int = 4) -> StepBatch:
    """2 prompts x 4 samples of random text; sample 0 of prompt 0 is the one correct attempt."""
    cfg = compose_config([*overrides(algo, model_dir, prompts, n, 64), *CPU_CONFIG_OVERRIDES,
                          "actor_rollout_ref.actor.optim.lr=1e-3"])  # a step bf16 weights can show
    return random_rollout_batch(cfg, tokenizer, prompts, n, first_length=12)


def worker_for(batch: StepBatch, algo: str):
    from sdpo_ext.worker import SDPOActorRolloutRefWorker

    role = "actor_rollout" if algo == "grpo" else "actor_rollout_ref"
    worker = SDPOActorRolloutRefWorker(config=batch.cfg.actor_rollout_ref, role=role)
    worker.init_model()
    return worker


def parameters(engine) -> dict[str, torch.Tensor]:
    return {name: (p.full_tensor() if hasattr(p, "full_tensor") else p).detach().float().clone()
            for name, p in engine.module.named_parameters()}


@pytest.mark.parametrize("algo", ["grpo", "sdpo", "srpo"])
def test_one_step_of_the_real_worker_updates_the_policy(algo, model_dir, smollm2_tokenizer, cpu):
    batch = step_batch(algo, model_dir, smollm2_tokenizer)
    worker = worker_for(batch, algo)
    teacher_rows: list[int] = []
    if worker.ref is not None:
        worker.ref.engine.module.lm_head.register_forward_hook(
            lambda module, args, out: teacher_rows.append(args[0].shape[1]))
    before = parameters(worker.actor.engine)
    phases, metrics = batch.step(worker, sdpo_enabled=algo != "grpo")
    after = parameters(worker.actor.engine)
    moved = max((after[k] - before[k]).abs().max().item() for k in before)
    assert moved > 1e-4, f"{algo}: the update did not move the policy"
    assert {"old_log_prob", "update_actor"} <= set(phases)
    if algo == "grpo":
        assert "actor/pg_loss" in metrics
    else:
        # SDPO distils the 7 failed samples; SRPO the 3 failed samples whose group has a success
        assert metrics["actor/sdpo/active_sample_fraction"] == pytest.approx(7 / 8 if algo == "sdpo" else 3 / 8)
        # teacher rows for the distilled samples' responses only (12 + i tokens for sample i): none for the correct
        # sample (no teacher signal) nor, in SRPO, for the samples routed to the policy gradient (weight 0)
        assert sum(teacher_rows) == sum(12 + i for i in (range(1, 8) if algo == "sdpo" else range(1, 4)))
        assert phases["sdpo_ema_update"] >= 0.0 and phases["sdpo_teacher_forward"] > 0.0


def test_sdpo_update_is_the_same_whether_verl_or_the_hook_computes_the_log_probs(model_dir, smollm2_tokenizer, cpu,
                                                                                 monkeypatch):
    def update(distillation_only: bool) -> dict[str, torch.Tensor]:
        batch = step_batch("srpo", model_dir, smollm2_tokenizer)  # SRPO: the log-probs carry the PPO gradient
        worker = worker_for(batch, "srpo")
        send = InProcessWorkerGroup._with_meta

        def with_meta(meta):
            td = send(meta)
            tu.assign_non_tensor(td, distillation_only=distillation_only)
            return td

        monkeypatch.setattr(InProcessWorkerGroup, "_with_meta", staticmethod(with_meta))
        before = parameters(worker.actor.engine)
        batch.step(worker, sdpo_enabled=True)
        return {k: v - before[k] for k, v in parameters(worker.actor.engine).items()}

    hook, verl = update(True), update(False)
    size = max(v.abs().max().item() for v in verl.values())
    gap = max((hook[k] - verl[k]).abs().max().item() for k in verl)
    assert size > 1e-4 and gap <= 1e-3 * size, f"update {size:.3g}, difference {gap:.3g}"


@pytest.mark.parametrize("algo", ["sdpo", "srpo"])
def test_the_sdpo_workers_old_log_probs_are_verls(algo, model_dir, smollm2_tokenizer, cpu, monkeypatch):
    """With the SDPO loss installed the worker takes the old log-probs from the loss hook (vectorised); verl's own
    compute_log_prob on the same worker gives the same log-probs and entropies."""
    from verl.workers.engine_workers import ActorRolloutRefWorker

    batch = step_batch(algo, model_dir, smollm2_tokenizer)
    worker = worker_for(batch, algo)

    def request() -> object:
        td = batch.fields.clone()
        tu.assign_non_tensor(td, calculate_entropy=True, compute_loss=False, temperature=1.0)
        return td

    from sdpo_ext.loss_hook import SDPOLoss

    calls = []
    hook_log_probs = SDPOLoss._log_probs
    monkeypatch.setattr(SDPOLoss, "_log_probs", staticmethod(lambda *a: calls.append(1) or hook_log_probs(*a)))
    ours = worker.compute_log_prob(request())
    assert calls, "the SDPO worker's old log-probs did not come from the hook"
    calls.clear()
    verls = ActorRolloutRefWorker.compute_log_prob(worker, request())
    assert not calls
    for key in ("log_probs", "entropy"):
        torch.testing.assert_close(ours[key].values().float(), verls[key].values().float(), rtol=0, atol=1e-5)


def test_the_benchmark_writes_every_step_and_a_profile(model_dir, smollm2_tokenizer, cpu, tmp_path):
    """bench/step_time/step_phases.measure, as the GPU job runs it: one JSON entry per step of each length, then the
    profile."""
    from step_phases import measure

    batch = step_batch("sdpo", model_dir, smollm2_tokenizer)
    rollouts = {"prompt_ids": [batch.prompt_ids[0], batch.prompt_ids[4]], "messages": [batch.messages[0],
                batch.messages[4]], "ground_truths": ground_truths(2),
                "lengths": {16: {"response_ids": batch.response_ids, "finish_reasons": ["length"] * 8}}}
    out = tmp_path / "phases_sdpo.json"
    measure("sdpo", batch.cfg, rollouts, [16], [2], 1, out, {"overrides": []}, profile_lengths=(16,))
    run = json.loads(out.read_text())
    steps = run["lengths"]["16"]["iterations"]
    assert len(steps) == 2 and all(s["update_actor"] > 0 and s["sdpo_teacher_forward"] > 0 for s in steps)
    assert all(s["alloc_retries"] == 0 for s in steps)  # nothing is accounted on CPU
    assert run["lengths"]["16"]["solved_fraction"] == 1 / 8
    assert "aten::" in (tmp_path / "phases_sdpo_r16.txt").read_text()


def test_a_shared_teacher_prefix_gives_the_teacher_logits_of_the_whole_sequence(model_dir, smollm2_tokenizer, cpu,
                                                                                 monkeypatch):
    """sdpo.teacher.share_prompt_prefix: each group's shared prompt prefix is computed once and reused, and the
    teacher logits are those of [teacher prompt | response] through verl's forward_step, within one bf16 rounding
    step (the model computes in bf16 here, as on the GPU); so is the SDPO loss."""
    from sdpo_ext.teacher import shared_prefix
    from sdpo_ext.worker import SDPOActorRolloutRefWorker

    monkeypatch.setattr(shared_prefix, "MIN_SHARED_PREFIX", 16)  # this test's teacher prompts: 63 and 86 tokens
    teacher_forward = SDPOActorRolloutRefWorker._teacher_response_logits

    def step(algo: str) -> tuple[list[torch.Tensor], dict[str, float], object]:
        seen: list[torch.Tensor] = []
        monkeypatch.setattr(SDPOActorRolloutRefWorker, "_teacher_response_logits",
                            lambda self, mb, active: seen.append(teacher_forward(self, mb, active)) or seen[-1])
        batch = step_batch(algo, model_dir, smollm2_tokenizer)
        worker = worker_for(batch, algo)
        _, metrics = batch.step(worker, sdpo_enabled=True)
        return seen, metrics, worker.prefix_cache

    shared, shared_metrics, cache = step("sdpo_shared_prefix")
    whole, whole_metrics, no_cache = step("sdpo")
    assert no_cache is None and cache.computed == 2 and cache.reused == 5  # 2 groups, 7 distilled samples
    # prompt tokens not recomputed: 2 of 3 prompts of 63 tokens, 3 of 4 of 86 (62 and 85 shared)
    reused = (2 * 62 + 3 * 85) / (3 * 63 + 4 * 86)
    assert shared_metrics["sdpo_lean/teacher_prompt_reused_fraction"] == pytest.approx(reused)
    assert [t is None for t in shared] == [t is None for t in whole]  # the correct attempt's micro-batch: no rows
    shared, whole = [t for t in shared if t is not None], [t for t in whole if t is not None]
    assert len(shared) == len(whole) == 7
    for a, b in zip(shared, whole):
        assert a.dtype == b.dtype == torch.bfloat16
        torch.testing.assert_close(a.float(), b.float(), rtol=0, atol=2**-7 * b.float().abs().max().item())
    assert shared_metrics["actor/sdpo/loss"] == pytest.approx(whole_metrics["actor/sdpo/loss"], rel=1e-2)


def test_with_a_shared_prefix_every_rank_makes_the_most_teacher_calls_of_any(model_dir, smollm2_tokenizer, cpu,
                                                                             monkeypatch):
    """The ranks agree on the most teacher module calls any of them makes in a micro-batch and the others pad with
    one-token forwards; here another rank is made to need 2 more in every micro-batch, the one without a distilled
    sample (the correct attempt's) included."""
    from sdpo_ext import worker as worker_module
    from sdpo_ext.teacher import shared_prefix

    monkeypatch.setattr(shared_prefix, "MIN_SHARED_PREFIX", 16)

    def teacher_calls(extra: int) -> int:
        monkeypatch.setattr(worker_module, "_most_over_ranks", lambda value, group: value + extra)
        batch = step_batch("sdpo_shared_prefix", model_dir, smollm2_tokenizer)
        worker = worker_for(batch, "sdpo_shared_prefix")
        calls = []
        worker.ref.engine.module.register_forward_hook(lambda *args: calls.append(1))
        batch.step(worker, sdpo_enabled=True)
        return len(calls)

    alone = teacher_calls(0)
    assert alone == 2 + 7  # 2 group prefixes, then each distilled sample's rest
    assert teacher_calls(2) == alone + 2 * 8  # 8 micro-batches of one sample


@pytest.mark.parametrize("temperature", [1.0, 0.6, "per sample"])
def test_the_teacher_computes_logits_on_the_response_rows_only_and_the_same_ones(model_dir, smollm2_tokenizer, cpu,
                                                                                   monkeypatch, temperature):
    """Through the real engine: three packed sequences, one temperature or each its own. The LM head runs on the
    rows predicting the responses only, and their logits are verl forward_step's at those rows (within a bf16
    step)."""
    from sdpo_ext import worker as worker_module
    from sdpo_ext.loss.packed_rows import response_logit_rows

    batch = step_batch("sdpo", model_dir, smollm2_tokenizer)
    worker = worker_for(batch, "sdpo")
    engine = worker.ref.engine
    g = torch.Generator().manual_seed(0)
    lengths, response_lengths = (40, 25, 33), (10, 7, 12)
    sequences = [torch.randint(0, len(smollm2_tokenizer), (n,), generator=g) for n in lengths]
    if temperature == "per sample":
        micro_batch = tu.get_tensordict({"temperature": torch.tensor([0.7, 1.0, 1.3])})
    else:
        micro_batch = tu.get_tensordict({"input_ids": torch.nested.as_nested_tensor(sequences, layout=torch.jagged)})
        tu.assign_non_tensor(micro_batch, temperature=temperature)
    teacher_batch = worker_module._forward_only_batch(micro_batch, sequences, [0, 1, 2])
    rows = response_logit_rows(torch.tensor(lengths), torch.tensor(response_lengths))
    head_rows: list[int] = []
    engine.module.lm_head.register_forward_hook(lambda module, args, out: head_rows.append(args[0].shape[1]))

    kept = worker._forward_rows(engine, teacher_batch, rows, eval_ctx=True)
    monkeypatch.setattr(worker_module, "_keeps_rows", lambda engine, batch: False)
    whole = worker._forward_rows(engine, teacher_batch, rows, eval_ctx=True)
    assert head_rows == [sum(response_lengths), sum(lengths)]
    assert kept.shape == whole.shape == (sum(response_lengths), len(smollm2_tokenizer)) and kept.dtype == whole.dtype
    torch.testing.assert_close(kept.float(), whole.float(), rtol=0, atol=2**-7 * whole.float().abs().max().item())


def test_the_synthetic_rollout_job_drives_the_real_worker_packed_into_the_packed_summary(
        model_dir, smollm2_tokenizer, cpu, tmp_path):
    """The packed step-time job as a device call runs it, on CPU: rollouts built without vLLM (synthetic_rollouts.py)
    drive the real worker packed (sdpa_varlen) for GRPO and SDPO, and step_time_packed.py summarises the call (the
    merge of several calls: tests/bench/test_step_time_packed.py)."""
    from step_phases import PACKED_TOKENS, measure
    from step_time_packed import packed_summary
    from synthetic_rollouts import synthetic_rollouts, word_ids

    profile = {"samples": 8, "lengths": {"24": {"gen_s": 2.0, "response_tokens": 8 * 24 - 10}}}
    messages = [[{"role": "user", "content": f"Prove bench_{i}."}] for i in range(2)]
    prompt_ids = [smollm2_tokenizer.apply_chat_template(m, add_generation_prompt=True, tokenize=True,
                                                        return_dict=False) for m in messages]
    rollouts = synthetic_rollouts(prompt_ids, messages, ground_truths(2), profile, [24], word_ids(smollm2_tokenizer),
                                  smollm2_tokenizer.eos_token_id)
    folder = tmp_path / "call"
    folder.mkdir()
    stated = rollouts["lengths"][24]["sibling_solution"]
    (folder / "rollouts.json").write_text(json.dumps(
        {"engine_start_s": None, "lengths": {"24": {"gen_s": 2.0, "tokens_per_s": 91.0, "sibling_solution": stated}}}))
    for algo in ("grpo", "sdpo"):
        cfg_overrides = [*overrides(algo, model_dir, 2, 4, 24, attention="sdpa_varlen"), *CPU_CONFIG_OVERRIDES]
        measure(algo, compose_config(cfg_overrides), rollouts, [24], [2], 1, folder / f"phases_{algo}.json",
                {"overrides": cfg_overrides, "attention": "sdpa_varlen", "packed_tokens": PACKED_TOKENS})
    summary, _ = packed_summary([(folder, "one call on CPU")])
    row = summary["cases"]["whole"]["lengths"]["24"]
    assert summary["jobs"]["call"]["sibling_solution"] == {
        "case": "whole", "stated_tokens": {"24": 24}, "measured_tokens": {"24": {"grpo": 24, "sdpo": 24}}}
    assert summary["config"]["attn_implementation"] == "sdpa_varlen" and row["samples"] == 8
    runs = {algo: json.loads((folder / f"phases_{algo}.json").read_text()) for algo in ("sdpo", "grpo")}
    assert runs["sdpo"]["lengths"]["24"]["response_tokens"] == 8 * 24 - 10  # the profile's total
    step = {algo: 2.0 + sum(run["lengths"]["24"]["iterations"][1].get(p, 0.0)
                            for p in ("sdpo_prepare", "old_log_prob", "adv", "update_actor"))
            for algo, run in runs.items()}
    assert row["ratio_sdpo_over_grpo"] == pytest.approx(step["sdpo"] / step["grpo"], abs=1e-3)
    assert row["phases"]["sdpo"]["sdpo_teacher_forward"] > 0


def test_packed_a_shared_teacher_prefix_is_in_the_row_once_and_gives_the_same_logits(model_dir, smollm2_tokenizer,
                                                                                      cpu, monkeypatch):
    """sdpo.teacher.share_prompt_prefix on the packed path (sdpa_varlen, dynamic batch size): one teacher forward
    per micro-batch as without it, each group's shared prefix once in its row; the teacher logits are those of every
    whole [teacher prompt | response] within one bf16 rounding step, and so is the SDPO loss."""
    from sdpo_ext.teacher import shared_prefix
    from sdpo_ext.worker import SDPOActorRolloutRefWorker

    monkeypatch.setattr(shared_prefix, "MIN_SHARED_PREFIX", 16)  # this test's teacher prompts: 63 and 86 tokens
    teacher_forward = SDPOActorRolloutRefWorker._teacher_response_logits

    def step(algo: str) -> tuple[list[torch.Tensor], list[int], dict[str, float]]:
        seen: list[torch.Tensor] = []
        monkeypatch.setattr(SDPOActorRolloutRefWorker, "_teacher_response_logits",
                            lambda self, mb, active: seen.append(teacher_forward(self, mb, active)) or seen[-1])
        cfg = compose_config([*overrides(algo, model_dir, 2, 4, 64, attention="sdpa_varlen"), *CPU_CONFIG_OVERRIDES])
        batch = random_rollout_batch(cfg, smollm2_tokenizer, 2, 4, first_length=12)
        worker = worker_for(batch, algo)
        tokens: list[int] = []
        worker.ref.engine.module.model.embed_tokens.register_forward_hook(
            lambda module, args, out: tokens.append(args[0].numel()))
        _, metrics = batch.step(worker, sdpo_enabled=True)
        return seen, tokens, metrics

    shared, shared_tokens, shared_metrics = step("sdpo_shared_prefix")
    whole, whole_tokens, whole_metrics = step("sdpo")
    assert len(shared_tokens) == len(whole_tokens)  # one teacher forward per micro-batch either way
    # 7 distilled samples: 3 with the 63-token prompt (62 shared), 4 with the 86-token one (85 shared), each computed
    # once per micro-batch that holds its group
    assert sum(whole_tokens) - sum(shared_tokens) >= 62 + 2 * 85
    shared, whole = [t for t in shared if t is not None], [t for t in whole if t is not None]
    assert len(shared) == len(whole) > 0
    for a, b in zip(shared, whole):
        assert a.dtype == b.dtype == torch.bfloat16 and a.shape == b.shape
        torch.testing.assert_close(a.float(), b.float(), rtol=0, atol=2**-7 * b.float().abs().max().item())
    assert shared_metrics["actor/sdpo/loss"] == pytest.approx(whole_metrics["actor/sdpo/loss"], rel=1e-2)
