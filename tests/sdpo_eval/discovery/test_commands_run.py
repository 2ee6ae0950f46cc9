"""The command lines of a discovery job (main_ppo never runs): a verl run per (method, seed) over the whole set under
its method's protocol, the sampler for the sampling methods; and the table of methods."""
from __future__ import annotations

import pytest

from sdpo_eval.discovery.commands import sampler_command, verl_command
from sdpo_eval.discovery.methods import METHODS, method, protocol
from sdpo_eval.discovery.recipe import compose_recipe


def test_the_table_names_each_method_once_with_its_protocol():
    assert {m: protocol(m) for m in ("best_of_k", "reprompt", "grpo", "sdpo", "sdpo_confident", "srpo",
                                     "sdpo_confident_shared", "srpo_shared", "verl_no_update")} == {
        "best_of_k": "sampler", "reprompt": "sampler", "grpo": "single", "sdpo": "single", "sdpo_confident": "single",
        "srpo": "single", "sdpo_confident_shared": "shared", "srpo_shared": "shared", "verl_no_update": "single"}
    assert method("sdpo_confident_shared").overrides == method("sdpo_confident").overrides != ()
    assert method("sdpo").overrides == () and method("verl_no_update").algorithm == "grpo"
    assert protocol("an_old_name") is None and all(m.name == name for name, m in METHODS.items())
    with pytest.raises(ValueError, match="unknown method 'ppo'"):
        method("ppo")


def test_a_verl_run_trains_every_problem_under_its_methods_protocol(tmp_path):
    run_dir = tmp_path / "sdpo_confident" / "seed2"
    command = verl_command("sdpo_confident", "toy_lean", ["toy_add_7_5", "toy_lt_9_11"], 128, run_dir, 2,
                           overrides=["trainer.n_gpus_per_node=1"], python="python")
    assert command[:5] == ["python", "-m", "verl.trainer.main_ppo", "+recipe=sdpo_toy_lean",
                           "++sdpo.ttrl.theorems=[toy_add_7_5,toy_lt_9_11]"]
    assert {"sdpo.ttrl.protocol=single", "sdpo.ttrl.max_attempts=128", "sdpo.ttrl.stop_on_success=true",
            "sdpo.algorithm_name=sdpo_confident", f"sdpo.attempt_log={run_dir / 'attempts.jsonl'}", "data.seed=2",
            "actor_rollout_ref.rollout.seed=2", "actor_rollout_ref.actor.sdpo.token_weighting=confident",
            "trainer.save_freq=-1"} <= set(command)
    assert command[-1] == "trainer.n_gpus_per_node=1"  # the caller's overrides come last and win
    shared = verl_command("srpo_shared", "demo", ["a"], 8, run_dir, 1, save_freq=8)
    assert "sdpo.ttrl.protocol=shared" in shared and "+recipe=srpo_demo" in shared
    assert {"trainer.save_freq=8", "trainer.resume_mode=auto"} <= set(shared)
    with pytest.raises(ValueError, match="comma-free"):
        verl_command("grpo", "toy_lean", ["a,b"], 8, run_dir, 0)
    with pytest.raises(ValueError, match="sampler method"):
        verl_command("best_of_k", "toy_lean", ["a"], 8, run_dir, 0)


def test_the_no_update_verl_run_samples_like_the_trained_runs_and_never_updates(tmp_path, monkeypatch):
    """Composed as main_ppo composes them: verl_no_update and GRPO/SDPO differ in learning only, not in sampling."""
    from omegaconf import OmegaConf

    from sdpo_ext.config import run_config

    monkeypatch.setenv("SDPO_TOY_DATA_DIR", str(tmp_path / "toy"))
    monkeypatch.setenv("SDPO_OUTPUT_DIR", str(tmp_path / "runs"))
    composed = {}
    for name in ("verl_no_update", "grpo", "sdpo"):
        argv = verl_command(name, "toy_lean", ["toy_add_7_5", "toy_mul_6_7"], 64, tmp_path / name, 1)
        composed[name] = compose_recipe(f"{method(name).algorithm}_toy_lean", argv[4:])

    def sampling(cfg):
        rollout, data = cfg["actor_rollout_ref"]["rollout"], cfg["data"]
        return (rollout["temperature"], rollout["top_p"], rollout["n"], rollout["seed"], data["train_batch_size"],
                data["max_response_length"], cfg["actor_rollout_ref"]["model"]["path"])

    assert sampling(composed["verl_no_update"]) == sampling(composed["grpo"]) == sampling(composed["sdpo"])
    assert composed["grpo"]["data"]["train_batch_size"] == 1   # the single protocol: one prompt a step
    warmup = {name: cfg["trainer"]["critic_warmup"] for name, cfg in composed.items()}
    assert warmup["verl_no_update"] >= 10**9 and warmup["grpo"] == warmup["sdpo"] == 0
    run = run_config(OmegaConf.create(composed["verl_no_update"]))
    assert run.ttrl.theorems == ["toy_add_7_5", "toy_mul_6_7"] and run.ttrl.max_attempts == 64
    assert run.ttrl.protocol == "single" and run.algorithm_name == "verl_no_update"


def test_the_sampler_runs_its_methods_and_seeds_in_one_process_into_the_same_layout(tmp_path):
    command = sampler_command([("reprompt", 2), ("best_of_k", 2)], "toy_lean", ["toy_add_7_5", "toy_mul_6_7"], 64,
                              tmp_path, overrides=("data.max_response_length=128",), flags=["--engine", "vllm"],
                              python="python3")
    assert command[:4] == ["python3", "-m", "sdpo_eval.discovery", "sample"]
    assert command[command.index("--recipe") + 1] == "sdpo_toy_lean"
    assert command[command.index("--runs") + 1] == "reprompt:2,best_of_k:2"
    assert command[command.index("--out-dir") + 1] == str(tmp_path)  # the sampler adds <method>/seed<s> itself
    assert command[command.index("--") + 1:] == ["data.max_response_length=128"] and "--engine" in command
    with pytest.raises(ValueError, match="verl run"):
        sampler_command([("grpo", 1)], "toy_lean", ["toy_add_7_5"], 8, tmp_path)


@pytest.mark.parametrize("name", ["sdpo_confident", "srpo_shared"])
def test_the_launchers_side_by_side_overrides_pass_the_key_check_under_both_protocols(name, tmp_path, monkeypatch):
    from omegaconf import OmegaConf

    from sdpo_eval.discovery.launcher import SIDE_BY_SIDE, SIDE_BY_SIDE_TOKENS
    from sdpo_ext.startup.checks import check_config_keys

    monkeypatch.setenv("SDPO_DEMO_DATA_DIR", str(tmp_path / "demo"))
    monkeypatch.setenv("SDPO_OUTPUT_DIR", str(tmp_path / "runs"))
    argv = verl_command(name, "demo", ["add_train_1", "add_train_2"], 64, tmp_path / name, 1, SIDE_BY_SIDE,
                        save_freq=32)
    cfg = compose_recipe(f"{method(name).algorithm}_demo", argv[4:])
    check_config_keys(OmegaConf.create(cfg))
    arr = cfg["actor_rollout_ref"]
    assert arr["actor"]["ppo_max_token_len_per_gpu"] == SIDE_BY_SIDE_TOKENS
    assert arr["rollout"]["free_cache_engine"] is False
    assert cfg["data"]["train_batch_size"] == (1 if method(name).protocol == "single" else 2)
    assert arr["rollout"]["max_model_len"] == cfg["data"]["max_prompt_length"] + cfg["data"]["max_response_length"]


def test_a_1p7b_model_side_by_side_fits_vllms_cache_at_the_runs_context(tmp_path, monkeypatch):
    """The 2026-12-07 switch probe (a Qwen3-1.7B shape on the demo) stopped in vLLM's start: the 2 GB cache could not
    hold the model's 40,960-token context. The launcher's runs take prompt + response as their context, which fits."""
    import json

    from omegaconf import OmegaConf

    from sdpo_eval.discovery.launcher import SIDE_BY_SIDE
    from sdpo_ext.startup.kv_cache import kv_cache_problems

    monkeypatch.setenv("SDPO_DEMO_DATA_DIR", str(tmp_path / "demo"))
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "config.json").write_text(json.dumps({
        "num_hidden_layers": 28, "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 128,
        "hidden_size": 2048, "max_position_embeddings": 40960}))
    argv = verl_command("sdpo", "demo", ["add_train_1"], 16, tmp_path / "r", 1,
                        [*SIDE_BY_SIDE, f"actor_rollout_ref.model.path={tmp_path / 'm'}"], save_freq=-1)
    cfg = OmegaConf.to_container(OmegaConf.create(compose_recipe("sdpo_demo", argv[4:])), resolve=True)
    assert kv_cache_problems(cfg) == []
    cfg["actor_rollout_ref"]["rollout"]["max_model_len"] = None   # verl's default: the model's context
    assert kv_cache_problems(cfg) != []
