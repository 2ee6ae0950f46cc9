"""SDPO worker: verl's ActorRolloutRefWorker with the SDPO loss hook installed and the teacher: where its weights
live (the reference engine for EMA / trust-region / frozen, the actor for live or LoRA), its forward, its EMA update and
its checkpoint, and the single TTRL protocol's initial state (`sdpo_save_initial_state` on disk, and a host-memory
snapshot of it that `sdpo_restore_initial_state` restores: `sdpo_ext.ttrl.snapshot`).

The teacher forward runs inside the loss hook's call (`sdpo_ext.loss_hook`), for the same micro-batch: the teacher
weights (no grad) on [teacher prompt | same response tokens], on the inputs the teacher engine's own
`prepare_model_inputs` builds (so remove-padding is verl's; temperature scaling and autocast as its `forward_step`
does them), with the LM head on the response rows only; without remove-padding through `forward_step` itself. This
is the authors' design (teacher forward per micro-batch, support from the current student) and it inherits verl's
scaling: FSDP sharding, any micro-batch size, dynamic batch size, Ray placement. Ulysses sequence parallelism is not
supported for the teacher forward (clear error). With `sdpo.teacher.share_prompt_prefix` each group's shared prompt
prefix is computed once (sdpo_ext.teacher.shared_prefix): on the packed path with our varlen attention in the same one
forward, the prefix once in the row and every sample's rest attending to it (`KEY_SPANS`); otherwise sample by sample
on top of the prefix's KV cache.
"""
from __future__ import annotations

import inspect
import logging
import os
from contextlib import nullcontext
from typing import Optional

import torch
from tensordict import TensorDict
from torch.distributed.tensor import DTensor
from verl.single_controller.base.decorator import Dispatch, make_nd_compute_dataproto_dispatch_fn, register
from verl.utils import tensordict_utils as tu
from verl.utils.device import get_device_id, get_device_name
from verl.utils.fsdp_utils import load_fsdp_model_to_gpu, offload_fsdp_model_to_cpu, offload_fsdp_optimizer
from verl.workers.engine.fsdp.transformer_impl import FSDPEngine, FSDPEngineWithLMHead
from verl.workers.engine_workers import ActorRolloutRefWorker

from sdpo_ext.attention import fa4, varlen
from sdpo_ext.attention.varlen import KEY_SPANS, KeySpans
from sdpo_ext.config import SDPOActorConfig
from sdpo_ext.loss.packed_rows import jagged, response_logit_rows
from sdpo_ext.loss_hook import LOG_PROBS_ONLY, SDPOLoss
from sdpo_ext.startup.timeline import mark
from sdpo_ext.teacher.shared_prefix import (
    TEACHER_PREFIX_LEN,
    PrefixKVCache,
    extended,
    forward_calls,
    full_attention_only,
    micro_batch_group,
    prefix_packing,
)
from sdpo_ext.teacher.weights import ema_update_, trust_region_logits
from sdpo_ext.ttrl.snapshot import InitialState, host_copy, local_shards, restore_local_shards_

logger = logging.getLogger(__name__)

TEACHER_STATE_DIR = "sdpo_teacher"


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


def _world_size() -> int:
    return torch.distributed.get_world_size() if torch.distributed.is_initialized() else 1


def _most_over_ranks(value: int, group) -> int:
    """The largest `value` over the ranks of `group` (itself on one rank)."""
    if _world_size() == 1:
        return value
    most = torch.tensor([value], device=get_device_name())
    torch.distributed.all_reduce(most, op=torch.distributed.ReduceOp.MAX, group=group)
    return int(most.item())


def _forward_only_batch(micro_batch: TensorDict, sequences: list[torch.Tensor], samples: list[int],
                        starts: Optional[list[int]] = None) -> TensorDict:
    """`sequences` (of the micro-batch's `samples`, at positions from `starts`, 0 by default) as a batch for the teacher
    engine's forward_step: the micro-batch's padding settings and those samples' temperatures; no fused kernels or
    entropy; logits to the loss function."""
    starts = starts or [0] * len(sequences)
    positions = [torch.arange(p, p + len(s), device=s.device) for s, p in zip(sequences, starts)]
    temperature = micro_batch["temperature"]
    if isinstance(temperature, torch.Tensor) and temperature.dim() > 0:
        temperature = temperature[samples]
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
    return batch


def _packs_key_spans(engine, micro_batch: TensorDict) -> bool:
    """Whether the teacher's forward can take a row whose spans attend to keys elsewhere in it (`KEY_SPANS`): the
    model is called directly (`_keeps_rows`) and its attention is one of ours (sdpa_varlen, fa4_varlen), which read
    the keyword; any other attention would ignore it and let every span attend to its own tokens only."""
    model = getattr(engine.module, "module", engine.module)
    attention = getattr(getattr(model, "config", None), "_attn_implementation", None)
    return _keeps_rows(engine, micro_batch) and attention in (varlen.ATTN_IMPLEMENTATION, fa4.ATTN_IMPLEMENTATION)


def _keeps_rows(engine, batch: TensorDict) -> bool:
    """Whether `_forward_rows` can ask the model for the wanted rows' logits alone: padding removed (one packed
    sequence, so rows index it), an engine that leaves its outputs to verl's FSDP LM-head handling (veomni's, say,
    adds its own), and a model class whose own forward takes `logits_to_keep` (not a verl replacement forward, which
    takes it in **kwargs and ignores it)."""
    if not tu.get_non_tensor_data(batch, "use_remove_padding", True):
        return False
    if getattr(type(engine), "prepare_model_outputs", None) not in (None, FSDPEngineWithLMHead.prepare_model_outputs):
        return False
    model = getattr(engine.module, "module", engine.module)  # FSDP1 wraps the model
    if hasattr(model, "get_base_model"):  # peft
        model = model.get_base_model()
    forward = type(model).forward
    return "logits_to_keep" in inspect.signature(forward).parameters and not forward.__module__.startswith("verl.")


def _scaled(logits: torch.Tensor, temperature: float | torch.Tensor) -> torch.Tensor:
    """logits [N, V] / T in the logits' dtype, as verl's engine scales them (_scale_logits_by_temperature): T one
    number (none at 1) or one per row [N]."""
    if isinstance(temperature, torch.Tensor):
        return logits / temperature.clamp(min=1e-8).to(logits.dtype).unsqueeze(-1)
    return logits if temperature == 1.0 else logits / torch.tensor(max(temperature, 1e-8), dtype=logits.dtype)


def _autocast(engine):
    """The autocast verl's forward_step runs the engine's module under (none for fp32 parameters)."""
    dtype = getattr(engine, "_autocast_dtype", torch.bfloat16)  # verl's forward_step reads it the same way
    return nullcontext() if dtype == torch.float32 else torch.autocast(get_device_name(), dtype=dtype)


def _first_token(micro_batch: TensorDict) -> torch.Tensor:
    """The micro-batch's first token: the input of a forward that only keeps the ranks in step."""
    return micro_batch["input_ids"].unbind()[0][:1]


class SDPOActorRolloutRefWorker(ActorRolloutRefWorker):
    """Adds the SDPO loss hook and the teacher (EMA / trust-region / frozen / live) to verl's worker."""

    sdpo_config: Optional[SDPOActorConfig] = None
    prefix_cache: Optional[PrefixKVCache] = None  # with sdpo.teacher.share_prompt_prefix
    initial_state: Optional[InitialState] = None  # the single TTRL protocol's host-memory snapshot

    @register(dispatch_mode=Dispatch.ONE_TO_ALL)
    def init_model(self):
        """verl's model set-up, plus the SDPO loss hook and the teacher when the SDPO loss is on."""
        mark("actor_model_start")
        super().init_model()
        mark("actor_model_ready")
        if self.actor is None:
            return
        actor_config = self.loss_fn.keywords.get("config") if hasattr(self.loss_fn, "keywords") else None
        if not isinstance(actor_config, SDPOActorConfig) or not actor_config.sdpo_enabled:
            return
        engines = [self.actor.engine] + ([self.ref.engine] if self.ref is not None else [])
        if any(getattr(engine, "ulysses_sequence_parallel_size", 1) > 1 for engine in engines):
            raise NotImplementedError("SDPO teacher forward does not support Ulysses sequence parallelism (sp > 1) "
                                      "in the actor or the reference model")
        self.sdpo_config = actor_config
        mode = actor_config.sdpo.teacher.mode
        if mode in ("ema", "trust_region") and self.ref is None:
            raise RuntimeError(
                f"sdpo.teacher.mode={mode} needs a separate reference model; with LoRA use mode=frozen "
                "(base model with the adapter disabled) or live"
            )
        if actor_config.sdpo.teacher.share_prompt_prefix:
            if self.ref is None:
                raise RuntimeError("sdpo.teacher.share_prompt_prefix needs the teacher in a separate reference model "
                                   "(not LoRA's adapter-disabled base model)")
            if not full_attention_only(self.ref.engine.model_config.hf_config):
                raise NotImplementedError("sdpo.teacher.share_prompt_prefix needs a model whose every layer is full "
                                          "attention (no sliding-window or linear-attention layers)")
            self.prefix_cache = PrefixKVCache()
        self.actor.set_loss_fn(SDPOLoss(actor_config, self._teacher_response_logits))
        logger.info("sdpo-lean: SDPO loss installed (teacher=%s, mode=%s)", mode, actor_config.sdpo.distillation_mode)

    @register(dispatch_mode=make_nd_compute_dataproto_dispatch_fn(mesh_name="actor"))
    def compute_log_prob(self, data: TensorDict) -> TensorDict:
        """verl's, except that with the SDPO loss installed the per-token log-probs come from its hook (vectorised,
        verl's numerics; sdpo_ext.loss_hook) rather than from verl's engine, whose fallback without flash-attn runs
        one log_softmax per token; the update computes them the same way (distillation_only)."""
        if self.sdpo_config is not None and not tu.get_non_tensor_data(data, "compute_loss", True):
            tu.assign_non_tensor(data, compute_loss=True, distillation_use_topk=True, distillation_only=True,
                                 **{LOG_PROBS_ONLY: True})
        return super().compute_log_prob(data)

    @register(dispatch_mode=make_nd_compute_dataproto_dispatch_fn(mesh_name="actor"))
    def update_actor(self, data: TensorDict) -> TensorDict:
        """verl's; the teacher's prefix cache lives for this call only (its weights may change after it, and the
        memory is the rollout's). With a shared teacher prefix and dynamic batch size, verl keeps as many consecutive
        samples of a group in one micro-batch as fit (`force_group_size`), so that their prefix is computed once."""
        if self.prefix_cache is not None and "force_group_size" not in data.keys():
            engine_config = self.actor.engine_config
            if engine_config.use_dynamic_bsz:
                lengths = data["input_ids"].offsets().diff().tolist()
                tu.assign_non_tensor(data, force_group_size=micro_batch_group(
                    lengths, self.config.rollout.n, engine_config.max_token_len_per_gpu))
        try:
            return super().update_actor(data)
        finally:
            if self.prefix_cache is not None:
                self.prefix_cache.clear()

    # ---------------------------------------------------------------- teacher forward
    def _teacher_batch(self, micro_batch: TensorDict, active: torch.Tensor) -> tuple[TensorDict, torch.Tensor]:
        """[teacher prompt | response] for the active samples, and the rows predicting the response tokens."""
        if micro_batch["position_ids"].dim() == 3:
            raise NotImplementedError("SDPO teacher forward supports 1-D position ids (text models) only")
        idx = active.nonzero().squeeze(-1).tolist()
        prompts = micro_batch["teacher_prompt_ids"].unbind()
        responses = micro_batch["responses"].unbind()
        sequences = [torch.cat([prompts[i].to(responses[i].device), responses[i]]) for i in idx]
        batch = _forward_only_batch(micro_batch, sequences, idx)
        seq_lens = torch.tensor([len(s) for s in sequences])
        resp_lens = torch.tensor([len(responses[i]) for i in idx])
        return batch, response_logit_rows(seq_lens, resp_lens)

    @staticmethod
    def _prefix_packed_batch(micro_batch: TensorDict, active: torch.Tensor) -> tuple[TensorDict, torch.Tensor]:
        """`_teacher_batch` with each distinct shared prompt prefix once in the row and every active sample's rest
        attending to it (sdpo_ext.teacher.shared_prefix.prefix_packing, read by the attention as `KEY_SPANS`)."""
        idx = active.nonzero().squeeze(-1).tolist()
        prompts = micro_batch["teacher_prompt_ids"].unbind()
        responses = micro_batch["responses"].unbind()
        shared = micro_batch[TEACHER_PREFIX_LEN].tolist()
        packing = prefix_packing([prompts[i].to(responses[i].device) for i in idx], [responses[i] for i in idx],
                                 [shared[i] for i in idx])
        batch = _forward_only_batch(micro_batch, packing.spans, [idx[o] for o in packing.owners], packing.starts)
        tu.assign_non_tensor(batch, **{KEY_SPANS: KeySpans(
            packing.key_index, packing.cu_seqlens_q, packing.cu_seqlens_k,
            int(packing.cu_seqlens_q.diff().max()), int(packing.cu_seqlens_k.diff().max()))})
        return batch, packing.rows

    def _forward_rows(self, engine, batch: TensorDict, rows: torch.Tensor, eval_ctx: bool) -> torch.Tensor:
        """The logits (temperature-scaled) at `rows` of the packed `batch`. With padding removed the model's LM head
        runs on those rows only (`logits_to_keep`, on the inputs verl's `prepare_model_inputs` builds for its own
        forward_step): the teacher prompt's rows, about half of a teacher sequence, never become logits. Where that
        cannot be done (`_keeps_rows`), through verl's forward_step."""
        ctx = engine.eval_mode() if eval_ctx else nullcontext()
        if not _keeps_rows(engine, batch):
            capture = _LogitRowsCapture(rows)
            with torch.no_grad(), ctx:
                engine.forward_step(batch, loss_function=capture, forward_only=True)
            return capture.logits
        with torch.no_grad(), ctx:  # the inputs built inside the context, as forward_step builds them
            model_inputs, output_args = engine.prepare_model_inputs(micro_batch=batch.to(get_device_id()))
            rows = rows.to(model_inputs["input_ids"].device)
            spans = tu.get_non_tensor_data(batch, KEY_SPANS, None)
            extra = {} if spans is None else {KEY_SPANS: spans.to(rows.device)}
            with _autocast(engine):
                logits = engine.module(**model_inputs, use_cache=False, logits_to_keep=rows, **extra).logits.squeeze(0)
        if logits.shape[0] != rows.numel():
            raise RuntimeError(f"the teacher model returned {logits.shape[0]} logit rows for logits_to_keep of "
                               f"{rows.numel()}: its forward does not honour a tensor logits_to_keep")
        if isinstance(logits, DTensor):  # tensor parallelism shards the vocabulary
            logits = logits.full_tensor()
        return logits if output_args["temperature_is_one"] else _scaled(logits, output_args["temperature_rmpad"][rows])

    def _teacher_response_logits(self, micro_batch: TensorDict, active: torch.Tensor) -> Optional[torch.Tensor]:
        """Teacher logits (temperature-scaled) at the rows predicting each active sample's response tokens; None when
        no sample is active. Called for every micro-batch: on several ranks the teacher's FSDP forward gathers its
        weights from all of them, so a rank without an active sample runs the same forwards on one token."""
        shared = self.prefix_cache is not None and TEACHER_PREFIX_LEN in micro_batch.keys()
        if shared and not _packs_key_spans(self.ref.engine, micro_batch):
            return self._shared_prefix_logits(micro_batch, active)
        if not bool(active.any()):
            if _world_size() > 1:
                self._teacher_rows(*self._one_token_batch(micro_batch))
            return None
        build = self._prefix_packed_batch if shared else self._teacher_batch
        return self._teacher_rows(*build(micro_batch, active))

    def _teacher_rows(self, batch: TensorDict, rows: torch.Tensor) -> torch.Tensor:
        """The teacher's logits at `rows` of `batch`, by mode (one forward_step per engine it reads)."""
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

    @staticmethod
    def _one_token_batch(micro_batch: TensorDict) -> tuple[TensorDict, torch.Tensor]:
        """A teacher batch of one token (the micro-batch's first), for a forward that only keeps ranks in step."""
        return _forward_only_batch(micro_batch, [_first_token(micro_batch)], [0]), torch.zeros(1, dtype=torch.long)

    def _shared_prefix_logits(self, micro_batch: TensorDict, active: torch.Tensor) -> Optional[torch.Tensor]:
        """`_teacher_response_logits` with each group's shared prompt prefix computed once: per active sample, the
        prefix's KV cache (computed, or reused from the group's previous sample), then the rest of [teacher prompt |
        response] on top of it at positions P.. (P = the shared length; 0: the whole sequence, no cache). Ranks agree
        first on the most module calls any of them makes; the others make up the difference on one token."""
        engine = self.ref.engine
        prompts = micro_batch["teacher_prompt_ids"].unbind()
        responses = micro_batch["responses"].unbind()
        shared = micro_batch[TEACHER_PREFIX_LEN].tolist()
        temperature = micro_batch["temperature"]
        samples = active.nonzero().squeeze(-1).tolist()
        prefixes = [prompts[i][:shared[i]] if shared[i] else None for i in samples]
        calls = forward_calls(prefixes, self.prefix_cache.prefix)
        padding = _most_over_ranks(calls, engine.get_data_parallel_group()) - calls

        def forward(ids: torch.Tensor, start: int, keep: int, cache=None, use_cache: bool = False):
            """The module on `ids` at positions start.. (on top of `cache`), logits of the last `keep` rows only."""
            positions = torch.arange(start, start + len(ids), device=ids.device)
            return engine.module(input_ids=ids[None], position_ids=positions[None], past_key_values=cache,
                                 use_cache=use_cache, logits_to_keep=keep)

        rows = []
        with torch.no_grad(), engine.eval_mode(), _autocast(engine):
            for i in samples:
                prompt, response, length = prompts[i].to(responses[i].device), responses[i], int(shared[i])
                rest = torch.cat([prompt[length:], response])
                # the rows predicting the response: the last prompt row and every response row but the last
                if length:
                    prefix = self.prefix_cache.get(prompt[:length],
                                                   lambda p: forward(p, 0, 1, use_cache=True).past_key_values)
                    with extended(prefix) as cache:
                        logits = forward(rest, length, len(response) + 1, cache, use_cache=True).logits[0, :-1]
                else:
                    logits = forward(rest, 0, len(response) + 1).logits[0, :-1]
                t = temperature[i] if isinstance(temperature, torch.Tensor) and temperature.dim() > 0 else temperature
                rows.append(_scaled(logits, float(t)))
            for _ in range(padding):
                forward(_first_token(micro_batch), 0, 1)
        return torch.cat(rows) if rows else None

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

    def _has_ema_teacher(self) -> bool:
        return self.sdpo_config is not None and self.sdpo_config.sdpo.teacher.mode == "ema"

    def _teacher_state_path(self, local_path: str) -> str:
        return os.path.join(local_path, TEACHER_STATE_DIR, f"rank_{self.rank}.pt")

    @register(dispatch_mode=Dispatch.ONE_TO_ALL)
    def save_checkpoint(self, local_path, hdfs_path=None, global_step=0, max_ckpt_to_keep=None):
        """verl's checkpoint, plus this rank's EMA teacher weights (ema mode)."""
        super().save_checkpoint(local_path, hdfs_path, global_step, max_ckpt_to_keep)
        if not self._has_ema_teacher():
            return
        names, teacher, _ = self._paired_parameters()
        path = self._teacher_state_path(local_path)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        state = {n: (p.to_local() if hasattr(p, "to_local") else p).detach().cpu() for n, p in zip(names, teacher)}
        torch.save(state, path)

    @register(dispatch_mode=Dispatch.ONE_TO_ALL)
    def load_checkpoint(self, local_path, hdfs_path=None, del_local_after_load=False):
        """verl's resume, plus this rank's EMA teacher weights (ema mode); FileNotFoundError when the
        checkpoint has none for this rank."""
        path = self._teacher_state_path(local_path) if local_path else None
        if self._has_ema_teacher() and path:
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

    @register(dispatch_mode=Dispatch.ONE_TO_ALL)
    def sdpo_save_initial_state(self, local_path):
        """The actor's state before any update, in verl's checkpoint format (weights, optimizer, LR schedule, RNG;
        the EMA teacher's weights with them), from which `load_checkpoint(local_path)` resets a single-protocol TTRL
        queue (sdpo_ext.ttrl.queue) whose workers hold no host snapshot of it (`sdpo_snapshot_initial_state`: a
        resumed process). verl's checkpoint manager counts every folder it saved towards `max_ckpt_to_keep` and
        deletes the oldest: this one is taken out of that count, so it stays."""
        self.save_checkpoint(local_path, None, 0, max_ckpt_to_keep=None)
        manager = getattr(self.actor.engine, "checkpoint_manager", None)
        if manager is not None and local_path in getattr(manager, "previous_saved_paths", []):
            manager.previous_saved_paths.remove(local_path)

    @register(dispatch_mode=Dispatch.ONE_TO_ALL)
    def sdpo_snapshot_initial_state(self):
        """Keeps this rank's actor state, as verl's checkpoint holds it (local weight shards, optimizer, LR schedule,
        RNG), and the EMA teacher's local shards, in host memory (`sdpo_ext.ttrl.snapshot.InitialState`); taken when
        the state is the initial one (after `sdpo_save_initial_state`, or after loading it). Host memory: a copy of
        the actor's local shards in their dtype (fp32 in verl's training engine: 4 bytes a parameter over the ranks
        of a node; Adam's state is empty before the first step), and as much again for the fp32 EMA teacher; no
        setting. An engine other than verl's FSDP one keeps none (its resets read the files)."""
        engine = self.actor.engine
        if not isinstance(engine, FSDPEngine):
            return
        self.initial_state = InitialState(
            actor=local_shards(engine.module), optimizer=host_copy(engine.optimizer.state_dict()),
            lr_scheduler=host_copy(engine.lr_scheduler.state_dict()) if engine.lr_scheduler is not None else None,
            rng=host_copy(engine.checkpoint_manager.get_rng_state()),
            teacher=local_shards(self.ref.engine.module) if self._has_ema_teacher() else None)

    @register(dispatch_mode=Dispatch.ONE_TO_ALL)
    def sdpo_restore_initial_state(self) -> bool:
        """Restores the snapshot of `sdpo_snapshot_initial_state` as verl's checkpoint load restores its files
        (weights and teacher copied into their shards where they live; the optimizer loaded with the parameters on
        the device, then offloaded where its config offloads it; LR schedule; RNG). False, restoring nothing, when
        this worker holds no snapshot (a new process: the caller loads the files instead)."""
        state = self.initial_state
        if state is None:
            return False
        engine = self.actor.engine
        restore_local_shards_(engine.module, state.actor)
        if state.teacher is not None:
            restore_local_shards_(self.ref.engine.module, state.teacher)
        if engine.is_param_offload_enabled:  # Adam's state goes to its parameter's device, as in verl's load
            load_fsdp_model_to_gpu(engine.module)
        engine.optimizer.load_state_dict(host_copy(state.optimizer))  # a copy: the loaded tensors become Adam's
        if engine.is_param_offload_enabled:
            offload_fsdp_model_to_cpu(engine.module)
        if engine.is_optimizer_offload_enabled:
            offload_fsdp_optimizer(engine.optimizer)
        if state.lr_scheduler is not None:
            engine.lr_scheduler.load_state_dict(host_copy(state.lr_scheduler))
        engine.checkpoint_manager.load_rng_state(host_copy(state.rng))
        return True
