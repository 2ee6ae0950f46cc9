"""Pre-flight (sdpo_ext.preflight and the StartupChecks callback): a fresh machine learns everything it lacks in one
message before Ray starts, each problem with its key and fix."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sdpo_ext import preflight, startup_checks
from sdpo_ext.preflight import data_problems, gpu_problems, model_problems, prepare_command
from sdpo_ext.startup_checks import reward_problems
from tests.recipes.test_recipes import compose_recipe


def test_more_gpus_asked_than_seen_names_the_override():
    assert gpu_problems({"trainer": {"n_gpus_per_node": 1}}, visible=1) == []
    (problem,) = gpu_problems({"trainer": {"n_gpus_per_node": 8}}, visible=2)
    assert "trainer.n_gpus_per_node=8" in problem and "(trainer.n_gpus_per_node=2)" in problem
    (problem,) = gpu_problems({"trainer": {"n_gpus_per_node": 1}}, visible=0)
    assert "GPU machine" in problem


def test_gpus_are_not_counted_here_when_the_run_spans_nodes_or_joins_a_ray_cluster(monkeypatch):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    assert gpu_problems({"trainer": {"n_gpus_per_node": 8, "nnodes": 2}}, visible=0) == []
    assert gpu_problems({"trainer": {"n_gpus_per_node": 8}, "ray_kwargs": {"ray_init": {"address": "auto"}}}, 0) == []
    monkeypatch.setenv("RAY_ADDRESS", "10.0.0.1:6379")
    assert gpu_problems({"trainer": {"n_gpus_per_node": 8}}, visible=0) == []


def test_missing_parquet_names_the_prepare_command_from_the_recipes_keys(tmp_path, monkeypatch):
    monkeypatch.setenv("SDPO_DATA_DIR", str(tmp_path))
    cfg = compose_recipe("sdpo_kimina_1_7b", ("sdpo.dataset=proofnet",))
    train, val = data_problems(cfg)
    assert train.startswith(f"data.train_files: {tmp_path}/proofnet_kimina_valid.parquet does not exist")
    assert (f"python -m sdpo_data.prepare lean --dataset proofnet --input <proofnet.jsonl: datasets/proofnet.md> "
            f"--prompt-style kimina --out-dir {tmp_path}") in train
    assert val.startswith("data.val_files:")
    for name in ("proofnet_kimina_valid.parquet", "proofnet_kimina_test.parquet"):
        (tmp_path / name).write_bytes(b"")
    assert data_problems(cfg) == []


@pytest.mark.parametrize("name, command", [
    ("math_train.parquet", "python -m sdpo_data.prepare math --split train --out-dir /d"),
    ("addition_test.parquet", "python -m sdpo_data.addition_rows --out-dir /d"),
    ("toy_theorems.parquet", "python -m sdpo_data.toy_lean --out-dir /d"),
    ("mine.parquet", None),
])
def test_each_task_file_has_its_command(name, command):
    assert prepare_command(Path("/d") / name) == command


def test_remote_data_is_not_checked():
    assert data_problems({"data": {"train_files": ["hf://x/y.parquet"], "val_files": None}}) == []


def test_the_model_is_a_folder_a_cached_hub_id_or_one_the_hub_answers_for(tmp_path, monkeypatch):
    key = "actor_rollout_ref.model.path"
    cfg = lambda path: {"actor_rollout_ref": {"model": {"path": path}}}  # noqa: E731
    assert model_problems(cfg(str(tmp_path))) == []
    (problem,) = model_problems(cfg(str(tmp_path / "missing")))
    assert "is not a folder" in problem and f"{key}=/path/to/model" in problem
    monkeypatch.setattr(preflight, "_cached", lambda repo: repo == "org/cached")
    assert model_problems(cfg("org/cached")) == []
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    (problem,) = model_problems(cfg("org/model"))
    assert "offline" in problem and "pass the folder" in problem
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setattr(preflight, "_hub_answers", lambda repo: None if repo == "org/online" else "HTTP 404")
    assert model_problems(cfg("org/online")) == []
    (problem,) = model_problems(cfg("org/typo"))
    assert "HTTP 404" in problem


def test_the_reward_modules_own_preflight_is_asked(tmp_path):
    module = tmp_path / "my_reward.py"
    module.write_text("def compute_score(**kw):\n    return 0.0\n\n"
                      "def preflight(kwargs):\n    return [f'backend {kwargs[\"backend\"]} is down']\n")
    cfg = {"reward": {"custom_reward_function": {"path": str(module), "reward_kwargs": {"backend": "x"}}}}
    assert reward_problems(cfg) == ["backend x is down"]
    plain = tmp_path / "plain_reward.py"
    plain.write_text("def compute_score(**kw):\n    return 0.0\n")
    assert reward_problems({"reward": {"custom_reward_function": {"path": str(plain)}}}) == []


def test_every_problem_of_a_fresh_machine_comes_in_one_message_before_ray(tmp_path):
    """The Kimina recipe on this CPU box with nothing set up: GPUs, attention, data, model and the Lean server in one
    message."""
    env = {**os.environ, "SDPO_DATA_DIR": str(tmp_path / "data"), "HF_HUB_OFFLINE": "1",
           "LEAN_SERVER_API_URL": "http://localhost:8000"}
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "verl.trainer.main_ppo", "+recipe=sdpo_kimina_1_7b",
                           f"hydra.run.dir={tmp_path}"], capture_output=True, text=True, timeout=240, env=env)
    seconds = time.monotonic() - start
    assert proc.returncode != 0 and "ray init kwargs" not in proc.stdout
    message = proc.stderr[proc.stderr.index("sdpo-lean found"):]
    for problem in ("NotEnoughGPUs: trainer.n_gpus_per_node=8", "MissingData: data.train_files",
                    "python -m sdpo_data.prepare lean --dataset minif2f", "ModelNotFound: "
                    "actor_rollout_ref.model.path=AI-MO/Kimina-Prover-RL-1.7B", "Attention: ",
                    "RewardBackend: the Kimina server at http://localhost:8000 does not answer"):
        assert problem in message, problem
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    print(f"pre-flight exit after {seconds:.1f} s")


def test_the_callback_reports_all_checks_not_the_first(monkeypatch):
    from omegaconf import OmegaConf

    for name in ("attention_problems", "data_problems", "model_problems", "reward_problems"):
        monkeypatch.setattr(startup_checks, name, lambda cfg, name=name: [f"{name} says no"])
    monkeypatch.setattr(startup_checks, "gpu_problems", lambda cfg, visible: ["gpus say no"])
    for name in ("check_config_keys", "check_cpu_budget"):
        monkeypatch.setattr(startup_checks, name, lambda cfg: None)
    with pytest.raises(SystemExit) as stop:
        startup_checks.StartupChecks().on_job_start(OmegaConf.create({}))
    assert str(stop.value).startswith("sdpo-lean found 5 problem(s) before starting:")
    assert str(stop.value).count("\n- ") == 5


THINKING_TEMPLATE = ("{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
                     "{% if add_generation_prompt %}<|im_start|>assistant\n{% if enable_thinking is defined and "
                     "enable_thinking is false %}<think>\n\n</think>\n\n{% else %}<think>\n{% endif %}{% endif %}")


@pytest.fixture
def thinking_model(tmp_path, smollm2_tokenizer) -> Path:
    """A local tokenizer folder whose chat template opens <think> unless enable_thinking=false (Qwen3.5-4B's
    generation-prompt branch, tests/reward_math/test_qwen3_5_template.py)."""
    folder = tmp_path / "thinking_model"
    smollm2_tokenizer.save_pretrained(folder)
    config = {"actor_rollout_ref": {"model": {"path": str(folder), "custom_chat_template": THINKING_TEMPLATE}},
              "data": {"apply_chat_template_kwargs": {}}}
    assert preflight.generation_prompt(config).endswith("<|im_start|>assistant\n<think>\n")
    return folder


def _math_config(model: Path, opens_think: bool, **chat_kwargs) -> dict:
    return {"actor_rollout_ref": {"model": {"path": str(model), "custom_chat_template": THINKING_TEMPLATE}},
            "data": {"apply_chat_template_kwargs": chat_kwargs},
            "reward": {"custom_reward_function": {"path": str(Path(__file__).parents[2] / "reward" / "math.py"),
                                                  "reward_kwargs": {"prompt_opens_think": opens_think}}}}


def test_math_reward_flag_that_disagrees_with_the_models_chat_template_is_reported(thinking_model):
    (problem,) = reward_problems(_math_config(thinking_model, opens_think=False))
    assert "ends inside <think>" in problem
    assert problem.endswith("(reward.custom_reward_function.reward_kwargs.prompt_opens_think=true)")
    assert reward_problems(_math_config(thinking_model, opens_think=True)) == []
    assert reward_problems(_math_config(thinking_model, opens_think=False, enable_thinking=False)) == []
    (problem,) = reward_problems(_math_config(thinking_model, opens_think=True, enable_thinking=False))
    assert "does not end inside <think>" in problem and problem.endswith("prompt_opens_think=false)")


def test_no_template_check_without_a_local_tokenizer(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert preflight.generation_prompt({"actor_rollout_ref": {"model": {"path": "org/not-cached"}}}) is None
    assert reward_problems(_math_config(Path("/nonexistent/model"), opens_think=False)) == []
