"""SDPOTrainer's per-step preparation on a realistic batch, with TransferQueue replaced by a dict.

Checks: infra samples get response_mask = loss_mask = 0; every judged sample is in the attempt log; teacher
prompts are built for failed samples (feedback) and masked where there is no signal, beside the old-log-prob pass and
to the same fields as in line; TTRL stops after a valid proof (set-TTRL through the same hooks:
tests/sdpo_ext/ttrl/test_hooks.py).
"""
from __future__ import annotations

import json
import threading
from concurrent.futures import Future
from types import SimpleNamespace

import pytest
import torch
from tensordict import TensorDict
from verl.trainer.ppo.v1.trainer_sync import PPOTrainerSync
from verl.utils import tensordict_utils as tu

import sdpo_ext.trainer as trainer_mod
from sdpo_attempts.log import AttemptLog
from sdpo_ext.config import SDPOConfig
from sdpo_ext.teacher_prep import in_background
from sdpo_ext.trainer import SDPOTrainer
from sdpo_ext.ttrl.problem_set import TTRLSet


def nested(rows):
    return torch.nested.as_nested_tensor(rows, layout=torch.jagged)


class FakeBatch(SimpleNamespace):
    def __len__(self):
        return len(self.keys)


class FakeTQ:
    def __init__(self, data):
        self.data, self.puts = data, []

    def kv_batch_get(self, keys, partition_id, select_fields):
        return self.data.select(*select_fields)

    def kv_batch_put(self, keys, partition_id, fields):
        self.puts.append(fields)


def merged(puts: list[TensorDict]) -> TensorDict:
    """The fields of every TransferQueue put of a step, later puts over earlier ones."""
    fields = {}
    for put in puts:
        fields.update({key: put[key] for key in put.keys()})
    return TensorDict(fields, batch_size=puts[0].batch_size)


def old_log_prob_step(trainer, batch, metrics: dict, monkeypatch, verl_pass=None):
    """SDPOTrainer._compute_old_log_prob with verl's own pass (the workers' log-probs) replaced by `verl_pass(batch)`
    (default: nothing); returns what it returns."""
    def fake_pass(self, batch, metrics):
        if verl_pass is not None:
            verl_pass(batch)
        return batch

    monkeypatch.setattr(PPOTrainerSync, "_compute_old_log_prob", fake_pass, raising=False)
    trainer.timing_raw = {}
    return trainer._compute_old_log_prob(batch, metrics)


def build(tokenizer, verdicts, infra, with_verdicts=True):
    messages = [{"role": "system", "content": "You prove theorems."}, {"role": "user", "content": "Prove t."}]
    prompt_ids = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True, return_dict=False)
    texts = [f"attempt {i}: by simp" for i in range(len(verdicts))]
    responses = [torch.tensor(tokenizer.encode(t, add_special_tokens=False)) for t in texts]
    scores = [1.0 if v == "valid" else 0.0 for v in verdicts]
    rm = [torch.zeros(len(r)) for r in responses]
    for row, s in zip(rm, scores):
        row[-1] = s
    info = [{"reward_extra_info": {"verdict": v, "feedback": "" if v in ("valid", "infra") else f"line 2: error {i}",
                                   "infra": float(bad), "score": s}}
            for i, (v, bad, s) in enumerate(zip(verdicts, infra, scores))]
    if not with_verdicts:  # a reward that only scores (MATH answer checking)
        info = [{"reward_extra_info": {"infra": r["reward_extra_info"]["infra"],
                                       "score": r["reward_extra_info"]["score"]}}
                for r in info]
    data = tu.get_tensordict({
        "uid": ["g0"] * len(verdicts),
        "responses": nested(responses),
        "response_mask": nested([torch.ones(len(r), dtype=torch.int64) for r in responses]),
        "loss_mask": nested([torch.ones(len(r), dtype=torch.int64) for r in responses]),
        "rm_scores": nested(rm),
        "extra_fields": info,
        "extra_info": [{"name": "t"}] * len(verdicts),
        "raw_prompt": [messages] * len(verdicts),
        "prompts": nested([torch.tensor(prompt_ids)] * len(verdicts)),
    })
    batch = FakeBatch(keys=[f"k{i}" for i in range(len(verdicts))], partition_id="train",
                            tags=[{} for _ in verdicts])
    return data, batch, prompt_ids


def make_trainer(tokenizer, tmp_path):
    trainer = object.__new__(SDPOTrainer)
    trainer.tokenizer = tokenizer
    trainer.config = SimpleNamespace(data={"apply_chat_template_kwargs": {}})
    trainer.sdpo_enabled = True
    trainer.sdpo_config = SDPOConfig()
    trainer.attempt_log = AttemptLog(str(tmp_path / "attempts.jsonl"), method="sdpo", run_id="r", seed=0)
    trainer.ttrl_set = TTRLSet(["t"], budget=64)  # TTRL on the one theorem "t" (a set of one)
    trainer.global_steps, trainer.total_training_steps = 3, 100
    trainer.run_config = SimpleNamespace()  # an sdpo-lean run: the step hooks run
    return trainer


def prepare(tokenizer, tmp_path, monkeypatch, verdicts):
    """Run one step's preparation; returns (the single TransferQueue update, trainer, metrics, student prompt ids)."""
    data, batch, prompt_ids = build(tokenizer, verdicts, [v == "infra" for v in verdicts])
    fake = FakeTQ(data)
    monkeypatch.setattr(trainer_mod, "tq", fake)
    trainer = make_trainer(tokenizer, tmp_path)
    metrics = {}
    old_log_prob_step(trainer, batch, metrics, monkeypatch)
    return merged(fake.puts), trainer, metrics, prompt_ids


def test_prepare_masks_infra_logs_attempts_builds_teacher_and_stops(tmp_path, monkeypatch, smollm2_tokenizer):
    verdicts = ["lean_error", "infra", "valid", "lean_error"]
    update, trainer, metrics, prompt_ids = prepare(smollm2_tokenizer, tmp_path, monkeypatch, verdicts)
    masks = [row.sum().item() for row in update["response_mask"].unbind()]
    assert masks[1] == 0 and all(m > 0 for i, m in enumerate(masks) if i != 1)
    assert [row.sum().item() for row in update["loss_mask"].unbind()] == masks
    # infra: masked; the valid sample: no other successful sibling and no feedback -> no teacher signal
    assert update["sdpo_mask"].tolist() == [1.0, 0.0, 0.0, 1.0]
    teacher = [row.tolist() for row in update["teacher_prompt_ids"].unbind()]
    assert teacher[0][: len(prompt_ids) - 6] == prompt_ids[: len(prompt_ids) - 6]  # student prompt kept verbatim
    decoded = smollm2_tokenizer.decode(teacher[0])
    assert "Correct solution" in decoded and "attempt 2" in decoded  # sibling demonstration
    assert "Correctly solve the original question." in decoded

    log = [json.loads(line) for line in (tmp_path / "attempts.jsonl").read_text().splitlines()]
    assert [r["verdict"] for r in log] == verdicts and [r["attempt"] for r in log] == [1, 1, 2, 3]
    assert log[2]["proof"] == "attempt 2: by simp" and log[1]["infra"] == 1
    assert metrics["sdpo_lean/infra_fraction"] == pytest.approx(0.25)
    assert trainer.total_training_steps == 3  # TTRL: stop after this step


def test_no_stop_and_feedback_used_without_success(tmp_path, monkeypatch, smollm2_tokenizer):
    update, trainer, metrics, _ = prepare(smollm2_tokenizer, tmp_path, monkeypatch, ["lean_error", "lean_error"])
    decoded = smollm2_tokenizer.decode(update["teacher_prompt_ids"].unbind()[1].tolist())
    assert "feedback from your unsuccessful earlier attempt" in decoded and "line 2: error 1" in decoded
    assert trainer.total_training_steps == 100
    assert metrics["self_distillation/feedback_used_fraction"] == 1.0


def test_rewards_without_verdicts_count_full_scores_as_solved(tmp_path, monkeypatch, smollm2_tokenizer):
    data, batch, _ = build(smollm2_tokenizer, ["valid", "lean_error", "lean_error", "lean_error"], [False] * 4,
                           with_verdicts=False)
    monkeypatch.setattr(trainer_mod, "tq", FakeTQ(data))
    trainer = make_trainer(smollm2_tokenizer, tmp_path)
    trainer.sdpo_enabled = False
    metrics = {}
    old_log_prob_step(trainer, batch, metrics, monkeypatch)
    assert metrics["sdpo_lean/solved_fraction"] == pytest.approx(0.25)
    assert trainer.total_training_steps == 3  # TTRL stops on the full score too
    log = [json.loads(line) for line in (tmp_path / "attempts.jsonl").read_text().splitlines()]
    assert log[0]["proof"] == "attempt 0: by simp" and "proof" not in log[1]


def test_settings_the_sdpo_loss_cannot_honour_are_rejected():
    from omegaconf import OmegaConf

    from sdpo_ext.startup.checks import sdpo_setting_errors

    def config(**flags):
        return OmegaConf.create({
            "actor_rollout_ref": {"actor": {"use_kl_loss": flags.get("kl", False),
                                            "entropy_coeff": flags.get("ent", 0.0)},
                                  "model": {"use_fused_kernels": flags.get("fused", False)}},
            "algorithm": {"use_kl_in_reward": flags.get("kl_reward", False)},
        })

    assert sdpo_setting_errors(config(), grpo_weight=0.0) == []
    assert sdpo_setting_errors(config(ent=0.01), grpo_weight=0.5) == []  # the hybrid's PPO term applies it
    for flag, key in (("kl", "use_kl_loss"), ("kl_reward", "use_kl_in_reward"), ("ent", "entropy_coeff"),
                      ("fused", "use_fused_kernels")):
        (error,) = sdpo_setting_errors(config(**{flag: 0.01 if flag == "ent" else True}), grpo_weight=0.0)
        assert key in error


@pytest.mark.parametrize("variant, distill, pg, mask", [
    ("sdpo", [1, 0, 1, 1], [0, 0, 0, 0], [1, 0, 0, 1]),
    # SRPO: the valid sample is routed to the policy gradient, failed ones (their group has a correct sample) to
    # distillation, infra to neither
    ("srpo", [1, 0, 0, 1], [0, 0, 1, 0], [1, 0, 0, 1]),
    # SC-SDPO: one question, 1 success of 3 valid: sqrt(p(1-p)) over its mean over such questions = 1
    ("sc_sdpo", [1, 0, 1, 1], [0, 0, 0, 0], [1, 0, 0, 1]),
])
def test_variant_weights_reach_the_worker(tmp_path, monkeypatch, smollm2_tokenizer, variant, distill, pg, mask):
    data, batch, _ = build(smollm2_tokenizer, ["lean_error", "infra", "valid", "lean_error"],
                           [False, True, False, False])
    fake = FakeTQ(data)
    monkeypatch.setattr(trainer_mod, "tq", fake)
    trainer = make_trainer(smollm2_tokenizer, tmp_path)
    trainer.sdpo_config = SDPOConfig(variant=variant)
    metrics = {}
    old_log_prob_step(trainer, batch, metrics, monkeypatch)
    update = merged(fake.puts)
    assert update["sdpo_distill_weight"].tolist() == pytest.approx(distill)
    assert update["sdpo_pg_weight"].tolist() == pg
    assert update["sdpo_mask"].tolist() == mask  # no teacher forward where the distillation weight is 0
    assert metrics["sdpo_lean/distilled_sample_fraction"] == pytest.approx(sum(mask) / 4)


# ---------------------------------------------------------------- teacher prompts beside the old-log-prob pass
VERDICTS = ["lean_error", "infra", "valid", "lean_error"]


def test_teacher_prompts_are_built_while_the_old_log_prob_pass_runs(tmp_path, monkeypatch, smollm2_tokenizer):
    """The build waits until verl's pass has started: built in line before the pass (before issue 49), it times out."""
    data, batch, _ = build(smollm2_tokenizer, VERDICTS, [v == "infra" for v in VERDICTS])
    fake = FakeTQ(data)
    monkeypatch.setattr(trainer_mod, "tq", fake)
    trainer = make_trainer(smollm2_tokenizer, tmp_path)
    pass_started = threading.Event()
    in_line = SDPOTrainer._teacher_fields

    def teacher_fields_after_the_pass_started(self, *args):
        assert pass_started.wait(timeout=20), "the teacher prompts were built before the old-log-prob pass"
        return in_line(self, *args)

    monkeypatch.setattr(SDPOTrainer, "_teacher_fields", teacher_fields_after_the_pass_started)
    seen_by_the_pass = []

    def verl_pass(batch):
        seen_by_the_pass.append(sorted(key for put in fake.puts for key in put.keys()))
        pass_started.set()

    metrics = {}
    old_log_prob_step(trainer, batch, metrics, monkeypatch, verl_pass)
    assert seen_by_the_pass == [["loss_mask", "response_mask"]]  # the infra masks are in before the pass
    assert "teacher_prompt_ids" in merged(fake.puts).keys()  # the teacher fields after it, before the update
    assert "self_distillation/reprompt_sample_fraction" in metrics and "sdpo_prepare_wait" in trainer.timing_raw


def test_the_overlapped_build_gives_the_fields_and_metrics_of_the_build_in_line(tmp_path, monkeypatch,
                                                                                smollm2_tokenizer):
    def run(inline: bool):
        if inline:  # the build as before issue 49: called at once, in this thread
            monkeypatch.setattr(trainer_mod, "in_background", lambda build: completed(build()))
        else:
            monkeypatch.setattr(trainer_mod, "in_background", in_background)
        data, batch, _ = build(smollm2_tokenizer, VERDICTS, [v == "infra" for v in VERDICTS])
        fake = FakeTQ(data)
        monkeypatch.setattr(trainer_mod, "tq", fake)
        metrics = {}
        old_log_prob_step(make_trainer(smollm2_tokenizer, tmp_path / str(inline)), batch, metrics, monkeypatch)
        return merged(fake.puts), metrics

    def completed(value):
        future = Future()
        future.set_result(value)
        return future

    (overlapped, metrics), (in_line, metrics_in_line) = run(inline=False), run(inline=True)
    assert sorted(overlapped.keys()) == sorted(in_line.keys()) and metrics == metrics_in_line
    for key in in_line.keys():
        a, b = overlapped[key], in_line[key]
        if a.is_nested:
            a, b = a.unbind(), b.unbind()
            assert len(a) == len(b) and all(torch.equal(x, y) for x, y in zip(a, b)), key
        else:
            assert torch.equal(a, b), key


def test_an_error_in_the_background_build_stops_the_step(tmp_path, monkeypatch, smollm2_tokenizer):
    data, batch, _ = build(smollm2_tokenizer, VERDICTS, [v == "infra" for v in VERDICTS])
    monkeypatch.setattr(trainer_mod, "tq", FakeTQ(data))
    trainer = make_trainer(smollm2_tokenizer, tmp_path)

    def broken(self, *args):
        raise RuntimeError("chat template failed")

    monkeypatch.setattr(SDPOTrainer, "_teacher_fields", broken)
    with pytest.raises(RuntimeError, match="chat template failed"):
        old_log_prob_step(trainer, batch, {}, monkeypatch)
