"""The single protocol's reset on verl's real FSDP engine (`SDPOActorRolloutRefWorker` in this process on CPU): a
worker that saved its initial state (`sdpo_save_initial_state`), trained on problem A and was reset trains its first
step on problem B exactly as a fresh worker does: the same old log-probs, the same loss and metrics, the same updated
weights (Adam's moments and step count, the LR schedule), and for SDPO the same EMA teacher. So it does whichever way
it was reset: with verl's checkpoint load (`disk`), from the host-memory snapshot taken after the save (`memory`), or,
in a worker that holds no snapshot (a resumed process: `sdpo_restore_initial_state` says False), with the checkpoint
load, a snapshot right after it, and from then on from memory (`disk_then_memory`). The initial state survives verl's
checkpoint rotation.

The worker set-up and the step are test_worker_in_process's (the trainer's phases in its order, `StepBatch.step`).
"""
from __future__ import annotations

import pytest
import torch
from verl.utils import tensordict_utils as tu

from tests.sdpo_ext.test_worker_in_process import parameters, random_rollout_batch, step_batch, worker_for

pytestmark = pytest.mark.usefixtures("run_dirs")


def old_log_probs(worker, batch) -> torch.Tensor:
    """The worker's log-probs of the batch's responses, as the step's old-log-prob pass asks for them."""
    td = batch.fields.clone()
    tu.assign_non_tensor(td, calculate_entropy=True, compute_loss=False, temperature=1.0)
    return worker.compute_log_prob(td)["log_probs"].values().float().clone()


def first_step(worker, batch, sdpo: bool) -> dict:
    """Old log-probs, actor metrics (timings left out) and weights after one step on `batch`."""
    log_probs = old_log_probs(worker, batch)
    _, metrics = batch.step(worker, sdpo_enabled=sdpo)
    return {"log_probs": log_probs,
            "metrics": {k: v for k, v in metrics.items() if "timing" not in k and "perf/" not in k},
            "actor": parameters(worker.actor.engine),
            "teacher": parameters(worker.ref.engine) if sdpo else {}}


def reset(worker, how: str, initial: str, problem_a, sdpo: bool) -> None:
    """The single protocol's reset of a worker trained on A, `how` (the module docstring's three ways)."""
    if how == "disk":
        worker.load_checkpoint(initial, None, False)
        return
    if how == "memory":
        assert worker.sdpo_restore_initial_state() is True
        return
    assert worker.sdpo_restore_initial_state() is False, "a worker without a snapshot restored from memory"
    worker.load_checkpoint(initial, None, False)
    worker.sdpo_snapshot_initial_state()
    first_step(worker, problem_a, sdpo)  # A again, then the next reset comes from the snapshot
    torch.rand(1)
    assert worker.sdpo_restore_initial_state() is True


@pytest.mark.parametrize("algo,how", [("grpo", "disk"), ("sdpo", "disk"), ("grpo", "memory"), ("sdpo", "memory"),
                                      ("sdpo", "disk_then_memory")])
def test_problem_b_after_a_and_the_reset_trains_as_a_fresh_run_on_b(algo, how, model_dir, smollm2_tokenizer, cpu,
                                                                   tmp_path):
    sdpo = algo != "grpo"
    fresh = first_step(worker_for(step_batch(algo, model_dir, smollm2_tokenizer), algo),
                       step_batch(algo, model_dir, smollm2_tokenizer), sdpo)

    problem_b = step_batch(algo, model_dir, smollm2_tokenizer)  # the same rollout (seeded); verl's worker set-up
    problem_a = random_rollout_batch(problem_b.cfg, smollm2_tokenizer, 2, 4, first_length=20)  # edits its config
    queued = worker_for(problem_b, algo)
    initial = str(tmp_path / "initial" / "actor")
    queued.sdpo_save_initial_state(initial)
    if how == "memory":
        queued.sdpo_snapshot_initial_state()
    rng_at_save = torch.get_rng_state()  # the steps here draw no random numbers: the RNG is compared directly
    trained_on_a = first_step(queued, problem_a, sdpo)
    moved = max((trained_on_a["actor"][k] - fresh["actor"][k]).abs().max().item() for k in fresh["actor"])
    assert moved > 1e-4, "training on A did not move the weights away from B's: the test would not see a reset"
    torch.rand(1)  # moves the RNG on, as sampling on A would
    reset(queued, how, initial, problem_a, sdpo)
    assert torch.equal(torch.get_rng_state(), rng_at_save), "the reset did not restore the RNG"
    after_reset = first_step(queued, problem_b, sdpo)

    torch.testing.assert_close(after_reset["log_probs"], fresh["log_probs"], rtol=0, atol=0)
    assert after_reset["metrics"] == fresh["metrics"]
    for part in ("actor", "teacher"):
        assert after_reset[part].keys() == fresh[part].keys()
        for name, value in fresh[part].items():
            torch.testing.assert_close(after_reset[part][name], value, rtol=0, atol=0, msg=f"{part} {name}")


def test_the_initial_state_survives_verls_checkpoint_rotation(model_dir, smollm2_tokenizer, cpu, tmp_path):
    batch = step_batch("grpo", model_dir, smollm2_tokenizer)
    worker = worker_for(batch, "grpo")
    initial = tmp_path / "initial" / "actor"
    worker.sdpo_save_initial_state(str(initial))
    for step in (1, 2, 3):  # verl's trainer saves every checkpoint with trainer.max_actor_ckpt_to_keep
        worker.save_checkpoint(str(tmp_path / f"global_step_{step}" / "actor"), None, step, max_ckpt_to_keep=1)
    assert not (tmp_path / "global_step_1" / "actor").exists(), "verl's rotation did not run: the test sees nothing"
    assert any(initial.iterdir())
