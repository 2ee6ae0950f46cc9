"""Config dataclasses, one per block, each default written once (verl rejects unknown keys through them).

`actor_rollout_ref.actor._target_: sdpo_ext.config.SDPOActorConfig` adds one field, `sdpo`, to verl's
FSDP actor config. Everything the SDPO loss, the teacher and the reprompting need lives there, so the
driver (reprompting) and the workers (loss, teacher) read one source of truth.
`RunConfig` is the recipes' top-level `sdpo:` block (data choice, TTRL, attempt log), used by SDPO and GRPO runs
alike; `SDPOTrainer` reads it through `run_config`.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Optional

from omegaconf import OmegaConf
from verl.base_config import BaseConfig
from verl.utils.config import omega_conf_to_dataclass
from verl.workers.config import FSDPActorConfig

from sdpo_ext.loss.distill_weights import TOKEN_WEIGHTINGS
from sdpo_ext.loss.routing import VARIANTS
from sdpo_ext.teacher.reprompt import RepromptConfig
from sdpo_ext.teacher.weights import TEACHER_MODES
from sdpo_ext.ttrl.modes import PROTOCOLS, TTRL_SPLITS, ttrl_mode
from sdpo_options.flags import block, option

DISTILLATION_MODES = ("topk", "full", "token")


@dataclass
class SDPOTeacherConfig(BaseConfig):
    """Which weights score the teacher context (`actor_rollout_ref.actor.sdpo.teacher`).

    The modes, with r = `update_rate`:
      ema: EMA copy of the policy in verl's reference slot, θ_T ← (1−r)θ_T + rθ_S after every update.
      trust_region: teacher logits = lerp(ref_logits, policy_logits, r) with a frozen reference.
      frozen: the initial model. live: the current policy (no regularisation; the paper's Table 4 shows it diverges).
    `share_prompt_prefix` gives the same logits up to rounding. It is off by default: with SDPA (no flash-attn) its
    per-sample form made the teacher forward slower at 2K and 8K (bench/step_time/README.md, the fair step time):
    attending to a cached prefix loses SDPA's causal flash kernel. Its packed form (padding removed, sdpa_varlen or
    fa4_varlen: each prefix once in the teacher's row) gives logits equal to the full forward's and, at 2K replies on
    an H100, a teacher forward 0.60-0.68x of the full one and an SDPO step 1.05x GRPO's instead of 1.08-1.09x
    (bench/step_time/README.md, 2026-12-07); it is not measured at 8K, where the Lean recipes run, so it stays off.
    """

    mode: str = option("ema", "which weights score the teacher context: ema | trust_region | frozen | live")
    update_rate: float = option(0.05, "r of the ema and trust_region teachers, in [0, 1]")
    share_prompt_prefix: bool = option(False, "compute the prefix a group's teacher prompts share once per group "
                                              "(sdpo_ext.teacher.shared_prefix); ema or frozen teachers only")

    def __post_init__(self) -> None:
        if self.mode not in TEACHER_MODES:
            raise ValueError(f"sdpo.teacher.mode must be one of {TEACHER_MODES}, got {self.mode!r}")
        if not 0.0 <= self.update_rate <= 1.0:
            raise ValueError(f"sdpo.teacher.update_rate must be in [0, 1], got {self.update_rate}")
        if self.share_prompt_prefix and self.mode not in ("ema", "frozen"):
            raise ValueError(f"sdpo.teacher.share_prompt_prefix needs a teacher fixed during the update (ema or "
                             f"frozen), got mode={self.mode!r}")

    @property
    def needs_reference_model(self) -> bool:
        """Whether the mode keeps a second copy of the weights in verl's reference slot."""
        return self.mode in ("ema", "trust_region", "frozen")


@dataclass
class SDPOConfig(BaseConfig):
    """SDPO loss settings (`actor_rollout_ref.actor.sdpo`; defaults: lasgroup/SDPO `sdpo.yaml`, paper Table 12
    section 3).

    The choices. Of `distillation_mode`: "topk" takes the support of the student's top-K ids (plus a tail bucket with
    `add_tail`), "full" the whole vocabulary, "token" the sampled-token variant (per-token advantage log pT − log pS,
    alpha=1). Of `variant` (`sdpo_ext.loss.routing`): "sdpo" (the paper), "sc_sdpo" (pass-rate weights, arXiv
    2605.27765), "srpo" (failed samples with a correct sibling -> distillation, the rest -> PPO-clip on their GRPO
    advantage; arXiv 2604.02288). Of `token_weighting` (`distill_weights.token_weights`), from the teacher's entropy
    H_T and the student's H_S: "none" (the paper), "confident" (only where H_T <= H_S: the teacher is at least as
    sure as the student), "entropy" (SRPO's entropy-aware weights exp(−β·H_T) normalised to mean 1,
    β = `entropy_weight_beta`).
    Departure: `teacher_temperature` != 1 (the paper's is 1); a value < 1 sharpens a teacher flatter than its student.
    `reprompt` is a plain dataclass (`RepromptConfig`), so reprompt.py stays free of verl.
    """

    distillation_mode: str = option("topk", "support of the divergence: topk | full | token")
    topk: int = option(100, "K of distillation_mode=topk: the student's top-K token ids")
    add_tail: bool = option(True, "topk: add one bucket holding the probability mass outside the top K")
    alpha: float = option(0.5, "0: forward KL(T‖S), 1: reverse KL(S‖T), in between: generalized JSD")
    is_clip: Optional[float] = option(2.0, "clip of the detached importance weight exp(logp − logp_old) (null: none)")
    grpo_weight: float = option(0.0, "λ of the paper's hybrid (eq. 3) as a blend λ·L_GRPO + (1−λ)·L_SDPO (0: SDPO)")
    variant: str = option("sdpo", "which samples are distilled and with what weight: sdpo | sc_sdpo | srpo")
    token_weighting: str = option("none", "per-token weight of the distillation loss: none | confident | entropy")
    entropy_weight_beta: float = option(1.0, "β of token_weighting=entropy (SRPO's default 1.0)")
    teacher_temperature: float = option(1.0, "the teacher's logits are divided by it before its log-softmax")
    teacher: SDPOTeacherConfig = block(SDPOTeacherConfig, "which weights score the teacher context")
    reprompt: RepromptConfig = block(RepromptConfig, "how the teacher context is built (on the driver)")

    def __post_init__(self) -> None:
        if self.distillation_mode not in DISTILLATION_MODES:
            raise ValueError(
                f"sdpo.distillation_mode must be one of {DISTILLATION_MODES}, got {self.distillation_mode!r}"
            )
        if not 0.0 <= self.alpha <= 1.0:
            raise ValueError(f"sdpo.alpha must be in [0, 1], got {self.alpha}")
        if self.distillation_mode == "token" and self.alpha != 1.0:
            raise ValueError("sdpo.distillation_mode=token is the sampled-token reverse-KL variant: set sdpo.alpha=1.0")
        if self.distillation_mode == "topk" and self.topk < 1:
            raise ValueError(f"sdpo.topk must be >= 1, got {self.topk}")
        if not 0.0 <= self.grpo_weight <= 1.0:
            raise ValueError(f"sdpo.grpo_weight must be in [0, 1], got {self.grpo_weight}")
        if self.variant not in VARIANTS:
            raise ValueError(f"sdpo.variant must be one of {VARIANTS}, got {self.variant!r}")
        if self.variant == "srpo" and self.grpo_weight > 0:
            raise ValueError(
                "sdpo.variant=srpo routes correct samples to the PPO-clip term itself: set sdpo.grpo_weight=0"
            )
        if self.token_weighting not in TOKEN_WEIGHTINGS:
            raise ValueError(f"sdpo.token_weighting must be one of {TOKEN_WEIGHTINGS}, got {self.token_weighting!r}")
        if not self.entropy_weight_beta >= 0:
            raise ValueError(f"sdpo.entropy_weight_beta must be >= 0, got {self.entropy_weight_beta}")
        if not self.teacher_temperature > 0:
            raise ValueError(f"sdpo.teacher_temperature must be > 0, got {self.teacher_temperature}")
        if isinstance(self.reprompt, Mapping):   # a reprompt block without `_target_`
            fields = {k: v for k, v in self.reprompt.items() if k != "_target_"}
            object.__setattr__(self, "reprompt", RepromptConfig(**fields))
        if not isinstance(self.reprompt, RepromptConfig):
            raise ValueError(f"sdpo.reprompt must be a mapping of RepromptConfig fields, got {self.reprompt!r}")

    @property
    def uses_policy_gradient(self) -> bool:
        """Whether verl's PPO-clip term is part of the loss (the hybrid blend or SRPO's correct samples)."""
        return self.grpo_weight > 0.0 or self.variant == "srpo"


@dataclass
class SDPOActorConfig(FSDPActorConfig):
    """verl's FSDPActorConfig plus the `sdpo` block; inert unless policy_loss.loss_mode == "sdpo"."""

    sdpo: SDPOConfig = block(SDPOConfig, "the SDPO loss, its teacher and its teacher contexts")

    @property
    def sdpo_enabled(self) -> bool:
        """Whether this actor's policy loss is the SDPO loss (`sdpo_loss_selected`)."""
        return sdpo_loss_selected(self.policy_loss)


def sdpo_loss_selected(policy_loss: Mapping[str, Any]) -> bool:
    """Whether verl's `actor.policy_loss` block selects the SDPO loss (loss_mode "sdpo"; verl's default "vanilla").
    The one test of it: `SDPOActorConfig.sdpo_enabled` on the workers, `SDPOTrainer` on the driver."""
    return policy_loss.get("loss_mode", "vanilla") == "sdpo"


@dataclass
class TTRLConfig(BaseConfig):
    """Test-time RL (the recipes' `sdpo.ttrl`): train on a set of problems until each is proved or out of budget.

    At most one of theorem, theorems and split; none of them: full-dataset training. With `theorems`, each step's
    prompts are drawn from the problems still open (`sdpo_ext.ttrl.problem_set`); give the key with a leading `+`
    where the task part does not list it. `protocol` says how a set is trained (`sdpo_ext.ttrl.modes.PROTOCOLS`):
    `shared`, every problem at once in one model (set-TTRL); `single`, one problem at a time, each from the initial
    state, as a fresh `theorem=` run would train it (the seed's and the SDPO authors' discovery protocol), one
    start-up for the whole queue (`sdpo_ext.ttrl.queue`). The recipes' miniF2F-test is their val split. The task
    part sets `max_attempts` (None here: no budget given, which TTRL refuses).

    This block is TTRL's one channel: the task parts pick their TTRL settings through the rules of
    `sdpo_ext.ttrl.modes` (the resolvers `sdpo.ttrl_pick` / `sdpo.ttrl_prompts` over the whole block), and the run
    length comes from the budgets at start (`TTRLSet.step_limit`, replacing trainer.total_training_steps).
    """

    theorem: Optional[str] = option(None, "one theorem (or MATH problem) to train on, by name: the set of one")
    theorems: Optional[list[str]] = option(None, "several problems by name, trained on together in one run")
    split: Optional[str] = option(None, "train | val: every problem of data.train_files / data.val_files")
    stop_on_success: bool = option(True, "a problem retires after the step with its first valid proof (TTRL only)")
    max_attempts: Optional[int] = option(None, "attempt budget of each problem, in judged attempts (INFRA spends none)")
    protocol: str = option("shared", "how a set is trained: shared (all problems in one model) | single (one "
                                     "problem at a time, each from the initial state)")

    def __post_init__(self) -> None:
        if self.max_attempts is not None and self.max_attempts < 1:
            raise ValueError(f"sdpo.ttrl.max_attempts must be >= 1, got {self.max_attempts}")
        given = [key for key in ("theorem", "theorems", "split") if getattr(self, key) not in (None, "")]
        if len(given) > 1:
            raise ValueError(f"sdpo.ttrl: give one of theorem, theorems, split, not {given}")
        if self.theorems is not None and not list(self.theorems):
            raise ValueError("sdpo.ttrl.theorems is empty (list at least one name, or null for no TTRL)")
        if self.split is not None and self.split not in TTRL_SPLITS:
            raise ValueError(f"sdpo.ttrl.split must be one of {TTRL_SPLITS}, got {self.split!r}")
        if self.protocol not in PROTOCOLS:
            raise ValueError(f"sdpo.ttrl.protocol must be one of {PROTOCOLS}, got {self.protocol!r}")
        if given and self.max_attempts is None:
            raise ValueError(f"sdpo.ttrl.{given[0]} needs sdpo.ttrl.max_attempts (the attempt budget per problem)")

    @property
    def active(self) -> bool:
        """Whether the run is TTRL (a theorem, a list of theorems, or a split) rather than full-dataset training."""
        return ttrl_mode(self.theorem, self.theorems, self.split) is not None


@dataclass
class RunConfig(BaseConfig):
    """The recipes' top-level `sdpo:` block: what a run trains on and what it records, for SDPO and GRPO alike.

    dataset, prompt_style, data_dir and full_batch_size are read only by the task part's interpolations
    (`${sdpo.data_dir}`, ...), so each task part sets them and None here means "not used by this task".
    """

    algorithm_name: Optional[str] = option(None, "the run's label (attempt log `method`, experiment names); null: "
                                                 "sdpo when the SDPO loss runs, else grpo")
    attempt_log: Optional[str] = option(None, "JSONL file every attempt is appended to (null: no attempt log)")
    ttrl: TTRLConfig = block(TTRLConfig, "test-time RL on one theorem or a set of problems")
    dataset: Optional[str] = option(None, "the prepared dataset in the parquet file names (e.g. minif2f)")
    prompt_style: Optional[str] = option(None, "the prompt style in the parquet file names (e.g. kimina)")
    data_dir: Optional[str] = option(None, "folder of the prepared parquet files")
    full_batch_size: Optional[int] = option(None, "prompts per step without TTRL (data.train_batch_size)")


def run_config(config) -> RunConfig | None:
    """The typed top-level `sdpo` block of verl's composed config (interpolations resolved), or None without one.
    ValueError names an unknown or mistyped key."""
    block = config.get("sdpo", None)
    if block is None:
        return None
    try:
        return omega_conf_to_dataclass(OmegaConf.to_container(block, resolve=True), dataclass_type=RunConfig)
    except Exception as e:  # OmegaConf's key/type errors
        raise ValueError(f"the top-level `sdpo` block does not fit sdpo_ext.config.RunConfig: {e}") from e
