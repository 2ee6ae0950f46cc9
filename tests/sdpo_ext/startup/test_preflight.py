"""Pre-flight (sdpo_ext.startup.preflight and the StartupChecks callback): a fresh machine learns everything it lacks
in one message before Ray starts, each problem with its key and fix."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sdpo_ext.startup import checks as startup_checks
from sdpo_ext.startup import preflight
from sdpo_ext.startup.checks import reward_problems, ttrl_problems
from sdpo_ext.startup.preflight import data_problems, gpu_problems, model_problems, prepare_command
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
    assert (f"python -m sdpo_data.prepare lean --dataset proofnet --input /path/to/proofnet.jsonl "
            f"--prompt-style kimina --out-dir {tmp_path}; proofnet.jsonl: datasets/proofnet.md") in train
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


def test_the_callback_reports_all_checks_not_the_first_and_a_check_that_raises_as_a_problem(monkeypatch, capsys):
    """Every check runs and reports, no GPU first; a check that raises (Hydra would only warn, and Ray would start)
    is one more problem, and the run still stops."""
    from omegaconf import OmegaConf

    for name in ("attention_problems", "data_problems", "reward_problems", "ttrl_problems"):
        monkeypatch.setattr(startup_checks, name, lambda cfg, name=name: [f"{name} says no"])

    def model_problems(cfg):
        raise FileNotFoundError("/nowhere/config.json")

    monkeypatch.setattr(startup_checks, "model_problems", model_problems)
    monkeypatch.setattr(startup_checks, "gpu_problems", lambda cfg, visible: ["gpus say no"])
    for name in ("check_config_keys", "check_cpu_budget"):
        monkeypatch.setattr(startup_checks, name, lambda cfg: None)
    with pytest.raises(SystemExit) as stop:
        startup_checks.StartupChecks().on_run_start(OmegaConf.create({}))
    assert stop.value.code == 2   # bad input, as every CLI of ours (tests/layout/test_cli_errors.py)
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "sdpo-lean found 6 problem(s) before starting:"
    assert lines[1] == "- NotEnoughGPUs: gpus say no"
    assert ("- ModelNotFound: the check stopped on FileNotFoundError: /nowhere/config.json (fix the value it names)"
            in lines)
    assert lines[-2] == "- TTRLName: ttrl_problems says no"
    assert lines[-1] == "error: the run was refused before starting (6 problem(s) above: fix each, then run again)"


def test_fewer_than_one_gpu_is_refused_with_the_fix(monkeypatch):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    (problem,) = gpu_problems({"trainer": {"n_gpus_per_node": 0}}, visible=0)
    assert problem.startswith("trainer.n_gpus_per_node=0: verl 0.9.1's trainer needs at least one GPU per node")
    assert problem.endswith("(trainer.n_gpus_per_node=1 on a GPU machine)")
    (problem,) = gpu_problems({"trainer": {"n_gpus_per_node": 0, "nnodes": 2}}, visible=2)
    assert problem.endswith("(trainer.n_gpus_per_node=2)")


def test_a_reward_module_that_is_not_there_is_a_problem_not_an_exception(tmp_path):
    cfg = {"reward": {"custom_reward_function": {"path": str(tmp_path / "reward.py")}}}
    (problem,) = reward_problems(cfg)
    assert problem.startswith(f"reward.custom_reward_function.path={tmp_path / 'reward.py'} is not a file")
    assert problem.endswith("reward.custom_reward_function.path=pkg://reward.lean)")


def test_a_model_path_that_is_no_hub_id_is_a_problem_not_an_exception(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    (problem,) = model_problems({"actor_rollout_ref": {"model": {"path": "org/bad name"}}})
    assert problem.startswith("actor_rollout_ref.model.path=org/bad name is neither a folder nor a hub id")
    assert problem.endswith("actor_rollout_ref.model.path=/path/to/model)")


def test_the_hub_is_asked_with_the_token_hf_auth_login_saved(tmp_path, monkeypatch):
    import httpx
    from huggingface_hub import constants

    monkeypatch.delenv("HF_TOKEN", raising=False)
    (tmp_path / "token").write_text("hf_saved_by_login\n")
    monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(tmp_path / "token"))
    asked = []

    def get(url, timeout, headers=None):
        asked.append(headers)
        return httpx.Response(200 if headers == {"Authorization": "Bearer hf_saved_by_login"} else 401)

    monkeypatch.setattr(httpx, "get", get)
    assert preflight._hub_answers("org/private") is None, asked


def test_a_slow_name_lookup_stays_within_the_hub_bound(monkeypatch):
    """httpx's timeout does not cover getaddrinfo: a resolver that hangs must not hold the pre-flight."""
    import socket

    monkeypatch.setattr(preflight, "HUB_TIMEOUT_S", 0.5)
    monkeypatch.setattr(socket, "getaddrinfo", lambda *args, **kwargs: time.sleep(5) or [])
    monkeypatch.setenv("HF_ENDPOINT", "http://hub.invalid")
    start = time.monotonic()
    why = preflight._hub_answers("org/model")
    assert time.monotonic() - start < 2.0
    assert why == "the hub did not answer within 0.5 s (TimeoutError)"


def _fake_hdfs(bin_dir: Path, exit_code: int) -> None:
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "hdfs").write_text(f"#!/bin/sh\nexit {exit_code}\n")
    (bin_dir / "hdfs").chmod(0o755)


def test_an_hdfs_model_path_verl_copies_is_checked_with_the_hdfs_client(tmp_path, monkeypatch):
    cfg = {"actor_rollout_ref": {"model": {"path": "hdfs://namenode/models/kimina"}}}
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    (problem,) = model_problems(cfg)
    assert "the `hdfs` client, which is not on PATH" in problem
    _fake_hdfs(tmp_path / "bin", exit_code=0)
    assert model_problems(cfg) == []
    _fake_hdfs(tmp_path / "bin", exit_code=1)
    (problem,) = model_problems(cfg)
    assert "`hdfs dfs -test -e` does not find it" in problem
    (problem,) = model_problems({"actor_rollout_ref": {"model": {"path": "s3://bucket/model"}}})
    assert "copies only hdfs:// paths" in problem


@pytest.fixture
def toy_data(tmp_path, monkeypatch) -> Path:
    from sdpo_data import toy_lean

    toy_lean.write(tmp_path / "toy")
    monkeypatch.setenv("SDPO_TOY_DATA_DIR", str(tmp_path / "toy"))
    return tmp_path / "toy"


def test_a_ttrl_name_not_in_the_data_is_reported_with_the_closest_names(toy_data):
    (problem,) = ttrl_problems(compose_recipe("sdpo_toy_lean", ("sdpo.ttrl.theorem=toy_add_7_6",)))
    assert problem.startswith("sdpo.ttrl.theorem: TTRL theorem 'toy_add_7_6' not found")
    assert "Closest names: ['toy_add_7_5'" in problem
    assert ttrl_problems(compose_recipe("sdpo_toy_lean", ("sdpo.ttrl.theorem=toy_add_7_5",))) == []
    (problem,) = ttrl_problems(compose_recipe("sdpo_toy_lean", ("sdpo.ttrl.theorems=[toy_add_7_5,toy_lt_9_12]",)))
    assert problem.startswith("sdpo.ttrl.theorems: TTRL theorem 'toy_lt_9_12' not found")
    assert ttrl_problems(compose_recipe("sdpo_toy_lean")) == []


MISTAKES = {  # the issue's mistakes on the toy recipe: override -> what the message must say
    "n_gpus_0": ("trainer.n_gpus_per_node=0", "NotEnoughGPUs: trainer.n_gpus_per_node=0"),
    "reward_path": ("reward.custom_reward_function.path=/nonexistent/reward.py",
                    "RewardBackend: reward.custom_reward_function.path=/nonexistent/reward.py is not a file"),
    "model_name": ("actor_rollout_ref.model.path=org/bad name",
                   "ModelNotFound: actor_rollout_ref.model.path=org/bad name is neither a folder nor a hub id"),
    "ttrl_theorem": ("sdpo.ttrl.theorem=toy_add_7_6", "Closest names: ['toy_add_7_5'"),
    "ttrl_set": ("sdpo.ttrl.theorems=[toy_add_7_5,toy_ad_7_5]", "TTRL theorem 'toy_ad_7_5' not found"),
}


@pytest.mark.parametrize("mistake", sorted(MISTAKES))
def test_each_mistake_stops_before_ray_within_30_s_and_leaves_no_run_folder(mistake, toy_data, tmp_path):
    override, words = MISTAKES[mistake]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "SDPO_OUTPUT_DIR": str(tmp_path / "runs")}
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "verl.trainer.main_ppo", "+recipe=sdpo_toy_lean", override],
                          capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
    seconds = time.monotonic() - start
    assert proc.returncode == 2 and "ray init kwargs" not in proc.stdout, proc.stderr[-2000:]
    assert "sdpo-lean found" in proc.stderr and words in proc.stderr, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr and "raised" not in proc.stderr, proc.stderr[-2000:]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["toy"]   # no outputs/<date>/<time>, no run folder
    assert seconds < 30
    print(f"{mistake}: pre-flight exit after {seconds:.1f} s")


THINKING_TEMPLATE = ("{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
                     "{% if add_generation_prompt %}<|im_start|>assistant\n{% if enable_thinking is defined and "
                     "enable_thinking is false %}<think>\n\n</think>\n\n{% else %}<think>\n{% endif %}{% endif %}")


@pytest.fixture
def thinking_model(tmp_path, smollm2_tokenizer) -> Path:
    """A local tokenizer folder whose chat template opens <think> unless enable_thinking=false (Qwen3.5-4B's
    generation-prompt branch, tests/reward/math/test_score_qwen3_5_template.py)."""
    folder = tmp_path / "thinking_model"
    smollm2_tokenizer.save_pretrained(folder)
    config = {"actor_rollout_ref": {"model": {"path": str(folder), "custom_chat_template": THINKING_TEMPLATE}},
              "data": {"apply_chat_template_kwargs": {}}}
    assert preflight.generation_prompt(config).endswith("<|im_start|>assistant\n<think>\n")
    return folder


def _math_config(model: Path, opens_think: bool, **chat_kwargs) -> dict:
    return {"actor_rollout_ref": {"model": {"path": str(model), "custom_chat_template": THINKING_TEMPLATE}},
            "data": {"apply_chat_template_kwargs": chat_kwargs},
            "reward": {"custom_reward_function": {"path": str(Path(__file__).parents[3] / "reward/math/score.py"),
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


def test_a_runs_checks_come_before_its_folder_and_a_multiruns_with_each_job(monkeypatch, capsys):
    """on_run_start (before Hydra makes the run folder) checks a run; on_job_start checks only a multirun's jobs,
    which have no on_run_start, so a run is not checked twice."""
    from hydra.types import RunMode
    from omegaconf import OmegaConf

    monkeypatch.setattr(startup_checks, "startup_problems", lambda cfg: ["NotEnoughGPUs: no"])
    callback = startup_checks.StartupChecks()
    callback.on_job_start(OmegaConf.create({"hydra": {"mode": RunMode.RUN}}))
    for start in (lambda: callback.on_run_start(OmegaConf.create({})),
                  lambda: callback.on_job_start(OmegaConf.create({"hydra": {"mode": RunMode.MULTIRUN}}))):
        with pytest.raises(SystemExit):
            start()
        assert "found 1 problem" in capsys.readouterr().err


def test_the_checks_mark_their_start_and_a_passed_check_its_end(monkeypatch, capsys):
    """The start-up table reads preflight_start/preflight_done (sdpo_ext.startup.timeline): the time from launch to
    the checks is Python, verl and Hydra; from their end to trainer_init, Ray and the TaskRunner."""
    from omegaconf import OmegaConf

    from sdpo_ext.startup import timeline

    monkeypatch.setattr(timeline, "_seen", set())
    monkeypatch.setattr(startup_checks, "startup_problems", lambda cfg: ["NotEnoughGPUs: no"])
    with pytest.raises(SystemExit):
        startup_checks.StartupChecks().on_run_start(OmegaConf.create({}))
    monkeypatch.setattr(startup_checks, "startup_problems", lambda cfg: [])
    startup_checks.StartupChecks().on_run_start(OmegaConf.create({}))
    marks = [line.split()[1] for line in capsys.readouterr().out.splitlines() if line.startswith(timeline.MARK)]
    assert marks == ["preflight_start", "preflight_done"]
