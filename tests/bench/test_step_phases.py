"""bench/step_time/step_phases.py: every algorithm's configuration composes and passes SDPOTrainer's start-up checks,
and one step (bench/step_time/step_batch.StepBatch) asks the worker what verl's trainer asks, in the trainer's order,
with the trainer's metadata. The worker here records its inputs; the GPU run drives the real one."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from tensordict import TensorDict
from verl.utils import tensordict_utils as tu

from sdpo_ext.config import sdpo_loss_selected
from sdpo_ext.startup.checks import check_config_keys, sdpo_setting_errors
from tests.bench.bench_scripts import on_path
from tests.sdpo_ext.cpu_platform import cpu_platform_installed

on_path("step_time")
from step_batch import BENCH_STATEMENT as STATEMENT  # noqa: E402
from step_batch import StepBatch, random_rollout_batch  # noqa: E402
from step_phases import ALGOS, compose_config, overrides  # noqa: E402


class RecordingWorker:
    """Answers compute_log_prob with zero log-probs over each whole sequence, as verl's worker shapes them."""

    def __init__(self):
        self.calls: list[tuple[str, TensorDict | None]] = []

    def compute_log_prob(self, td: TensorDict) -> TensorDict:
        self.calls.append(("compute_log_prob", td))
        rows = [torch.zeros(len(x)) for x in td["input_ids"].unbind()]
        return TensorDict({"log_probs": torch.nested.as_nested_tensor(rows, layout=torch.jagged)},
                          batch_size=td.batch_size)

    def update_actor(self, td: TensorDict) -> TensorDict:
        self.calls.append(("update_actor", td))
        out = TensorDict({}, batch_size=[])
        tu.assign_non_tensor(out, metrics={"mfu": 0.1, "pg_loss": 0.0})
        return out

    def sdpo_update_ema_teacher(self) -> None:
        self.calls.append(("sdpo_update_ema_teacher", None))


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory, smollm2_tokenizer) -> Path:
    path = tmp_path_factory.mktemp("tokenizer")
    smollm2_tokenizer.save_pretrained(path)
    return path


@pytest.fixture(scope="module", autouse=True)
def _cpu():
    with cpu_platform_installed():  # the step times its phases with verl's device synchronize
        yield


@pytest.fixture(autouse=True)
def _env(monkeypatch, tmp_path):
    monkeypatch.setenv("SDPO_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("SDPO_OUTPUT_DIR", str(tmp_path / "runs"))


def batch_for(algo: str, model_dir: Path, smollm2_tokenizer, prompts: int = 2, n: int = 4) -> StepBatch:
    return random_rollout_batch(compose_config(overrides(algo, model_dir, prompts, n, 64)), smollm2_tokenizer,
                                prompts, n)


@pytest.mark.parametrize("algo", ["grpo", "sdpo", "srpo"])
def test_the_packed_settings_compose_with_the_recipes_cap_and_pass_the_start_up_checks(algo, tmp_path):
    from step_phases import PACKED_TOKENS

    from sdpo_ext.startup.attention import attention_problems

    cfg = compose_config(overrides(algo, tmp_path, 8, 8, 8192, attention="sdpa_varlen"))
    check_config_keys(cfg)
    assert attention_problems(cfg) == []
    arr = cfg.actor_rollout_ref
    assert arr.model.use_remove_padding and arr.model.override_config.attn_implementation == "sdpa_varlen"
    assert arr.actor.use_dynamic_bsz and arr.rollout.log_prob_use_dynamic_bsz and arr.ref.log_prob_use_dynamic_bsz
    assert arr.actor.ppo_max_token_len_per_gpu == arr.rollout.log_prob_max_token_len_per_gpu == PACKED_TOKENS


@pytest.mark.parametrize("algo", sorted(ALGOS))
def test_each_algorithm_composes_with_the_fast_settings_and_passes_the_start_up_checks(algo, tmp_path):
    cfg = compose_config(overrides(algo, tmp_path, 8, 8, 8192))
    check_config_keys(cfg)
    actor = cfg.actor_rollout_ref.actor
    assert sdpo_loss_selected(actor.policy_loss) == algo.startswith(("sdpo", "srpo"))
    if sdpo_loss_selected(actor.policy_loss):
        assert sdpo_setting_errors(cfg, actor.sdpo.grpo_weight) == []
    model = cfg.actor_rollout_ref.model
    assert model.use_remove_padding
    assert model.override_config.attn_implementation == "sdpa"
    assert model.use_fused_kernels == algo.startswith("grpo_fused")
    assert model.fused_kernel_options.impl_backend == ("triton" if algo == "grpo_fused_triton" else "torch")
    assert not actor.use_dynamic_bsz and actor.ppo_micro_batch_size_per_gpu == 1   # one sequence per micro-batch
    assert cfg.actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu == 1


@pytest.mark.parametrize("algo", ["grpo", "sdpo", "srpo"])
def test_a_step_sends_the_trainers_requests_in_its_order(algo, model_dir, smollm2_tokenizer):
    batch = batch_for(algo, model_dir, smollm2_tokenizer)
    worker = RecordingWorker()
    phases, metrics = batch.step(worker, sdpo_enabled=algo != "grpo")
    names = [name for name, _ in worker.calls]
    sdpo_family = algo != "grpo"
    assert names == ["compute_log_prob", "update_actor"] + (["sdpo_update_ema_teacher"] if sdpo_family else [])
    log_prob_td, update_td = worker.calls[0][1], worker.calls[1][1]
    assert tu.get(log_prob_td, "calculate_entropy") is True and tu.get(log_prob_td, "compute_loss") is False
    assert tu.get(update_td, "distillation_use_topk") is sdpo_family    # SDPO's loss reads the logits
    assert tu.get(update_td, "distillation_only") is sdpo_family        # ... and computes the log-probs
    assert tu.get(update_td, "mini_batch_size") == 8                    # ppo_mini_batch_size x n (2 x 4)
    for old, response in zip(update_td["old_log_probs"].unbind(), update_td["responses"].unbind()):
        assert old.shape == response.shape
    advantages = [row[0].item() for row in update_td["advantages"].unbind()]
    assert advantages[0] > 0 > advantages[1] and advantages[4] == 0.0  # prompt 0 solved once; prompt 1 never
    assert ("teacher_prompt_ids" in update_td.keys()) == sdpo_family
    if sdpo_family:
        # SDPO distils every failed sample (7 of 8), SRPO only those whose group has a success (3 of 8)
        assert metrics["sdpo_lean/distilled_sample_fraction"] == (7 / 8 if algo == "sdpo" else 3 / 8)
        assert update_td["sdpo_mask"].sum().item() == (7 if algo == "sdpo" else 3)
    assert set(phases) >= {"sdpo_prepare", "old_log_prob", "adv", "update_actor"}
    # the teacher prompts were built beside the old-log-prob pass, whose phase holds the wait for them
    assert (set(phases) >= {"sdpo_prepare_background", "sdpo_prepare_wait"}) == sdpo_family
    solved = smollm2_tokenizer.decode(batch.response_ids[0], skip_special_tokens=True)
    assert batch.shape()["sibling_solution_tokens"] == len(smollm2_tokenizer.encode(solved, add_special_tokens=False))


def test_a_rollout_that_passes_the_screen_is_refused(model_dir, smollm2_tokenizer):
    cfg = compose_config(overrides("grpo", model_dir, 1, 2, 64))
    messages = [[{"role": "user", "content": "Prove bench_0."}]]
    truth = json.dumps({"name": "bench_0", "formal_statement": STATEMENT.format(i=0)})
    proof = f"```lean4\n{STATEMENT.format(i=0)}  omega\n```"
    ids = smollm2_tokenizer(proof)["input_ids"]
    with pytest.raises(ValueError, match="passed the screen"):
        StepBatch.from_rollout(cfg, [[1, 2]], messages, [truth], [ids, ids], ["stop", "stop"], 0)
