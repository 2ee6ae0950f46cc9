"""SDPO worker: verl's ActorRolloutRefWorker with the SDPO loss hook, the EMA teacher and its checkpoint.

Route (why this one): verl 0.9.1's `register_policy_loss` sees only per-token log-probs, so a top-K divergence
needs the student's logits. The FSDP engine hands them to the loss function when a micro-batch carries
`distillation_use_topk=True` (the logits-processor path of verl's own distillation). Inside that call, for the
same micro-batch, we run the teacher weights (no grad) on [teacher prompt | same response tokens] through the
teacher engine's own `forward_step` (so remove-padding, temperature scaling and autocast are verl's), take the
student's top-K ids, gather both log-softmaxes there and return the per-token divergence. This is the authors'
design (teacher forward per micro-batch, support from the current student) and it inherits verl's scaling:
FSDP sharding, any micro-batch size, dynamic batch size, Ray placement. Ulysses sequence parallelism is not
supported for the teacher forward (clear error).
"""
from __future__ import annotations

import dataclasses
import logging
import os
import time
from contextlib import nullcontext
from typing import Callable, Optional

import torch
from tensordict import TensorDict

from verl.single_controller.base.decorator import Dispatch, register
from verl.trainer.ppo.core_algos import get_policy_loss_fn
from verl.utils import tensordict_utils as tu
from verl.utils.metric import AggregationType, Metric
from verl.workers.engine_workers import ActorRolloutRefWorker
from verl.workers.utils.losses import ppo_loss
from verl.workers.utils.padding import no_padding_2_padding

from sdpo_ext.alignment import jagged, response_logit_rows
from sdpo_ext.config import SDPOActorConfig
from sdpo_ext.loss import (
    aggregate_loss,
    distillation_loss_matrix,
    divergence,
    entropy,
    full_log_softmax,
    gather_logp,
    importance_weights,
    sampled_token_loss_matrix,
    student_topk,
    token_weights,
)
from sdpo_ext.teacher import ema_update_, trust_region_logits

logger = logging.getLogger(__name__)

TEACHER_STATE_DIR = "sdpo_teacher"
# rows per fp32 softmax block when measuring entropies (bounds the extra memory to ENTROPY_CHUNK_ROWS x vocab)
ENTROPY_CHUNK_ROWS = 256


def _lengths(nested: torch.Tensor) -> torch.Tensor:
    return nested.offsets().diff()


def _synchronized_clock() -> float:
    """perf_counter after the GPU queue drained, so a phase's time is the GPU work it issued."""
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return time.perf_counter()


def _with_vanilla_policy_loss(config: SDPOActorConfig) -> SDPOActorConfig:
    """A copy of the actor config whose policy loss is verl's vanilla PPO clip loss."""
    return dataclasses.replace(config, policy_loss=dataclasses.replace(config.policy_loss, loss_mode="vanilla"))


class _LogitRowsCapture:
    """A loss_function for `engine.forward_step` that keeps the logits rows predicting the response tokens."""

    def __init__(self, rows: torch.Tensor):
        self.rows = rows
        self.logits: Optional[torch.Tensor] = None

    def __call__(self, student_logits=None, data=None, model_output=None, dp_group=None):
        if student_logits is not None:  # logits-processor call: (1, nnz, V)
            self.logits = student_logits.squeeze(0)[self.rows.to(student_logits.device)]
            return {"sdpo_capture": torch.zeros_like(student_logits[..., 0])}
        return torch.zeros((), device=self.logits.device), {}


class SDPOLoss:
    """Called twice per micro-batch by verl's FSDP engine: first with the student logits (per-token
    divergence against the teacher), then with the model outputs (aggregated loss + metrics)."""

    def __init__(self, config: SDPOActorConfig, teacher_logits: Callable[[TensorDict, torch.Tensor], torch.Tensor]):
        self.config = config
        self.sdpo = config.sdpo
        # the hybrid's GRPO term: verl's ppo_loss with the vanilla policy loss (loss_mode=sdpo is only a guard)
        self.grpo_config = _with_vanilla_policy_loss(config) if config.sdpo.uses_policy_gradient else None
        self.teacher_logits = teacher_logits
        self._teacher_seconds = 0.0

    def __call__(self, student_logits=None, data=None, model_output=None, dp_group=None):
        if student_logits is not None:
            return self.per_token(student_logits, data)
        return self.loss(model_output, data, dp_group)

    # ---------------------------------------------------------------- per token (logits processor)
    def per_token(self, student_logits: torch.Tensor, data: TensorDict) -> dict[str, torch.Tensor]:
        logits = student_logits.squeeze(0)  # (nnz, V), already divided by the rollout temperature
        nnz = logits.shape[0]
        responses = data["responses"]
        response_lens = _lengths(responses)
        rows = response_logit_rows(_lengths(data["input_ids"]), response_lens).to(logits.device)
        active = data["sdpo_mask"].to(torch.bool).cpu()
        sample_of_row = torch.repeat_interleave(torch.arange(len(response_lens)), response_lens.cpu())
        keep = active[sample_of_row].to(logits.device)
        zeros = lambda: torch.zeros(nnz, dtype=torch.float32, device=logits.device)  # noqa: E731
        div_rows, teacher_token_rows, teacher_entropy_rows, student_entropy_rows = zeros(), zeros(), zeros(), zeros()
        self._teacher_seconds = 0.0
        if bool(active.any()):
            labels = torch.cat([r for r, a in zip(responses.unbind(), active.tolist()) if a]).to(logits.device)
            start = _synchronized_clock()
            teacher = self.teacher_logits(data, active)
            self._teacher_seconds = _synchronized_clock() - start
            if self.sdpo.teacher_temperature != 1.0:
                teacher = teacher / self.sdpo.teacher_temperature
            student = logits[rows[keep]]
            div, teacher_token = self._divergence(student, teacher, labels)
            div_rows = div_rows.index_put((rows[keep],), div.float())
            teacher_token_rows[rows[keep]] = teacher_token.float()
            teacher_entropy_rows[rows[keep]] = entropy(teacher, ENTROPY_CHUNK_ROWS)
            student_entropy_rows[rows[keep]] = entropy(student, ENTROPY_CHUNK_ROWS)
        return {
            "sdpo_divergence": div_rows.unsqueeze(0),
            "sdpo_teacher_token_logp": teacher_token_rows.unsqueeze(0),
            "sdpo_teacher_entropy": teacher_entropy_rows.unsqueeze(0),
            "sdpo_student_entropy": student_entropy_rows.unsqueeze(0),
        }

    def _divergence(self, student: torch.Tensor, teacher: torch.Tensor, labels: torch.Tensor):
        """(per-row divergence, teacher log-prob of the sampled token) on the chosen support."""
        labels = labels.unsqueeze(-1)
        teacher_token = gather_logp(teacher, labels).squeeze(-1).detach()
        mode = self.sdpo.distillation_mode
        if mode == "token":
            return torch.zeros_like(teacher_token), teacher_token
        if mode == "full":
            student_logp = full_log_softmax(student)
            teacher_logp = full_log_softmax(teacher).detach()
        else:
            student_logp, ids = student_topk(student, self.sdpo.topk)
            teacher_logp = gather_logp(teacher, ids).detach()
        return divergence(student_logp, teacher_logp, self.sdpo.alpha, add_tail=self.sdpo.add_tail), teacher_token

    # ---------------------------------------------------------------- loss (after the forward)
    def loss(self, model_output: dict, data: TensorDict, dp_group=None):
        cfg = self.config
        log_prob = no_padding_2_padding(model_output["log_probs"], data)
        fields = ["response_mask", "old_log_probs"] + (["rollout_is_weights"] if "rollout_is_weights" in data else [])
        if self.sdpo.variant == "srpo":
            fields.append("advantages")
        padded = data.select(*fields).to_padded_tensor()
        response_mask = padded["response_mask"].to(log_prob.dtype)
        is_weights = importance_weights(log_prob, padded["old_log_probs"], self.sdpo.is_clip, padded.get("rollout_is_weights"))
        sample_mask = data["sdpo_mask"].to(log_prob.device)
        distill_weight = data["sdpo_distill_weight"].to(log_prob.device, torch.float32)
        teacher_token = no_padding_2_padding(model_output["sdpo_teacher_token_logp"], data)
        teacher_entropy = no_padding_2_padding(model_output["sdpo_teacher_entropy"], data)
        student_entropy = no_padding_2_padding(model_output["sdpo_student_entropy"], data)
        token_weight = token_weights(teacher_entropy, student_entropy, self.sdpo.token_weighting,
                                     response_mask * sample_mask[:, None], self.sdpo.entropy_weight_beta)
        weights = is_weights * token_weight * distill_weight[:, None]
        if self.sdpo.distillation_mode == "token":
            loss_mat = sampled_token_loss_matrix(log_prob, teacher_token, weights, sample_mask)
        else:
            divergence_mat = no_padding_2_padding(model_output["sdpo_divergence"], data)
            loss_mat = distillation_loss_matrix(divergence_mat, weights, sample_mask)

        global_info = {
            "dp_size": data["dp_size"],
            "batch_num_tokens": data["batch_num_tokens"],
            "global_batch_size": data["global_batch_size"],
            "loss_scale_factor": cfg.loss_scale_factor,
        }
        sdpo_loss = aggregate_loss(loss_mat, response_mask, cfg.loss_agg_mode, **global_info)
        summed = global_info["dp_size"] > 1 or any(v is not None for k, v in global_info.items() if k != "dp_size")
        aggregation = AggregationType.SUM if summed else AggregationType.MEAN
        metrics = self._metrics(log_prob, teacher_token, teacher_entropy, student_entropy, token_weight, is_weights,
                                response_mask, sample_mask, distill_weight)
        metrics["sdpo/loss"] = Metric(value=sdpo_loss, aggregation=aggregation)
        if self.sdpo.distillation_mode != "token":
            active_tokens = response_mask * sample_mask.unsqueeze(-1)
            metrics["sdpo/divergence_mean"] = _masked_mean(divergence_mat, active_tokens)

        total = sdpo_loss
        if self.sdpo.grpo_weight > 0:
            grpo_loss, grpo_metrics = ppo_loss(self.grpo_config, model_output, data, dp_group)
            total = self.sdpo.grpo_weight * grpo_loss + (1.0 - self.sdpo.grpo_weight) * sdpo_loss
            metrics.update(grpo_metrics)
        elif self.sdpo.variant == "srpo":
            pg_weight = data["sdpo_pg_weight"].to(log_prob.device, torch.float32)
            pg_loss, pg_metrics = self._routed_policy_gradient(log_prob, padded, pg_weight, global_info)
            total = pg_loss + sdpo_loss
            metrics.update(Metric.from_dict(pg_metrics, aggregation=AggregationType.MEAN))
            metrics["sdpo/pg_loss"] = Metric(value=pg_loss, aggregation=aggregation)
        metrics["actor/pg_loss"] = Metric(value=total, aggregation=aggregation)
        return total, metrics

    def _routed_policy_gradient(self, log_prob, padded, pg_weight: torch.Tensor, global_info: dict):
        """SRPO's policy-gradient term: verl's vanilla PPO-clip loss on the GRPO advantages times the per-sample routing
        weight (1 for every valid sample not routed to distillation; 0 for the distilled and infra samples, which still
        count in the normaliser)."""
        self.grpo_config.global_batch_info.update(global_info)
        return get_policy_loss_fn("vanilla")(
            old_log_prob=padded["old_log_probs"],
            log_prob=log_prob,
            advantages=padded["advantages"] * pg_weight[:, None],
            response_mask=padded["response_mask"].to(torch.bool),
            loss_agg_mode=self.config.loss_agg_mode,
            config=self.grpo_config,
            rollout_is_weights=padded.get("rollout_is_weights"),
        )

    def _metrics(self, log_prob, teacher_token, teacher_entropy, student_entropy, token_weight, is_weights,
                 response_mask, sample_mask, distill_weight) -> dict:
        """Means over the distilled tokens (response tokens of samples with a teacher signal), plus the final token
        of each distilled sample (its end-of-turn token unless the reply was cut at the length limit)."""
        active_tokens = response_mask * sample_mask.unsqueeze(-1)
        final = torch.zeros_like(response_mask)
        lengths = response_mask.sum(-1).long()
        rows = (lengths > 0).nonzero().squeeze(-1)
        final[rows, lengths[rows] - 1] = 1.0
        final_active = final * active_tokens
        gap = teacher_token - log_prob.detach()
        return {
            "sdpo/teacher_minus_student_token_logp": _masked_mean(gap, active_tokens),
            "sdpo/teacher_minus_student_final_token_logp": _masked_mean(gap, final_active),
            "sdpo/teacher_entropy": _masked_mean(teacher_entropy, active_tokens),
            "sdpo/student_entropy": _masked_mean(student_entropy, active_tokens),
            "sdpo/teacher_flatter_fraction": _masked_mean((teacher_entropy > student_entropy).float(), active_tokens),
            "sdpo/token_weight_mean": _masked_mean(token_weight, active_tokens),
            "sdpo/is_weight_mean": _masked_mean(is_weights, response_mask),
            "sdpo/active_sample_fraction": sample_mask.float().mean().item(),
            "sdpo/distill_weight_mean": distill_weight.mean().item(),
            # wall time of the teacher forward in this micro-batch, summed over micro-batches
            "timing_s/sdpo_teacher_forward": Metric(value=self._teacher_seconds, aggregation=AggregationType.SUM),
        }


def _masked_mean(values: torch.Tensor, mask: torch.Tensor) -> float:
    return float((values * mask).sum().item() / mask.sum().clamp_min(1.0).item())


class SDPOActorRolloutRefWorker(ActorRolloutRefWorker):
    """Adds the SDPO loss hook and the teacher (EMA / trust-region / frozen / live) to verl's worker."""

    sdpo_config: Optional[SDPOActorConfig] = None

    @register(dispatch_mode=Dispatch.ONE_TO_ALL)
    def init_model(self):
        super().init_model()
        if self.actor is None:
            return
        actor_config = self.loss_fn.keywords.get("config") if hasattr(self.loss_fn, "keywords") else None
        if not isinstance(actor_config, SDPOActorConfig) or not actor_config.sdpo_enabled:
            return
        if self.actor.engine.ulysses_sequence_parallel_size > 1:
            raise NotImplementedError("SDPO teacher forward does not support Ulysses sequence parallelism (sp > 1)")
        self.sdpo_config = actor_config
        if actor_config.sdpo.log_prob_backward_must_not_overwrite_logits:
            os.environ["VERL_DISABLE_FLASH_ATTN_CE"] = "1"  # verl's switch, read at every log-prob call
        mode = actor_config.sdpo.teacher.mode
        if mode in ("ema", "trust_region") and self.ref is None:
            raise RuntimeError(
                f"sdpo.teacher.mode={mode} needs a separate reference model; with LoRA use mode=frozen "
                "(base model with the adapter disabled) or live"
            )
        self.actor.set_loss_fn(SDPOLoss(actor_config, self._teacher_response_logits))
        logger.info("sdpo-lean: SDPO loss installed (teacher=%s, mode=%s)", mode, actor_config.sdpo.distillation_mode)

    # ---------------------------------------------------------------- teacher forward
    def _teacher_batch(self, micro_batch: TensorDict, active: torch.Tensor) -> tuple[TensorDict, torch.Tensor]:
        """[teacher prompt | response] for the active samples, and the rows predicting the response tokens."""
        if micro_batch["position_ids"].dim() == 3:
            raise NotImplementedError("SDPO teacher forward supports 1-D position ids (text models) only")
        idx = active.nonzero().squeeze(-1).tolist()
        prompts = micro_batch["teacher_prompt_ids"].unbind()
        responses = micro_batch["responses"].unbind()
        sequences = [torch.cat([prompts[i].to(responses[i].device), responses[i]]) for i in idx]
        positions = [torch.arange(len(s), device=s.device) for s in sequences]
        temperature = micro_batch["temperature"]
        if isinstance(temperature, torch.Tensor) and temperature.dim() > 0:
            temperature = temperature[idx]
        batch = tu.get_tensordict({"input_ids": jagged(sequences), "position_ids": jagged(positions)})
        tu.assign_non_tensor(
            batch,
            temperature=temperature,
            use_remove_padding=tu.get_non_tensor_data(micro_batch, "use_remove_padding", True),
            pad_token_id=tu.get_non_tensor_data(micro_batch, "pad_token_id", 0),
            use_fused_kernels=False,
            calculate_entropy=False,
            distillation_use_topk=True,
            distillation_only=True,
        )
        seq_lens = torch.tensor([len(s) for s in sequences])
        resp_lens = torch.tensor([len(responses[i]) for i in idx])
        return batch, response_logit_rows(seq_lens, resp_lens)

    def _forward_rows(self, engine, batch: TensorDict, rows: torch.Tensor, eval_ctx: bool) -> torch.Tensor:
        capture = _LogitRowsCapture(rows)
        ctx = engine.eval_mode() if eval_ctx else nullcontext()
        with torch.no_grad(), ctx:
            engine.forward_step(batch, loss_function=capture, forward_only=True)
        return capture.logits

    def _teacher_response_logits(self, micro_batch: TensorDict, active: torch.Tensor) -> torch.Tensor:
        """Teacher logits (temperature-scaled) at the rows predicting each active sample's response tokens."""
        batch, rows = self._teacher_batch(micro_batch, active)
        teacher = self.sdpo_config.sdpo.teacher
        actor_engine = self.actor.engine
        if teacher.mode == "live":
            return self._forward_rows(actor_engine, batch, rows, eval_ctx=False)
        if teacher.mode == "frozen" and self.ref is None:  # LoRA: base model = adapter disabled
            with actor_engine.disable_adapter():
                return self._forward_rows(actor_engine, batch, rows, eval_ctx=False)
        reference = self._forward_rows(self.ref.engine, batch, rows, eval_ctx=True)
        if teacher.mode == "trust_region":
            current = self._forward_rows(actor_engine, batch, rows, eval_ctx=False)
            return trust_region_logits(reference, current, teacher.update_rate)
        return reference

    # ---------------------------------------------------------------- EMA teacher
    def _paired_parameters(self):
        teacher = dict(self.ref.engine.module.named_parameters())
        student = dict(self.actor.engine.module.named_parameters())
        if teacher.keys() != student.keys():
            missing = sorted(set(teacher) ^ set(student))[:5]
            raise RuntimeError(f"EMA teacher and policy parameters differ, e.g. {missing}")
        names = sorted(teacher)
        return names, [teacher[n] for n in names], [student[n] for n in names]

    @register(dispatch_mode=Dispatch.ONE_TO_ALL)
    def sdpo_update_ema_teacher(self):
        """θ_T ← (1−r)·θ_T + r·θ_S on every rank's local shard (both modules are sharded identically)."""
        _, teacher, student = self._paired_parameters()
        local = lambda ps: [p.to_local() if hasattr(p, "to_local") else p for p in ps]  # noqa: E731
        ema_update_(local(teacher), local(student), self.sdpo_config.sdpo.teacher.update_rate)

    def _teacher_state_path(self, local_path: str) -> str:
        return os.path.join(local_path, TEACHER_STATE_DIR, f"rank_{self.rank}.pt")

    @register(dispatch_mode=Dispatch.ONE_TO_ALL)
    def save_checkpoint(self, local_path, hdfs_path=None, global_step=0, max_ckpt_to_keep=None):
        super().save_checkpoint(local_path, hdfs_path, global_step, max_ckpt_to_keep)
        if self.sdpo_config is None or self.sdpo_config.sdpo.teacher.mode != "ema":
            return
        names, teacher, _ = self._paired_parameters()
        path = self._teacher_state_path(local_path)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        state = {n: (p.to_local() if hasattr(p, "to_local") else p).detach().cpu() for n, p in zip(names, teacher)}
        torch.save(state, path)

    @register(dispatch_mode=Dispatch.ONE_TO_ALL)
    def load_checkpoint(self, local_path, hdfs_path=None, del_local_after_load=False):
        path = self._teacher_state_path(local_path) if local_path else None
        if self.sdpo_config is not None and self.sdpo_config.sdpo.teacher.mode == "ema" and path:
            if not os.path.exists(path):
                raise FileNotFoundError(
                    f"checkpoint {local_path} has no EMA teacher state for rank {self.rank} ({path}); "
                    "resume with the same number of GPUs as the run that saved it"
                )
            state = torch.load(path, map_location="cpu")
            names, teacher, _ = self._paired_parameters()
            with torch.no_grad():
                for name, param in zip(names, teacher):
                    target = param.to_local() if hasattr(param, "to_local") else param
                    target.copy_(state[name].to(target.device, target.dtype))
            logger.info("sdpo-lean: EMA teacher restored from %s", path)
        super().load_checkpoint(local_path, hdfs_path, del_local_after_load)
