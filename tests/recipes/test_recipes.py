"""Every recipe composes through verl 0.9.1's real main_ppo config (Hydra compose over verl's config dir)."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pytest
import verl  # noqa: F401  (loads the sdpo-lean plugin: resolvers, registries)
from hydra.errors import MissingConfigException
from omegaconf import OmegaConf

from lean_env.options import option_fields
from reward.lean.score import resolve_config
from sdpo_ext.startup.checks import UnknownConfigKeyError, check_config_keys
from sdpo_ext.startup.compose import compose_recipe

MODELS = {
    "kimina_1_7b": "AI-MO/Kimina-Prover-RL-1.7B",
    "kimina_distill_1_7b": "AI-MO/Kimina-Prover-Distill-1.7B",
    "goedel_8b": "Goedel-LM/Goedel-Prover-V2-8B",
    "deepseek_7b": "deepseek-ai/DeepSeek-Prover-V2-7B",
    "qwen3_5_4b": "Qwen/Qwen3.5-4B",
}
# Keys a GRPO twin may change: the algorithm, the SDPO block itself, and the run's name.
ALGORITHM_KEY_PREFIXES = (
    "algorithm.",
    "actor_rollout_ref.actor.policy_loss.",
    "actor_rollout_ref.actor.sdpo.",
    "actor_rollout_ref.actor.use_kl_loss",
    "sdpo.algorithm_name",
    "trainer.experiment_name",
    "actor_rollout_ref.rollout.trace.experiment_name",
    "trainer.default_local_dir",
    "sdpo.attempt_log",
    # SDPO's teacher lives in the reference slot, kept on the GPU; GRPO (no KL term) builds no reference model.
    "actor_rollout_ref.ref.fsdp_config.forward_only",
    "actor_rollout_ref.ref.optim.",
)




def flat(cfg) -> dict:
    out = {}

    def walk(node, prefix):
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, f"{prefix}.{k}" if prefix else str(k))
        else:
            out[prefix] = node

    walk(OmegaConf.to_container(cfg, resolve=True), "")
    return out


@pytest.fixture(autouse=True)
def _env(monkeypatch, tmp_path):
    monkeypatch.setenv("SDPO_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("SDPO_OUTPUT_DIR", str(tmp_path / "runs"))


@pytest.mark.parametrize("model", sorted(MODELS))
@pytest.mark.parametrize("algorithm", ["sdpo", "grpo", "srpo", "sc_sdpo"])
def test_recipe_composes_with_model_reward_and_algorithm(model, algorithm):
    cfg = compose_recipe(f"{algorithm}_{model}")
    check_config_keys(cfg)  # every key is one verl (or the plugin) defines
    OmegaConf.resolve(cfg)
    assert cfg.actor_rollout_ref.model.path == MODELS[model]
    assert cfg.reward.custom_reward_function.path == "pkg://reward.lean"
    assert cfg.reward.custom_reward_function.name == "compute_score"
    assert cfg.algorithm.adv_estimator == "grpo_valid"
    assert cfg.trainer.use_v1 and cfg.trainer.v1.trainer_mode == "sync"
    expected_loss = "vanilla" if algorithm == "grpo" else "sdpo"
    assert cfg.actor_rollout_ref.actor.policy_loss.loss_mode == expected_loss
    if algorithm != "grpo":
        assert cfg.actor_rollout_ref.actor.sdpo.variant == algorithm
        from sdpo_ext.startup.checks import sdpo_setting_errors

        assert sdpo_setting_errors(cfg, cfg.actor_rollout_ref.actor.sdpo.grpo_weight) == []
        assert cfg.sdpo.algorithm_name == algorithm
    assert cfg.data.train_files.endswith(f"minif2f_{cfg.sdpo.prompt_style}_valid.parquet")
    assert cfg.data.train_batch_size == 32 and cfg.trainer.total_training_steps is None


@pytest.mark.parametrize("model", sorted(MODELS) + ["toy_lean", "demo"])
def test_grpo_twin_differs_only_in_algorithm_keys(model):
    sdpo, grpo = flat(compose_recipe(f"sdpo_{model}")), flat(compose_recipe(f"grpo_{model}"))
    differing = sorted(k for k in set(sdpo) | set(grpo) if sdpo.get(k, "<absent>") != grpo.get(k, "<absent>"))
    assert differing, "the twins must differ somewhere (the loss)"
    offending = [k for k in differing if not k.startswith(ALGORITHM_KEY_PREFIXES)]
    assert offending == [], f"non-algorithm keys differ between sdpo_{model} and grpo_{model}: {offending}"
    for key in ("data.train_files", "actor_rollout_ref.rollout.temperature", "actor_rollout_ref.actor.optim.lr",
                "reward.custom_reward_function.path", "actor_rollout_ref.rollout.n"):
        assert sdpo[key] == grpo[key]


@pytest.mark.parametrize("model", sorted(MODELS) + ["toy_lean", "demo"])
@pytest.mark.parametrize("variant", ["srpo", "sc_sdpo"])
def test_sdpo_family_twins_differ_only_in_the_sdpo_block(model, variant):
    sdpo, other = flat(compose_recipe(f"sdpo_{model}")), flat(compose_recipe(f"{variant}_{model}"))
    differing = sorted(k for k in set(sdpo) | set(other) if sdpo.get(k, "<absent>") != other.get(k, "<absent>"))
    assert "actor_rollout_ref.actor.sdpo.variant" in differing
    naming = tuple(p for p in ALGORITHM_KEY_PREFIXES if "name" in p or "dir" in p or "log" in p)
    assert [k for k in differing if not k.startswith(("actor_rollout_ref.actor.sdpo.",) + naming)] == []


def test_sdpo_actor_config_instantiates_through_target():
    from verl.utils.config import omega_conf_to_dataclass

    from sdpo_ext.config import SDPOActorConfig, SDPOConfig
    from sdpo_ext.teacher.reprompt import RepromptConfig

    cfg = compose_recipe("sdpo_kimina_1_7b")
    OmegaConf.resolve(cfg)
    actor = omega_conf_to_dataclass(cfg.actor_rollout_ref.actor)
    assert isinstance(actor, SDPOActorConfig) and actor.sdpo_enabled
    assert isinstance(actor.sdpo, SDPOConfig) and isinstance(actor.sdpo.reprompt, RepromptConfig)
    assert (actor.sdpo.alpha, actor.sdpo.topk, actor.sdpo.teacher.mode,
            actor.sdpo.teacher.update_rate) == (0.5, 100, "ema", 0.05)


def test_sdpo_teacher_slot_is_a_gpu_resident_reference_with_an_optimizer_config_verl_accepts():
    """forward_only=false keeps verl from CPU-offloading the reference; verl then builds an optimizer and LR
    scheduler for it from ref.optim (FSDPEngine's own builder methods, run here on a toy module; the FSDP
    wrapping itself needs a GPU and was run on an H200)."""
    from types import SimpleNamespace

    import torch
    from omegaconf import open_dict
    from verl.utils.config import omega_conf_to_dataclass
    from verl.workers.engine.fsdp.transformer_impl import FSDPEngine

    cfg = compose_recipe("sdpo_kimina_1_7b")
    OmegaConf.resolve(cfg)
    ref_section = cfg.actor_rollout_ref.ref
    with open_dict(ref_section):  # the renames verl's ActorRolloutRefWorker.init_model applies before converting
        ref_section.ppo_mini_batch_size = cfg.actor_rollout_ref.actor.ppo_mini_batch_size
        ref_section.ppo_micro_batch_size = ref_section.pop("log_prob_micro_batch_size", None)
        ref_section.ppo_micro_batch_size_per_gpu = ref_section.pop("log_prob_micro_batch_size_per_gpu", None)
        ref_section.use_dynamic_bsz = ref_section.pop("log_prob_use_dynamic_bsz", False)
        ref_section.ppo_max_token_len_per_gpu = ref_section.pop("log_prob_max_token_len_per_gpu", None)
    ref = omega_conf_to_dataclass(ref_section)
    assert ref.engine.forward_only is False and ref.engine.param_offload is False
    assert ref.engine.model_dtype == "fp32"  # the EMA needs fp32 weights (see sdpo_ext.teacher.weights.ema_update_)
    engine = SimpleNamespace(optimizer_config=ref.optim, rank=0)
    module = torch.nn.Linear(4, 4)
    before = module.weight.detach().clone()
    optimizer = FSDPEngine._build_optimizer(engine, module)
    scheduler = FSDPEngine._build_lr_scheduler(engine, optimizer)
    module.weight.sum().backward()
    optimizer.step()
    scheduler.step()
    assert optimizer.param_groups[0]["lr"] == 0.0
    assert torch.equal(module.weight.detach(), before)  # lr 0, and weight decay is scaled by lr: never moves


def test_single_override_switches_to_ttrl():
    from sdpo_ext.config import run_config
    from sdpo_ext.ttrl.dataset import ttrl_data_config

    cfg = compose_recipe("sdpo_kimina_1_7b", ("sdpo.ttrl.theorem=mathd_algebra_10", "sdpo.ttrl.max_attempts=64"))
    OmegaConf.resolve(cfg)
    assert cfg.data.train_batch_size == 1 and cfg.actor_rollout_ref.actor.ppo_mini_batch_size == 1
    assert cfg.actor_rollout_ref.rollout.n == 16
    assert cfg.trainer.total_training_steps is None  # the trainer takes it from the budget (TTRLSet.step_limit)
    block = ttrl_data_config(run_config(cfg).ttrl, cfg.data)  # what the trainer writes into data.sdpo_ttrl
    assert block["theorem"] == "mathd_algebra_10"
    assert [Path(f).name for f in block["files"]] == ["minif2f_kimina_valid.parquet", "minif2f_kimina_test.parquet"]


@pytest.mark.parametrize("recipe", ["sdpo_kimina_1_7b", "grpo_goedel_8b", "sdpo_math_qwen3_5_4b", "sdpo_demo"])
@pytest.mark.parametrize("override, prompts", [("sdpo.ttrl.theorem=t", 1), ("sdpo.ttrl.theorems=[a,b,c]", 3),
                                               ("sdpo.ttrl.split=val", None)])
def test_every_ttrl_mode_gets_the_ttrl_settings(recipe, override, prompts):
    """One theorem, a list and a split switch the same settings (TTRLConfig's rules): no validation, TTRL's
    rollout.n, one prompt per problem up to the full batch; never full training's."""
    full = OmegaConf.to_container(compose_recipe(recipe), resolve=True)
    cfg = OmegaConf.to_container(compose_recipe(recipe, (override, "sdpo.ttrl.max_attempts=64")),
                                 resolve=True)
    assert cfg["trainer"]["test_freq"] == -1 and cfg["trainer"]["val_before_train"] is False
    assert cfg["data"]["train_batch_size"] == (prompts or full["sdpo"]["full_batch_size"])
    assert cfg["actor_rollout_ref"]["actor"]["ppo_mini_batch_size"] == cfg["data"]["train_batch_size"]
    single = OmegaConf.to_container(compose_recipe(recipe, ("sdpo.ttrl.theorem=t", "sdpo.ttrl.max_attempts=64")),
                                    resolve=True)
    assert cfg["actor_rollout_ref"]["rollout"]["n"] == single["actor_rollout_ref"]["rollout"]["n"]


def verl_v1_loop_steps(total_epochs: int, total_training_steps: int, steps_per_epoch: int) -> int:
    """Steps verl 0.9.1's v1 fit loop runs (trainer/ppo/v1/trainer_base.py: the while condition, the epoch
    counter and the is_last_step return, replayed)."""
    global_steps, current_epoch, run = 0, 0, 0
    while current_epoch < total_epochs and global_steps <= total_training_steps:
        is_last_step = global_steps >= total_training_steps
        global_steps += 1
        current_epoch = (global_steps - 1) // steps_per_epoch
        if is_last_step:
            return run
        run += 1
    return run


@pytest.mark.parametrize("recipe, attempts", [("sdpo_kimina_1_7b", 1024), ("grpo_goedel_8b", 4096), ("sdpo_demo", 256)])
def test_ttrl_runs_its_whole_attempt_budget(recipe, attempts):
    """The TTRL dataset is one row, so verl's epoch limit would end the run after total_epochs steps: the trainer
    makes the whole run one epoch of the set's step limit (TTRLHooks._init_dataloader), whatever total_epochs says."""
    from sdpo_ext.ttrl.problem_set import TTRLSet

    cfg = compose_recipe(recipe, ("sdpo.ttrl.theorem=t", f"sdpo.ttrl.max_attempts={attempts}"))
    OmegaConf.resolve(cfg)
    n = cfg.actor_rollout_ref.rollout.n
    steps = TTRLSet(["t"], budget=attempts).step_limit(cfg.data.train_batch_size, n)
    assert steps >= -(-attempts // n)
    assert verl_v1_loop_steps(cfg.trainer.total_epochs, steps, steps_per_epoch=steps) == steps


def test_dataset_key_switches_the_prepared_files():
    cfg = compose_recipe("sdpo_kimina_1_7b", ("sdpo.dataset=proofnet",))
    OmegaConf.resolve(cfg)
    assert Path(cfg.data.train_files).name == "proofnet_kimina_valid.parquet"
    assert Path(cfg.data.val_files).name == "proofnet_kimina_test.parquet"


@pytest.mark.parametrize("algorithm", ["sdpo", "grpo"])
def test_toy_lean_recipes_run_ttrl_on_the_double_with_smollm2(algorithm, monkeypatch):
    monkeypatch.setenv("SDPO_TOY_DATA_DIR", "/data/toy")
    cfg = compose_recipe(f"{algorithm}_toy_lean", ("sdpo.ttrl.theorem=toy_add_7_5", "sdpo.ttrl.max_attempts=48"))
    check_config_keys(cfg)
    OmegaConf.resolve(cfg)
    assert cfg.data.train_files == "/data/toy/toy_fewshot_valid.parquet"
    reward = cfg.reward.custom_reward_function.reward_kwargs
    assert reward.backend == "repl"
    assert reward.repl_command == "python3 -m lean_env.testing.fake_repl --rules /data/toy/toy_rules.json"
    assert cfg.actor_rollout_ref.rollout.tensor_model_parallel_size == 1  # one GPU (verl's default is 2)
    assert (cfg.data.train_batch_size, cfg.actor_rollout_ref.rollout.n) == (1, 16)
    assert cfg.trainer.total_training_steps is None  # the trainer's, from the budget (TTRLSet.step_limit)


@pytest.mark.parametrize("env, expected", [(None, 8), ("3", 3)])
def test_kimina_client_is_sized_from_the_servers_repl_count(env, expected, monkeypatch):
    if env is None:
        monkeypatch.delenv("LEAN_SERVER_MAX_REPLS", raising=False)
    else:
        monkeypatch.setenv("LEAN_SERVER_MAX_REPLS", env)
    cfg = compose_recipe("sdpo_kimina_1_7b")
    kwargs = OmegaConf.to_container(cfg.reward.custom_reward_function.reward_kwargs, resolve=True)
    assert resolve_config(**kwargs).backend_options.server_repls == expected



def test_command_line_overrides_beat_the_recipe():
    cfg = compose_recipe("grpo_goedel_8b",
                         ("actor_rollout_ref.rollout.temperature=1.0", "data.max_response_length=1024"))
    assert cfg.actor_rollout_ref.rollout.temperature == 1.0 and cfg.data.max_response_length == 1024


def test_unknown_recipe_name_is_named_in_the_error():
    with pytest.raises(MissingConfigException, match="sdpo_kimna_1_7b"):
        compose_recipe("sdpo_kimna_1_7b")


def test_typo_in_a_key_is_named_with_a_suggestion():
    cfg = compose_recipe("sdpo_kimina_1_7b", ("+actor_rollout_ref.actor.ppo_mini_batchsize=4",
                                              "+data.max_prompt_lenght=9",
                                              "+actor_rollout_ref.ref.optim.lr_warmup_step=3"))
    with pytest.raises(UnknownConfigKeyError) as err:
        check_config_keys(cfg)
    message = str(err.value)
    assert "actor_rollout_ref.actor.ppo_mini_batchsize" in message and "ppo_mini_batch_size" in message
    assert "data.max_prompt_lenght" in message and "max_prompt_length" in message
    assert "actor_rollout_ref.ref.optim.lr_warmup_step" in message and "lr_warmup_steps" in message


def test_free_form_sections_accept_new_keys():
    cfg = compose_recipe(
        "sdpo_kimina_1_7b",
        ("+actor_rollout_ref.model.override_config.attn_implementation=sdpa", "+reward.custom_reward_function.reward_kwargs.url=http://x"),
    )
    check_config_keys(cfg)


@pytest.mark.parametrize("algorithm", ["sdpo", "grpo"])
def test_shared_gpu_overrides_of_the_bench_runners_compose_into_the_vllm_engine_kwargs(algorithm):
    """bench/common/share_gpu.sh's overrides (CONCURRENT=1) reach the keys verl hands to vLLM, past the key check."""
    import subprocess

    from verl.utils.config import omega_conf_to_dataclass

    root = Path(__file__).resolve().parents[2]
    listed = subprocess.run(["bash", "-c", '. bench/common/share_gpu.sh && printf "%s\\n" "${SHARE_GPU_OVERRIDES[@]}"'],
                            cwd=root, capture_output=True, text=True, check=True).stdout.split()
    cfg = compose_recipe(f"{algorithm}_demo", tuple(listed))
    check_config_keys(cfg)
    rollout = omega_conf_to_dataclass(cfg.actor_rollout_ref.rollout)
    assert rollout.gpu_memory_utilization == pytest.approx(0.1)
    assert int(rollout.engine_kwargs["vllm"]["kv_cache_memory_bytes"]) == 4_000_000_000


def test_side_by_side_overrides_of_the_bench_runners_compose_with_their_token_cap():
    """bench/common/side_by_side.sh (run_learning.sh): the overrides pass the key check and set
    the runner's token cap everywhere; without a cap the file refuses to be sourced."""
    import subprocess

    from verl.utils.config import omega_conf_to_dataclass

    root = Path(__file__).resolve().parents[2]
    script = 'SIDE_BY_SIDE_TOKENS=4096 . bench/common/side_by_side.sh && printf "%s\\n" "${SIDE_BY_SIDE[@]}"'
    listed = subprocess.run(["bash", "-c", script], cwd=root, capture_output=True, text=True, check=True).stdout.split()
    cfg = compose_recipe("sdpo_demo", tuple(listed))
    check_config_keys(cfg)
    arr = cfg.actor_rollout_ref
    assert arr.actor.ppo_max_token_len_per_gpu == arr.rollout.log_prob_max_token_len_per_gpu == 4096
    assert arr.ref.log_prob_max_token_len_per_gpu == 4096
    assert int(omega_conf_to_dataclass(arr.rollout).engine_kwargs["vllm"]["kv_cache_memory_bytes"]) == 2_000_000_000
    unset = subprocess.run(["bash", "-c", ". bench/common/side_by_side.sh"], cwd=root, capture_output=True, text=True)
    assert unset.returncode != 0 and "set the token cap first" in unset.stderr


@lru_cache(maxsize=1)
def every_recipe() -> dict:
    """Every recipe in recipes/recipe, composed once for the catalogue-wide tests, with its hydra node (callbacks)."""
    recipes = sorted(p.stem for p in (Path(__file__).resolve().parents[2] / "recipes" / "recipe").glob("*.yaml"))
    composed = {}
    for name in recipes:
        composed[name] = compose_recipe(name, return_hydra_config=True)
    return composed


def test_every_recipe_writes_to_its_own_run_folder():
    folders = {}
    for name, cfg in every_recipe().items():
        folders.setdefault((cfg.trainer.project_name, cfg.trainer.experiment_name), []).append(name)
    assert {key: names for key, names in folders.items() if len(names) > 1} == {}


def test_every_recipe_installs_the_start_up_checks_and_sizes_transfer_queue_to_the_host():
    """The runtime part: without it a run skips the pre-flight (a GPU-less host starts Ray and waits) and keeps verl's
    8 TransferQueue units (a small host hangs)."""
    missing = []
    for name, cfg in every_recipe().items():
        callback = OmegaConf.select(cfg, "hydra.callbacks.sdpo_lean_startup._target_")
        units = OmegaConf.to_container(cfg.transfer_queue.backend.SimpleStorage)["num_data_storage_units"]
        if callback != "sdpo_ext.startup.checks.StartupChecks" or "sdpo.tq_storage_units" not in str(units):
            missing.append(name)
    assert len(every_recipe()) >= 20 and missing == []


LEAN_RECIPES = [f"{a}_{m}" for a in ("sdpo", "grpo", "srpo", "sc_sdpo") for m in sorted(MODELS) + ["toy_lean"]]


# The authors' sampling, cited in the model parts' comments: (training temperature, top-p), (validation n,
# temperature, top-p). Kimina: the kimina-prover-rl recipe script; Goedel: its repo's evaluation pipeline; DeepSeek:
# DeepSeek-Prover-V1.5's sampling config; Qwen3.5: the model card's thinking mode for precise tasks.
AUTHOR_SAMPLING = {
    "kimina_1_7b": ((1.0, 1.0), (8, 1.0, 0.95)),
    "kimina_distill_1_7b": ((1.0, 1.0), (8, 1.0, 0.95)),
    "goedel_8b": ((1.0, 0.95), (4, 1.0, 0.95)),
    "deepseek_7b": ((1.0, 0.95), (4, 1.0, 0.95)),
    "qwen3_5_4b": ((0.6, 0.95), (4, 0.6, 0.95)),
}


@pytest.mark.parametrize("recipe", LEAN_RECIPES)
def test_lean_recipes_validate_sampled_as_the_authors_evaluate(recipe):
    cfg = compose_recipe(recipe)
    OmegaConf.resolve(cfg)
    rollout = cfg.actor_rollout_ref.rollout
    assert rollout.val_kwargs.n >= 4 and rollout.val_kwargs.do_sample and rollout.val_kwargs.temperature > 0
    model = recipe.split("_", 1)[1].removeprefix("sdpo_")
    if model in AUTHOR_SAMPLING:
        train, val = AUTHOR_SAMPLING[model]
        assert (rollout.temperature, rollout.top_p) == train
        assert (rollout.val_kwargs.n, rollout.val_kwargs.temperature, rollout.val_kwargs.top_p) == val
    # truncation from token counts (reward.lean.verl_manager) for every Lean recipe, SDPO and GRPO alike
    manager = cfg.reward.reward_manager
    assert (manager.source, manager.name, manager.module.path) == ("importlib", "LeanRewardManager",
                                                                    "pkg://reward.lean.verl_manager")
    # the Lean the statements (DeepSeek's miniF2F/ProofNet copies) need, checked against the backend at start
    assert cfg.reward.custom_reward_function.reward_kwargs.lean_version == "v4.9.0"


def test_greedy_validation_is_one_override_away():
    cfg = compose_recipe("sdpo_goedel_8b", ("actor_rollout_ref.rollout.val_kwargs.temperature=0",
                                            "actor_rollout_ref.rollout.val_kwargs.n=1"))
    OmegaConf.resolve(cfg)
    assert (cfg.actor_rollout_ref.rollout.val_kwargs.temperature, cfg.actor_rollout_ref.rollout.val_kwargs.n) == (0, 1)
    assert cfg.actor_rollout_ref.rollout.temperature > 0   # training sampling is untouched


# The authors' response budgets (cited in the model parts' comments).
AUTHOR_BUDGETS = {"goedel_8b": 32768, "qwen3_5_4b": 32768, "deepseek_7b": 8192, "kimina_1_7b": 24576,
                  "kimina_distill_1_7b": 24576}


@pytest.mark.parametrize("model", sorted(MODELS))
def test_model_parts_keep_the_authors_budget_and_every_sequence_fits_a_dynamic_batch(model):
    cfg = compose_recipe(f"sdpo_{model}")
    OmegaConf.resolve(cfg)
    longest = cfg.data.max_prompt_length + cfg.data.max_response_length
    assert cfg.data.max_response_length == AUTHOR_BUDGETS[model]
    assert cfg.actor_rollout_ref.rollout.response_length == cfg.data.max_response_length
    for cap in (cfg.actor_rollout_ref.actor.ppo_max_token_len_per_gpu,
                cfg.actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu,
                cfg.actor_rollout_ref.ref.log_prob_max_token_len_per_gpu):
        assert cap >= longest   # verl's seqlen balancing asserts max_token_len >= the longest sequence


@pytest.mark.parametrize("model", ["goedel_8b", "qwen3_5_4b"])
def test_a_shorter_budget_is_one_override_away(model):
    cfg = compose_recipe(f"sdpo_{model}", ("data.max_response_length=8192",))
    OmegaConf.resolve(cfg)
    assert cfg.actor_rollout_ref.rollout.response_length == 8192
    assert cfg.actor_rollout_ref.actor.ppo_max_token_len_per_gpu == 2048 + 8192


@pytest.mark.parametrize("recipe", ["sdpo_kimina_1_7b", "grpo_goedel_8b", "srpo_toy_lean", "sdpo_demo"])
def test_lean_and_demo_recipes_log_to_the_file_logger_that_sdpo_eval_curves_reads(recipe):
    assert list(compose_recipe(recipe).trainer.logger) == ["console", "file"]


@pytest.mark.parametrize("recipe", LEAN_RECIPES)
def test_lean_reward_kwargs_are_option_fields_and_repeat_no_default(recipe, monkeypatch):
    """Each reward_kwargs key is a `lean_env.options` field; a value equal to the field's default would be a second
    home for it (null stands for "the default": env-backed keys listed so they can be set without `+`)."""
    for name in ("LEAN_BACKEND", "LEAN_SERVER_MAX_REPLS"):
        monkeypatch.delenv(name, raising=False)
    kwargs = OmegaConf.to_container(compose_recipe(recipe).reward.custom_reward_function.reward_kwargs, resolve=True)
    fields = {f.name: f for _, f in option_fields()}
    assert set(kwargs) <= set(fields)
    assert [k for k, v in kwargs.items() if v is not None and v == fields[k].default] == []
