"""The SDPO loss hook: how verl's FSDP engine calls the SDPO loss for one micro-batch.

verl 0.9.1's `register_policy_loss` sees only per-token log-probs, so a top-K divergence needs the student's logits.
The FSDP engine hands them to the loss function when a micro-batch carries `distillation_use_topk=True` (the
logits-processor path of verl's own distillation). `SDPOLoss` is that function: on the first call (student logits)
it asks the teacher for its logits on the same response tokens and returns the per-token divergence and the student's
own per-token log-probs; on the second (model outputs) it weights, routes and aggregates the loss and reports the
metrics. The trainer sends `distillation_only=True`, so verl's engine does not compute those log-probs itself:
without flash-attn its fallback runs one log_softmax per token (seconds a step slower than verl's fused kernels:
bench/step_time/README.md, the log-prob fix), and with flash-attn its in-place cross-entropy backward would write
into the logits that the divergence also differentiates. The old log-prob pass asks the hook for the same log-probs
(`LOG_PROBS_ONLY`, sdpo_ext.worker.compute_log_prob). The teacher itself (weights, forward, EMA, checkpoint) lives in
`sdpo_ext.worker`.
"""
from __future__ import annotations

import dataclasses
import os
import time
from typing import Callable, Optional

import torch
from tensordict import TensorDict
from verl.trainer.ppo.core_algos import get_policy_loss_fn
from verl.utils import tensordict_utils as tu
from verl.utils import torch_functional as verl_functional
from verl.utils.metric import AggregationType, Metric
from verl.workers.utils.losses import ppo_loss
from verl.workers.utils.padding import no_padding_2_padding

from sdpo_ext.config import SDPOActorConfig
from sdpo_ext.loss.distill_weights import token_weights
from sdpo_ext.loss.divergence import divergence
from sdpo_ext.loss.logprobs import full_log_softmax, gather_logp, softmax_stats, student_topk, token_log_probs
from sdpo_ext.loss.objective import (
    aggregate_loss,
    distillation_loss_matrix,
    importance_weights,
    sampled_token_loss_matrix,
)
from sdpo_ext.loss.packed_rows import response_logit_rows

# rows per fp32 block of the hook's full-vocabulary softmaxes (top-K, gathers, entropies, log-probs): each transient is
# SOFTMAX_CHUNK_ROWS x vocab x 4 bytes (0.6 GB at Qwen3's 151,936) rather than rows x vocab (5 GB for an 8K reply);
# distillation_mode=full keeps whole rows x vocab distributions by definition
SOFTMAX_CHUNK_ROWS = 1024
# meta of a forward that only wants the per-token log-probs (the old log-prob pass, sdpo_ext.worker)
LOG_PROBS_ONLY = "sdpo_log_probs_only"


def verl_log_probs_in_fp32() -> bool:
    """Whether verl's engine computes per-token log-probs in fp32 in this process (flash-attn's or the NPU's
    cross-entropy kernel) rather than with its fallback in the logits' dtype (verl.utils.torch_functional)."""
    flash = verl_functional.FLAH_ATTN_CROSS_ENTROPY_LOSS_AVAILABLE
    return (flash and os.environ.get("VERL_DISABLE_FLASH_ATTN_CE", "0") != "1") or (
        verl_functional.NPU_CROSS_ENTROPY_LOSS_AVAILABLE)


def _lengths(nested: torch.Tensor) -> torch.Tensor:
    return nested.offsets().diff()


class _Stopwatch:
    """Seconds from construction to `stop()`. On a GPU, on the device's timeline (two CUDA events): the host never
    waits for them, and `seconds()` is read once the stream has passed `stop` (here: after the metrics' host
    transfer): a device synchronisation per micro-batch stalls a launch-bound step's host (bench/step_time/README.md).
    On CPU, wall-clock seconds."""

    def __init__(self):
        self._events = None
        if torch.cuda.is_available():
            self._events = (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
            self._events[0].record()
        self._start, self._stop = time.perf_counter(), None

    def stop(self) -> None:
        if self._events is not None:
            self._events[1].record()
        self._stop = time.perf_counter()

    def seconds(self) -> float:
        if self._stop is None:
            raise RuntimeError("the stopwatch was read before stop()")
        if self._events is not None:
            self._events[1].synchronize()  # returns at once when the stream has passed it
            return self._events[0].elapsed_time(self._events[1]) / 1000.0  # milliseconds
        return self._stop - self._start


def _with_vanilla_policy_loss(config: SDPOActorConfig) -> SDPOActorConfig:
    """A copy of the actor config whose policy loss is verl's vanilla PPO clip loss."""
    return dataclasses.replace(config, policy_loss=dataclasses.replace(config.policy_loss, loss_mode="vanilla"))


class SDPOLoss:
    """Called twice per micro-batch by verl's FSDP engine: first with the student logits (per-token
    divergence against the teacher), then with the model outputs (aggregated loss + metrics)."""

    def __init__(self, config: SDPOActorConfig,
                 teacher_logits: Callable[[TensorDict, torch.Tensor], Optional[torch.Tensor]]):
        self.config = config
        self.sdpo = config.sdpo
        # the hybrid's GRPO term: verl's ppo_loss with the vanilla policy loss (loss_mode=sdpo is only a guard)
        self.grpo_config = _with_vanilla_policy_loss(config) if config.sdpo.uses_policy_gradient else None
        self.teacher_logits = teacher_logits
        self._teacher_watch: Optional[_Stopwatch] = None

    def __call__(self, student_logits=None, data=None, model_output=None, dp_group=None):
        if student_logits is not None:
            return self.per_token(student_logits, data)
        return self.loss(model_output, data, dp_group)

    # ---------------------------------------------------------------- per token (logits processor)
    def per_token(self, student_logits: torch.Tensor, data: TensorDict) -> dict[str, torch.Tensor]:
        """verl's first call: the student's logits [1, nnz, V] -> per-token log-probs and the SDPO divergence
        against the teacher of each sample (log-probs only on a log-prob forward)."""
        logits = student_logits.squeeze(0)  # (nnz, V), already divided by the rollout temperature
        if tu.get_non_tensor_data(data, LOG_PROBS_ONLY, False):
            return {"log_probs": self._log_probs(logits, data).unsqueeze(0)}
        nnz = logits.shape[0]
        responses = data["responses"]
        response_lens = _lengths(responses)
        rows = response_logit_rows(_lengths(data["input_ids"]), response_lens).to(logits.device)
        active = data["sdpo_mask"].to(torch.bool).cpu()
        sample_of_row = torch.repeat_interleave(torch.arange(len(response_lens)), response_lens.cpu())
        keep = active[sample_of_row].to(logits.device)
        zeros = lambda: torch.zeros(nnz, dtype=torch.float32, device=logits.device)  # noqa: E731
        teacher_token_rows, teacher_entropy_rows, student_entropy_rows = zeros(), zeros(), zeros()
        # Zero, yet attached to the student's graph: a micro-batch with no distilled sample must still give verl's
        # engine a loss it can call backward() on (it crashed SC-SDPO at step 15 of the demo when every sample of a
        # micro-batch had distillation weight 0).
        div_rows = logits[:, 0].float() * 0.0
        # every micro-batch, even one with no distilled sample: the teacher's FSDP forward gathers its weights from
        # all ranks, which must therefore run the same forwards (the teacher returns None for no sample)
        self._teacher_watch = _Stopwatch()
        teacher = self.teacher_logits(data, active)
        self._teacher_watch.stop()
        if teacher is not None:
            labels = torch.cat([r for r, a in zip(responses.unbind(), active.tolist()) if a]).to(logits.device)
            if self.sdpo.teacher_temperature != 1.0:
                teacher = teacher / self.sdpo.teacher_temperature
            student = logits[rows[keep]]
            div, teacher_token, teacher_entropy, student_entropy = self._divergence(student, teacher, labels)
            div_rows = div_rows.index_put((rows[keep],), div.float())
            teacher_token_rows[rows[keep]] = teacher_token.float()
            teacher_entropy_rows[rows[keep]] = teacher_entropy.float()
            student_entropy_rows[rows[keep]] = student_entropy.float()
        out = {
            "sdpo_divergence": div_rows.unsqueeze(0),
            "sdpo_teacher_token_logp": teacher_token_rows.unsqueeze(0),
            "sdpo_teacher_entropy": teacher_entropy_rows.unsqueeze(0),
            "sdpo_student_entropy": student_entropy_rows.unsqueeze(0),
        }
        if tu.get_non_tensor_data(data, "distillation_only", False):  # verl left the log-probs to this hook
            out["log_probs"] = self._log_probs(logits, data).unsqueeze(0)
        return out

    @staticmethod
    def _log_probs(logits: torch.Tensor, data: TensorDict) -> torch.Tensor:
        """Each packed row's log-prob of the next token (verl's rolled labels; a sequence's last row is unused)."""
        labels = torch.roll(data["input_ids"].values(), shifts=-1).to(logits.device)
        return token_log_probs(logits, labels, fp32=verl_log_probs_in_fp32(), chunk_rows=SOFTMAX_CHUNK_ROWS)

    def _divergence(self, student: torch.Tensor, teacher: torch.Tensor, labels: torch.Tensor):
        """(per-row divergence on the chosen support, teacher log-prob of the sampled token, teacher entropy, student
        entropy). One pass over each side's vocabulary gives its log-normalisers and entropies (``softmax_stats``);
        the log-probs at the sampled token and at the student's top-K ids are gathered against them."""
        labels = labels.unsqueeze(-1)
        teacher_lse, teacher_entropy = softmax_stats(teacher, SOFTMAX_CHUNK_ROWS)
        student_lse, student_entropy = softmax_stats(student, SOFTMAX_CHUNK_ROWS)
        teacher_token = gather_logp(teacher, labels, chunk_rows=SOFTMAX_CHUNK_ROWS,
                                    log_normalizer=teacher_lse).squeeze(-1).detach()
        mode = self.sdpo.distillation_mode
        if mode == "token":
            div = torch.zeros_like(teacher_token)
        elif mode == "full":
            div = divergence(full_log_softmax(student), full_log_softmax(teacher).detach(), self.sdpo.alpha,
                             add_tail=self.sdpo.add_tail)
        else:
            student_logp, ids = student_topk(student, self.sdpo.topk, chunk_rows=SOFTMAX_CHUNK_ROWS,
                                             log_normalizer=student_lse)
            teacher_logp = gather_logp(teacher, ids, chunk_rows=SOFTMAX_CHUNK_ROWS, log_normalizer=teacher_lse).detach()
            div = divergence(student_logp, teacher_logp, self.sdpo.alpha, add_tail=self.sdpo.add_tail)
        return div, teacher_token, teacher_entropy, student_entropy

    # ---------------------------------------------------------------- loss (after the forward)
    def loss(self, model_output: dict, data: TensorDict, dp_group=None):
        """verl's second call: the model outputs -> the aggregated loss (SDPO, blended with PPO-clip or routed by
        variant) and its metrics."""
        if tu.get_non_tensor_data(data, LOG_PROBS_ONLY, False):  # a forward for the log-probs: nothing to optimise
            return torch.zeros((), device=model_output["log_probs"].device), {}
        cfg = self.config
        log_prob = no_padding_2_padding(model_output["log_probs"], data)
        fields = ["response_mask", "old_log_probs"] + (["rollout_is_weights"] if "rollout_is_weights" in data else [])
        if self.sdpo.variant == "srpo":
            fields.append("advantages")
        padded = data.select(*fields).to_padded_tensor()
        response_mask = padded["response_mask"].to(log_prob.dtype)
        is_weights = importance_weights(log_prob, padded["old_log_probs"], self.sdpo.is_clip,
                                        padded.get("rollout_is_weights"))
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
                                response_mask, sample_mask, distill_weight,
                                None if self.sdpo.distillation_mode == "token" else divergence_mat)
        metrics["sdpo/loss"] = Metric(value=sdpo_loss, aggregation=aggregation)

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
                 response_mask, sample_mask, distill_weight, divergence_mat=None) -> dict:
        """Means over the distilled tokens (response tokens of samples with a teacher signal), plus the final token
        of each distilled sample (its end-of-turn token unless the reply was cut at the length limit); read back to
        the host in one transfer (each read waits for the GPU)."""
        active_tokens = response_mask * sample_mask.unsqueeze(-1)
        final = torch.zeros_like(response_mask)
        lengths = response_mask.sum(-1).long()
        rows = (lengths > 0).nonzero().squeeze(-1)
        final[rows, lengths[rows] - 1] = 1.0
        final_active = final * active_tokens
        gap = teacher_token - log_prob.detach()
        every_sample = torch.ones_like(sample_mask, dtype=torch.float32)
        means = {
            "sdpo/teacher_minus_student_token_logp": (gap, active_tokens),
            "sdpo/teacher_minus_student_final_token_logp": (gap, final_active),
            "sdpo/teacher_entropy": (teacher_entropy, active_tokens),
            "sdpo/student_entropy": (student_entropy, active_tokens),
            "sdpo/teacher_flatter_fraction": ((teacher_entropy > student_entropy).float(), active_tokens),
            "sdpo/token_weight_mean": (token_weight, active_tokens),
            "sdpo/is_weight_mean": (is_weights, response_mask),
            "sdpo/active_sample_fraction": (sample_mask.float(), every_sample),
            "sdpo/distill_weight_mean": (distill_weight, every_sample),
        }
        if divergence_mat is not None:
            means["sdpo/divergence_mean"] = (divergence_mat, active_tokens)
        metrics: dict = _masked_means(means)  # a host transfer: the stream has passed the teacher's stop event
        if self._teacher_watch is not None:  # this micro-batch's teacher forward, summed over micro-batches
            metrics["timing_s/sdpo_teacher_forward"] = Metric(value=self._teacher_watch.seconds(),
                                                              aggregation=AggregationType.SUM)
            self._teacher_watch = None
        return metrics


def _masked_means(named: dict[str, tuple[torch.Tensor, torch.Tensor]]) -> dict[str, float]:
    """{name: Σ values·mask / max(Σ mask, 1)} for each (values, mask), read back to the host at once."""
    means = torch.stack([(values.float() * mask).sum() / mask.sum().clamp_min(1.0) for values, mask in named.values()])
    return dict(zip(named, means.tolist()))
