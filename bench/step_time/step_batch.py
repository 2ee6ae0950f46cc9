"""One training step of verl's TransferQueue trainer, driven in-process against one worker
(bench/step_time/step_phases.py).

The batch has the layout verl's agent loop writes to TransferQueue (one jagged row per sample: prompts, responses,
input_ids, attention_mask, position_ids, response_mask, loss_mask). The step runs the trainer's phases in its order
and with its metadata; where the trainer's own code does not need TransferQueue it is called as is:
`SDPOTrainer._teacher_fields` (teacher prompts and routing weights, built in a thread beside the old-log-prob pass as
the trainer builds them: sdpo_ext.teacher_prep) and `SDPOTrainer._update_actor` (verl's
`_update_actor` for GRPO; ours, with the EMA update, for the SDPO family), on a trainer object whose worker group is
the in-process worker (`InProcessWorkerGroup`). The worker runs in this process, so the teacher-prompt thread shares the
GIL with its kernel launches (in a run the worker is another process): the overlap measured here is no better than a
run's. `sdpo_prepare_background` is the build's own seconds, `sdpo_prepare_wait` what the step waited for it after the
pass (inside `old_log_prob`).
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from tensordict import TensorDict

from sdpo_ext.judged import JudgedSample, is_valid
from sdpo_ext.teacher_prep import in_background

# the statement of every random batch's problems (random_rollout_batch): random text never proves it
BENCH_STATEMENT = "theorem bench_{i} (x : ℕ) (h₀ : x + 3 = 13) : x = 10 := by\n"


def _jagged(rows: list[list[int]] | list[torch.Tensor], dtype=torch.int64) -> torch.Tensor:
    return torch.nested.as_nested_tensor([torch.as_tensor(r, dtype=dtype) for r in rows], layout=torch.jagged)


class _Meta:
    """What the trainer hands the worker group: a batch whose `extra_info` becomes the TensorDict's non-tensor data."""

    def __init__(self, fields: TensorDict):
        self.fields = fields
        self.extra_info: dict[str, Any] = {}


class InProcessWorkerGroup:
    """The trainer's `actor_rollout_wg` for one in-process worker: TensorDict in, TensorDict out (no TransferQueue)."""

    def __init__(self, worker):
        self.worker = worker

    @staticmethod
    def _with_meta(batch: _Meta) -> TensorDict:
        from verl.utils import tensordict_utils as tu

        td = batch.fields.clone()
        tu.assign_non_tensor(td, **batch.extra_info)
        return td

    def update_actor(self, batch: _Meta) -> TensorDict:
        return self.worker.update_actor(self._with_meta(batch))

    def sdpo_update_ema_teacher(self) -> None:
        self.worker.sdpo_update_ema_teacher()


def _timed(function, *args) -> tuple[Any, float]:
    """(function(*args), its seconds)."""
    start = time.perf_counter()
    return function(*args), time.perf_counter() - start


def _driver(cfg, worker, tokenizer):
    """An SDPOTrainer (not initialised: no Ray, no TransferQueue) holding what its step methods read."""
    from verl.utils.config import omega_conf_to_dataclass

    from sdpo_ext.config import sdpo_loss_selected
    from sdpo_ext.trainer import SDPOTrainer

    trainer = object.__new__(SDPOTrainer)
    actor = cfg.actor_rollout_ref.actor
    trainer.config = cfg
    trainer.tokenizer = tokenizer
    trainer.sdpo_enabled = sdpo_loss_selected(actor.policy_loss)
    trainer.sdpo_config = omega_conf_to_dataclass(actor.sdpo) if trainer.sdpo_enabled else None
    trainer.distillation_config = None
    trainer.actor_rollout_wg = InProcessWorkerGroup(worker)
    trainer.timing_raw = {}
    return trainer


@dataclass
class StepBatch:
    """The rollout of one step (prompt-major: sample i belongs to prompt i // n) and its outcomes."""

    cfg: Any
    tokenizer: Any
    prompt_ids: list[list[int]]
    response_ids: list[list[int]]
    messages: list[list[dict]]
    uids: list[str]
    scores: list[float]
    feedbacks: list[str]
    fields: TensorDict = field(init=False)

    def __post_init__(self) -> None:
        prompts = [torch.tensor(p, dtype=torch.int64) for p in self.prompt_ids]
        responses = [torch.tensor(r, dtype=torch.int64) for r in self.response_ids]
        inputs = [torch.cat([p, r]) for p, r in zip(prompts, responses)]
        self.fields = TensorDict({
            "prompts": _jagged(prompts), "responses": _jagged(responses), "input_ids": _jagged(inputs),
            "attention_mask": _jagged([torch.ones_like(x) for x in inputs]),
            "position_ids": _jagged([torch.arange(len(x)) for x in inputs]),
            "response_mask": _jagged([torch.ones_like(r) for r in responses]),
            "loss_mask": _jagged([torch.ones_like(r) for r in responses]),
        }, batch_size=[len(inputs)])

    @classmethod
    def from_rollout(cls, cfg, prompt_ids: list[list[int]], messages: list[list[dict]], ground_truths: list[str],
                     response_ids: list[list[int]], finish_reasons: list[str], solved_groups: int) -> StepBatch:
        """Sample 0 of the first `solved_groups` prompts is correct (score 1, no feedback); every other sample
        scores 0 with the feedback our reward gives its text (lean_env's screen: random text has no proof)."""
        from transformers import AutoTokenizer

        from lean_env.feedback import render_feedback
        from lean_env.judge import Judgement
        from lean_env.screen import screen
        from reward.lean.score import parse_ground_truth

        n = len(response_ids) // len(prompt_ids)
        if n * len(prompt_ids) != len(response_ids) or not 0 <= solved_groups <= len(prompt_ids):
            raise ValueError(f"{len(response_ids)} responses for {len(prompt_ids)} prompts, solved {solved_groups}")
        tokenizer = AutoTokenizer.from_pretrained(cfg.actor_rollout_ref.model.path)
        texts = tokenizer.batch_decode(response_ids, skip_special_tokens=True)
        scores, feedbacks = [], []
        for i, (text, finish) in enumerate(zip(texts, finish_reasons)):
            group, index = divmod(i, n)
            if index == 0 and group < solved_groups:
                scores.append(1.0)
                feedbacks.append("")
                continue
            task = parse_ground_truth(ground_truths[group])
            screened = screen(task.formal_statement, text, finish_reason=finish, header=task.header)
            if screened.ok:
                raise ValueError(f"sample {i} passed the screen; the benchmark expects random text to fail it")
            scores.append(0.0)
            feedbacks.append(render_feedback(Judgement(screened.verdict, screened.reason)))
        return cls(cfg, tokenizer, [prompt_ids[i // n] for i in range(len(response_ids))], response_ids,
                   [messages[i // n] for i in range(len(response_ids))], [f"p{i // n}" for i in range(len(texts))],
                   scores, feedbacks)

    def shape(self) -> dict:
        """Token counts, the solved fraction, and the fewest tokens of a solved sample's text after the reprompt's
        think-strip (the sibling solution its group's teacher prompts show; None without a solved sample)."""
        from sdpo_ext.teacher.reprompt import remove_thinking

        prompt = sum(map(len, self.prompt_ids))
        response = sum(map(len, self.response_ids))
        solved = [r for r, s in zip(self.response_ids, self.scores) if is_valid(s, None)]
        texts = self.tokenizer.batch_decode(solved, skip_special_tokens=True)
        solutions = [len(self.tokenizer.encode(remove_thinking(t), add_special_tokens=False)) for t in texts]
        return {"samples": len(self.response_ids), "prompt_tokens": prompt, "response_tokens": response,
                "solved_fraction": sum(is_valid(s, None) for s in self.scores) / len(self.scores),
                "sibling_solution_tokens": min(solutions, default=None)}

    def _grpo_advantages(self) -> torch.Tensor:
        from verl.trainer.ppo.core_algos import compute_grpo_outcome_advantage

        width = max(map(len, self.response_ids))
        mask = torch.zeros(len(self.response_ids), width)
        rewards = torch.zeros_like(mask)
        for i, (r, s) in enumerate(zip(self.response_ids, self.scores)):
            mask[i, : len(r)] = 1.0
            rewards[i, len(r) - 1] = s
        norm = self.cfg.algorithm.get("norm_adv_by_std_in_grpo", True)
        advantages, _ = compute_grpo_outcome_advantage(rewards, mask, np.array(self.uids, dtype=object),
                                                       norm_adv_by_std_in_grpo=norm)
        return _jagged([advantages[i, : len(r)] for i, r in enumerate(self.response_ids)], dtype=torch.float32)

    def step(self, worker, sdpo_enabled: bool) -> tuple[dict[str, float], dict[str, float]]:
        """Seconds per phase of one step (names as verl's timing_s/*) and the actor's metrics."""
        from verl.utils import tensordict_utils as tu
        from verl.utils.device import get_torch_device
        from verl.workers.utils.padding import response_from_nested

        def synced() -> float:
            get_torch_device().synchronize()
            return time.perf_counter()

        trainer = _driver(self.cfg, worker, self.tokenizer)
        if trainer.sdpo_enabled != sdpo_enabled:
            raise ValueError(f"the recipe selects sdpo_enabled={trainer.sdpo_enabled}, the benchmark {sdpo_enabled}")
        temperature = self.cfg.actor_rollout_ref.rollout.temperature
        phases: dict[str, float] = {}

        t0 = synced()  # the driver's sample preparation (SDPOTrainer._prepare_samples): decode, teacher prompts
        texts = self.tokenizer.batch_decode(self.response_ids, skip_special_tokens=True)
        metrics: dict[str, float] = {}
        teacher = None
        if sdpo_enabled:  # built beside the old-log-prob pass, as the trainer does (sdpo_ext.teacher_prep)
            data = {"raw_prompt": self.messages, "prompts": self.fields["prompts"]}
            samples = [JudgedSample(key=str(i), uid=uid, problem=uid, score=score, text=text,
                                    response_tokens=len(ids), feedback=feedback)
                       for i, (uid, score, text, ids, feedback)
                       in enumerate(zip(self.uids, self.scores, texts, self.response_ids, self.feedbacks))]
            teacher = in_background(lambda: _timed(trainer._teacher_fields, data, samples, metrics))
        t1 = synced()
        phases["sdpo_prepare"] = t1 - t0

        td = self.fields.clone()  # old log-probs (PPOTrainer._compute_old_log_prob's metadata)
        tu.assign_non_tensor(td, calculate_entropy=True, compute_loss=False, temperature=temperature)
        output = worker.compute_log_prob(td)
        old_log_probs = response_from_nested(output["log_probs"], self.fields["response_mask"])
        update = {}
        if teacher is not None:
            waited = synced()
            update, phases["sdpo_prepare_background"] = teacher.result()
            phases["sdpo_prepare_wait"] = time.perf_counter() - waited
        t2 = synced()
        phases["old_log_prob"] = t2 - t1

        advantages = self._grpo_advantages()
        t3 = synced()
        phases["adv"] = t3 - t2

        fields = self.fields.clone()
        fields["old_log_probs"] = old_log_probs.to(torch.float32)
        fields["advantages"] = advantages
        fields["returns"] = advantages
        for key, value in update.items():
            fields[key] = value
        trainer._update_actor(_Meta(fields), metrics)
        t4 = synced()
        phases["update_actor"] = t4 - t3
        phases.update(trainer.timing_raw)  # sdpo_ema_update, nested in update_actor
        teacher = metrics.get("actor/timing_s/sdpo_teacher_forward")
        if teacher is not None:
            phases["sdpo_teacher_forward"] = teacher
        return {k: round(float(v), 3) for k, v in phases.items()}, {k: float(v) for k, v in metrics.items()
                                                                     if np.isscalar(v)}


def bench_ground_truths(prompts: int) -> list[str]:
    """The ground truths of `prompts` problems bench_0.. with BENCH_STATEMENT."""
    return [json.dumps({"name": f"bench_{i}", "formal_statement": BENCH_STATEMENT.format(i=i)})
            for i in range(prompts)]


def random_rollout_batch(cfg, tokenizer, prompts: int = 2, n: int = 4, first_length: int = 30) -> StepBatch:
    """`prompts` x `n` samples of random text (first_length, first_length + 1, ... tokens); sample 0 of prompt 0 is
    the one correct attempt (the tests' batch and bench/ttrl/reset_cost.py's)."""
    messages = [[{"role": "user", "content": f"Prove bench_{i}."}] for i in range(prompts)]
    prompt_ids = [tokenizer.apply_chat_template(m, add_generation_prompt=True, tokenize=True, return_dict=False)
                  for m in messages]
    generator = torch.Generator().manual_seed(0)
    responses = [torch.randint(100, 40_000, (first_length + i,), generator=generator).tolist()
                 for i in range(prompts * n)]
    return StepBatch.from_rollout(cfg, prompt_ids, messages, bench_ground_truths(prompts), responses,
                                  ["length"] * len(responses), 1)
