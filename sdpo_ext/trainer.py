"""SDPOTrainer: verl's v1 synchronous trainer plus what sdpo-lean runs need (thin glue, no math here).

Per step, after the rewards (with Lean feedback) are in TransferQueue and before the old log-probs, the step's samples
are read once into records (`sdpo_ext.judged.JudgedSample`, which also holds the one rule for a valid sample):
1. infrastructure failures (reward `infra`=1, or balancing padding) get response_mask = loss_mask = 0, so they are
   never trained on and never enter a GRPO baseline (`grpo_valid`);
2. every attempt is appended to the attempt log; in TTRL mode the set's bookkeeping (`sdpo_ext.ttrl.problem_set`) counts
   it: a problem retires after its first valid proof or when its budget is spent, and the run ends after the step
   in which the last open problem retired;
3. SDPO only: the teacher prompt of every sample is built on the driver (sdpo_ext.teacher_fields, over
   sdpo_ext.teacher.reprompt) in a thread beside the old-log-prob pass (sdpo_ext.teacher_prep), and stored as
   `teacher_prompt_ids` (nested) and `sdpo_mask` ([B]) (with `sdpo.teacher.share_prompt_prefix`, also each sample's
   prefix shared with its group,
   sdpo_ext.teacher.shared_prefix); the worker's loss hook scores the same response tokens under that prompt with the
   teacher weights inside each training micro-batch.
After the actor update the EMA teacher is advanced (ema mode). Validation adds unbiased pass@k and mean@n over the
judged samples to verl's metrics.

TTRL (`sdpo.ttrl`: the set's prompt draw, run length and checkpointed state) comes in through verl's dataloader and
checkpoint hooks, in the mixin `sdpo_ext.ttrl.hooks.TTRLHooks`.

Registered as verl's "sync" trainer. Without a top-level `sdpo` section (`sdpo_ext.config.RunConfig`) in the config it
behaves exactly as PPOTrainerSync (plain verl configs are untouched).
"""
from __future__ import annotations

import logging
import uuid
from concurrent.futures import Future

import ray
import transfer_queue as tq
from tensordict import TensorDict
from verl.trainer.ppo.utils import Role
from verl.trainer.ppo.v1 import trainer_base
from verl.trainer.ppo.v1.trainer_sync import PPOTrainerSync
from verl.utils.config import omega_conf_to_dataclass
from verl.utils.debug import marked_timer
from verl.utils.metric import reduce_metrics
from verl.utils.py_functional import rename_dict

from sdpo_attempts.log import AttemptLog
from sdpo_ext.judged import JudgedSample, is_valid
from sdpo_ext.loss.packed_rows import jagged
from sdpo_ext.startup.checks import check_config_keys, sdpo_setting_errors
from sdpo_ext.startup.timeline import MarkedAttribute, mark
from sdpo_ext.teacher_fields import teacher_fields
from sdpo_ext.teacher_prep import in_background
from sdpo_ext.ttrl.hooks import TTRLHooks
from sdpo_ext.val_metrics import validation_pass_at_k

logger = logging.getLogger(__name__)

_ACTOR_ROLES = (Role.ActorRollout, Role.ActorRolloutRef)


def _as_list(value) -> list:
    return value.tolist() if hasattr(value, "tolist") else list(value)


class SDPOTrainer(TTRLHooks, PPOTrainerSync):
    """verl's PPOTrainerSync plus the steps of the module docstring; registered as the "sync" trainer."""

    def __init__(self, config):
        # Imported here, not at the top: sdpo_ext.config imports verl, whose plugin loading imports this module; a
        # process that imports sdpo_ext.config first (e.g. unpickling an actor config) would otherwise hit the cycle
        # and lose the plugin's registrations.
        from sdpo_ext.config import run_config, sdpo_loss_selected

        mark("trainer_init")
        if config.get("sdpo", None) is not None:
            check_config_keys(config)
        self.run_config = run_config(config)
        super().__init__(config)
        actor = config.actor_rollout_ref.actor
        self.sdpo_enabled = sdpo_loss_selected(actor.policy_loss)
        self.sdpo_config = omega_conf_to_dataclass(actor.sdpo) if self.sdpo_enabled else None
        errors = sdpo_setting_errors(config, self.sdpo_config.grpo_weight) if self.sdpo_enabled else []
        if errors:
            raise ValueError("settings the SDPO loss cannot honour:\n  " + "\n  ".join(errors))
        self.attempt_log = None
        if self.run_config is not None:
            self.attempt_log = AttemptLog(
                path=self.run_config.attempt_log,
                method=self.run_config.algorithm_name or ("sdpo" if self.sdpo_enabled else "grpo"),
                run_id=f"{config.trainer.experiment_name}-{uuid.uuid4().hex[:8]}",
                seed=int(config.data.get("seed", None) or 0),
            )

    # ------------------------------------------------------------------ validation
    def _val_metrics_update(self, data_sources, sample_uids, reward_extra_infos_dict, sample_turns,
                            expected_acc_counts=None) -> dict[str, float]:
        """verl's validation metrics plus unbiased pass@k and mean@n over the judged samples (sdpo_ext.val_metrics).

        verl summarises every reward-info key, so the infra flag would also come out as `val-aux/<source>/infra/mean@n`
        (plus a best@k/worst@k of it that means nothing); those are dropped: the infra share has one name,
        `val-aux/<source>/infra_fraction`."""
        metrics = super()._val_metrics_update(data_sources, sample_uids, reward_extra_infos_dict, sample_turns,
                                              expected_acc_counts=expected_acc_counts)
        if self.run_config is None:
            return metrics
        verl_infra = tuple(f"{sec}/{source}/infra/" for sec in ("val-core", "val-aux") for source in set(data_sources))
        metrics = {key: value for key, value in metrics.items() if not key.startswith(verl_infra)}
        n = len(sample_uids)
        scores = reward_extra_infos_dict.get("reward", [None] * n)
        verdicts = reward_extra_infos_dict.get("verdict", [None] * n)
        infra = reward_extra_infos_dict.get("infra", [None] * n)
        valid = [None if s is None else is_valid(s, v) for s, v in zip(scores, verdicts)]
        metrics.update(validation_pass_at_k([str(d) for d in data_sources], [str(u) for u in sample_uids], valid,
                                            [bool(x) for x in infra]))
        return metrics

    # ------------------------------------------------------------------ workers
    @property
    def _teacher_needs_reference(self) -> bool:
        return self.sdpo_enabled and self.sdpo_config.teacher.needs_reference_model and not self._uses_lora

    @property
    def _uses_lora(self) -> bool:
        model = self.config.actor_rollout_ref.model
        return (model.get("lora_rank", 0) or 0) > 0 or model.get("lora_adapter_path") is not None

    def _init_resource_pool_mgr(self):
        """verl's pools, with our worker class; the EMA/frozen/trust-region teacher lives in the ref slot."""
        mark("resource_pools")
        super()._init_resource_pool_mgr()
        from sdpo_ext.worker import SDPOActorRolloutRefWorker

        roles = [role for role in _ACTOR_ROLES if role in self.role_worker_mapping]
        if not roles:
            if self.sdpo_enabled:
                raise NotImplementedError("SDPO needs the colocated (hybrid) actor-rollout worker of the sync trainer")
            return
        role = roles[0]
        if role == Role.ActorRollout and self._teacher_needs_reference:
            del self.role_worker_mapping[role]
            self.mapping[Role.ActorRolloutRef] = self.mapping.pop(role)
            role = Role.ActorRolloutRef
        self.role_worker_mapping[role] = ray.remote(SDPOActorRolloutRefWorker)

    # ------------------------------------------------------------------ start-up marks (sdpo_ext.startup.timeline)
    def on_init_end(self):
        """verl's hook after the trainer's set-up, marked `init_done` on the start-up timeline."""
        mark("init_done")
        super().on_init_end()

    # verl's `_setup` has no method between building the reward loop and the rollout servers, only these assignments
    reward_loop_manager = MarkedAttribute("reward_loop_ready")
    llm_server_manager = MarkedAttribute("rollout_servers_ready")

    def _load_checkpoint(self):
        """verl's resume, which `_setup` calls once the checkpoint engine is built and the rollout servers are asleep:
        marked `checkpoint_engine_ready`."""
        mark("checkpoint_engine_ready")
        return super()._load_checkpoint()

    def on_train_begin(self):
        """verl's hook before the first step, marked `train_begin`."""
        mark("train_begin")
        super().on_train_begin()

    def on_step_end(self):
        """verl's hook after each step, marked `first_step_done` (printed once per process)."""
        mark("first_step_done")
        super().on_step_end()

    # ------------------------------------------------------------------ step hooks
    def _compute_old_log_prob(self, batch, metrics: dict):
        mark("first_rollout_done")
        if self.run_config is None:
            return super()._compute_old_log_prob(batch, metrics)
        # its own phase in verl's timing (timing_s/sdpo_prepare), nested inside timing_s/old_log_prob
        with marked_timer("sdpo_prepare", self.timing_raw):
            teacher = self._prepare_samples(batch, metrics)
        batch = super()._compute_old_log_prob(batch, metrics)
        if teacher is not None:  # built beside the old-log-prob pass (sdpo_ext.teacher_prep)
            with marked_timer("sdpo_prepare_wait", self.timing_raw):
                fields, teacher_metrics = teacher.result()
            metrics.update(teacher_metrics)
            tq.kv_batch_put(keys=batch.keys, partition_id=batch.partition_id,
                            fields=TensorDict(fields, batch_size=len(batch)))
        return batch

    def _prepare_samples(self, batch, metrics: dict) -> Future | None:
        """Masks the infra samples and logs the attempts; for SDPO returns the teacher fields being built in the
        background (a Future of (fields, metrics)), which the caller writes to TransferQueue."""
        fields = ["uid", "responses", "response_mask", "loss_mask", "rm_scores", "extra_fields", "extra_info"]
        if self.sdpo_enabled:
            fields += ["raw_prompt", "prompts"]
        data = tq.kv_batch_get(keys=batch.keys, partition_id=batch.partition_id, select_fields=fields)
        samples = self._judged_samples(batch, data)
        metrics["sdpo_lean/infra_fraction"] = sum(s.infra and not s.padding for s in samples) / max(1, len(samples))

        update = {}
        if any(s.masked for s in samples):
            for name in ("response_mask", "loss_mask"):
                update[name] = jagged([row * 0 if s.masked else row for row, s in zip(data[name].unbind(), samples)])
        self._log_attempts(samples, metrics)

        if update:
            tq.kv_batch_put(
                keys=batch.keys, partition_id=batch.partition_id, fields=TensorDict(update, batch_size=len(batch))
            )
        if not self.sdpo_enabled:
            return None

        def build() -> tuple[dict, dict]:
            teacher_metrics: dict = {}
            return self._teacher_fields(data, samples, teacher_metrics), teacher_metrics

        return in_background(build)

    def _judged_samples(self, batch, data) -> list[JudgedSample]:
        """The step's samples (sdpo_ext.judged) from verl's batch and the TransferQueue fields `_prepare_samples`
        read: the reward's extra info, the summed token scores, the decoded responses, the padding tags."""
        responses = list(data["responses"].unbind())
        texts = self.tokenizer.batch_decode([r.tolist() for r in responses], skip_special_tokens=True)
        rows = zip(batch.keys, batch.tags, _as_list(data["uid"]), _as_list(data["extra_fields"]),
                   _as_list(data["extra_info"]), data["rm_scores"].unbind(), responses, texts, strict=True)
        return [
            JudgedSample.from_reward(
                extra.get("reward_extra_info", {}) if isinstance(extra, dict) else {},
                key=key,
                uid=uid,
                problem=(row.get("name") if isinstance(row, dict) else None) or str(uid),
                score=float(scores.sum()),
                text=text,
                response_tokens=int(response.numel()),
                padding=bool(tag.get("is_padding", False)),
            )
            for key, tag, uid, extra, row, scores, response, text in rows
        ]

    def _log_attempts(self, samples: list[JudgedSample], metrics: dict) -> None:
        """Every judged sample (padding aside) into the attempt log, the solved fraction, and in TTRL mode the set."""
        judged = [s for s in samples if not s.padding]
        if self.attempt_log is not None:
            self.attempt_log.record(self.global_steps, [s.attempt() for s in judged])
        metrics["sdpo_lean/solved_fraction"] = sum(s.valid for s in judged) / max(1, len(judged))
        if self.ttrl_set is not None:
            self._ttrl_observe(judged, metrics)

    def _teacher_fields(self, data, samples: list[JudgedSample], metrics: dict) -> dict:
        """The step's SDPO fields (sdpo_ext.teacher_fields) of `samples`, with the student prompts read from the
        TransferQueue fields `_prepare_samples` read."""
        fields, teacher_metrics = teacher_fields(
            self.tokenizer,
            self.sdpo_config,
            samples,
            messages=[list(m) for m in _as_list(data["raw_prompt"])],
            prompts=list(data["prompts"].unbind()),
            chat_template_kwargs=dict(self.config.data.get("apply_chat_template_kwargs", {}) or {}),
        )
        metrics.update(teacher_metrics)
        return fields

    def _update_actor(self, batch, metrics: dict):
        if not self.sdpo_enabled:
            return super()._update_actor(batch, metrics)
        actor = self.config.actor_rollout_ref.actor
        mini_batch = actor.ppo_mini_batch_size * self.config.actor_rollout_ref.rollout.n
        batch.extra_info.update(
            {
                "calculate_entropy": actor.calculate_entropy or actor.entropy_coeff != 0.0,
                # routes the student logits through the SDPO loss hook (verl's logits-processor path), which also
                # computes the per-token log-probs (sdpo_ext.loss_hook: faster than verl's, and no in-place backward)
                "distillation_use_topk": True,
                "distillation_only": True,
                "global_batch_size": mini_batch,
                "mini_batch_size": mini_batch,
                "epochs": actor.ppo_epochs,
                "seed": actor.data_loader_seed,
                "dataloader_kwargs": {"shuffle": actor.shuffle},
                "temperature": self.config.actor_rollout_ref.rollout.temperature,
            }
        )
        output = self.actor_rollout_wg.update_actor(batch)
        output = rename_dict(output["metrics"], "actor/")
        output["perf/mfu/actor"] = output.pop("actor/mfu")
        metrics.update(reduce_metrics(output))
        if self.sdpo_config.teacher.mode == "ema":
            with marked_timer("sdpo_ema_update", self.timing_raw):  # nested inside timing_s/update_actor
                self.actor_rollout_wg.sdpo_update_ema_teacher()
        return batch


# verl's v1 "sync" trainer is SDPOTrainer in every process that imports the plugin (sdpo_ext.plugin imports this
# module; registering here, after the class exists, survives the import cycle trainer -> verl -> plugin -> trainer).
trainer_base.TRAINER_REGISTRY["sync"] = SDPOTrainer
