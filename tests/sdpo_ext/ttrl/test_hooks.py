"""Set-TTRL through SDPOTrainer's real hooks on CPU: the toy recipes composed as main_ppo composes them, the real
`SDPOTrainer.__init__`, `_init_dataloader` (verl's, with TheoremFilterDataset), `_next_train_batch` (the set's draw),
`_prepare_samples` (attempt log and the set's bookkeeping) and the checkpoint hooks; TransferQueue is a dict
(`FakeTQ`), the rollout is made up here.

Checks: full batches from the open problems as problems retire, per-problem budgets, the run's end, INFRA spending no
budget, resume with the solved set intact, SDPO/SRPO/SC-SDPO/GRPO alike, one theorem as a set of one.
"""
from __future__ import annotations

import json
from collections import Counter

import pytest
import torch
from omegaconf import OmegaConf
from verl.trainer.ppo.v1 import trainer_base
from verl.trainer.ppo.v1.trainer_sync import PPOTrainerSync
from verl.utils import tensordict_utils as tu

import sdpo_ext.trainer as trainer_mod
from sdpo_eval.discovery.recipe import compose_recipe
from sdpo_ext.startup import timeline
from sdpo_ext.trainer import SDPOTrainer
from sdpo_ext.ttrl.hooks import TTRL_SET_FILE
from tests.sdpo_ext.test_trainer_prepare import FakeBatch, FakeTQ, merged, nested, old_log_prob_step

# two theorems of the toy set's valid split and two of its test split (TTRL looks names up in both)
FOUR = ["toy_add_7_5", "toy_mul_6_7", "toy_div_36_4", "toy_lt_9_11"]
N = 4  # rollout.n in these tests


@pytest.fixture(scope="module")
def toy_dir(tmp_path_factory):
    from sdpo_data.toy_lean import write

    out = tmp_path_factory.mktemp("toy")
    write(out)
    return out


@pytest.fixture
def make(tmp_path, toy_dir, monkeypatch, smollm2_tokenizer):
    monkeypatch.setenv("SDPO_TOY_DATA_DIR", str(toy_dir))
    monkeypatch.setenv("SDPO_OUTPUT_DIR", str(tmp_path / "runs"))

    def build(algorithm="grpo", ttrl=(f"sdpo.ttrl.theorems=[{','.join(FOUR)}]",), budget=8, extra=()):
        overrides = [*ttrl, f"sdpo.ttrl.max_attempts={budget}", "data.dataloader_num_workers=0", *extra]
        if not any(o.startswith("sdpo.ttrl.theorem=") for o in ttrl):
            overrides.append(f"actor_rollout_ref.rollout.n={N}")
        trainer = SDPOTrainer(OmegaConf.create(compose_recipe(f"{algorithm}_toy_lean", overrides)))
        trainer.tokenizer, trainer.processor = smollm2_tokenizer, None
        trainer._init_dataloader()
        trainer.global_steps = 0
        return trainer

    return build


def rollout(trainer, batch, verdict_of):
    """TransferQueue's view of the step's samples: n replies per drawn prompt, judged by verdict_of(problem, j)."""
    n = trainer.config.actor_rollout_ref.rollout.n
    tok = trainer.tokenizer
    rows = []
    for i, (extra, uid, messages) in enumerate(zip(batch["extra_info"], batch["uid"], batch["raw_prompt"])):
        prompt = tok.apply_chat_template(list(messages), add_generation_prompt=True, tokenize=True, return_dict=False)
        for j in range(n):
            verdict = verdict_of(extra["name"], j)
            response = torch.tensor(tok.encode(f"{extra['name']} reply {i}.{j}: by norm_num", add_special_tokens=False))
            score = torch.zeros(len(response))
            score[-1] = float(verdict == "valid")
            info = {"verdict": verdict, "infra": float(verdict == "infra"), "score": float(verdict == "valid"),
                    "feedback": "" if verdict in ("valid", "infra") else "unsolved goals"}
            rows.append(dict(uid=uid, responses=response, mask=torch.ones(len(response), dtype=torch.int64),
                             rm=score, info={"reward_extra_info": info}, extra=extra, raw=list(messages),
                             prompt=torch.tensor(prompt)))
    data = tu.get_tensordict({
        "uid": [r["uid"] for r in rows], "responses": nested([r["responses"] for r in rows]),
        "response_mask": nested([r["mask"] for r in rows]), "loss_mask": nested([r["mask"] for r in rows]),
        "rm_scores": nested([r["rm"] for r in rows]), "extra_fields": [r["info"] for r in rows],
        "extra_info": [r["extra"] for r in rows], "raw_prompt": [r["raw"] for r in rows],
        "prompts": nested([r["prompt"] for r in rows]),
    })
    return data, FakeBatch(keys=[f"k{i}" for i in range(len(rows))], partition_id="train", tags=[{} for _ in rows])


def step(trainer, monkeypatch, verdict_of=lambda name, j: "lean_error"):
    """The next training step's driver hooks, as verl's fit() calls them."""
    trainer.global_steps += 1
    return hooks(trainer, monkeypatch, verdict_of)


def hooks(trainer, monkeypatch, verdict_of):
    """One step's prompt fetch, then its sample preparation; (drawn problem names, step metrics, the fake TQ)."""
    batch = trainer._next_train_batch()
    data, meta = rollout(trainer, batch, verdict_of)
    fake = FakeTQ(data)
    monkeypatch.setattr(trainer_mod, "tq", fake)
    metrics = {}
    old_log_prob_step(trainer, meta, metrics, monkeypatch)
    return [extra["name"] for extra in batch["extra_info"]], metrics, fake


def log_of(trainer):
    return [json.loads(line) for line in open(trainer.attempt_log.path)]


def test_full_batches_come_from_the_open_problems_and_the_run_ends_when_none_is_open(make, monkeypatch):
    trainer = make()
    prompts = trainer.config.data.train_batch_size
    assert sorted(trainer.ttrl_set.problems) == sorted(FOUR) and len(trainer.train_dataset) == 4
    # 4 problems x ceil(8 / 4) slots = 8 slots, 4 a step -> 2 steps, twice that for INFRA
    assert trainer.total_training_steps == trainer.steps_per_epoch == 4
    assert trainer.config.actor_rollout_ref.actor.optim.total_training_steps == 4

    names, metrics, _ = step(trainer, monkeypatch, lambda name, j: "valid" if name == "toy_mul_6_7" and j == 2 else
                             "lean_error")
    assert sorted(names) == sorted(FOUR)  # one prompt each: every problem had the same (no) work
    assert metrics["sdpo_lean/ttrl_solved_problems"] == 1 and metrics["sdpo_lean/ttrl_open_problems"] == 3
    assert metrics["sdpo_lean/ttrl_batch_problems"] == 4 and trainer.total_training_steps == 4

    names, metrics, _ = step(trainer, monkeypatch)
    assert len(names) == prompts and "toy_mul_6_7" not in names  # retired, and the batch is still full
    assert set(names) == set(FOUR) - {"toy_mul_6_7"} and max(Counter(names).values()) == 2
    # every open problem's budget is spent: the run ends after this step (verl's loop checks this bound)
    assert metrics["sdpo_lean/ttrl_open_problems"] == 0 and trainer.total_training_steps == trainer.global_steps == 2

    log = log_of(trainer)
    per_problem = {p: [r["attempt"] for r in log if r["problem"] == p] for p in FOUR}
    assert per_problem["toy_mul_6_7"] == [1, 2, 3, 4]
    twice = next(p for p, c in Counter(names).items() if c == 2)  # the copy that filled the batch went over budget
    for problem in set(FOUR) - {"toy_mul_6_7"}:
        assert per_problem[problem] == list(range(1, (12 if problem == twice else 8) + 1))
    assert [r for r in log if "proof" in r] == [next(r for r in log if r["problem"] == "toy_mul_6_7"
                                                     and r["attempt"] == 3)]


@pytest.mark.parametrize("test_freq", [5, 2, -1])
def test_verls_own_fit_loop_stops_after_the_step_in_which_the_last_problem_retired_and_validates_it_once(
        make, monkeypatch, tmp_path, test_freq, capsys):
    """verl's PPOTrainer.fit itself (not a copy), with the device work of a step left out: its loop runs the set's
    steps and no more, on the bound the set's hook sets, and validates the last of them once when test_freq > 0 (verl
    only does when the step is a multiple of test_freq: its is_last_step was computed before the set ended the run)."""
    monkeypatch.setenv("VERL_FILE_LOGGER_PATH", str(tmp_path / "metrics.jsonl"))
    monkeypatch.setattr(timeline, "_seen", set())
    trainer = make(budget=8, extra=(f"trainer.test_freq={test_freq}", "trainer.val_before_train=false"))
    trainer._init_dump_executor()
    drawn, validated = [], []

    def device_free_step(metrics, timing_raw):  # PPOTrainer.step's driver hooks, without generation and update
        names, step_metrics, _ = hooks(trainer, monkeypatch, lambda name, j: "valid" if name == "toy_lt_9_11"
                                       else "lean_error")
        drawn.append(names)
        metrics.update(step_metrics)
        return FakeBatch(keys=[], partition_id="train", tags=[])

    def validate():
        validated.append(trainer.global_steps)
        return {"val-core/score": float(trainer.global_steps)}

    monkeypatch.setattr(trainer, "step", device_free_step)
    monkeypatch.setattr(trainer, "_validate", validate)
    monkeypatch.setattr(PPOTrainerSync, "on_step_end", lambda self: None)  # weight sync to the rollout engine
    monkeypatch.setattr(trainer, "_compute_metrics", lambda *args, **kwargs: None)  # reads the batch from the TQ
    monkeypatch.setattr(trainer_base, "tq", FakeTQ(None))
    trainer_base.tq.kv_clear = lambda keys, partition_id: None
    assert trainer.total_training_steps == 4  # the bound with room for INFRA; the set needs 2 steps
    trainer.fit(agent_loop_manager=None)
    assert len(drawn) == 2 and trainer.global_steps == 3  # fit() counts one past its last step
    assert "toy_lt_9_11" in drawn[0] and "toy_lt_9_11" not in drawn[1] and len(drawn[1]) == len(drawn[0]) == 4
    logged = [json.loads(line) for line in open(tmp_path / "metrics.jsonl")]
    assert [row["step"] for row in logged] == [1, 2]
    assert [row["data"]["sdpo_lean/ttrl_open_problems"] for row in logged] == [3, 0]
    assert validated == ([2] if test_freq > 0 else [])
    assert ("val-core/score" in logged[1]["data"]) == (test_freq > 0) and "val-core/score" not in logged[0]["data"]
    # the start-up marks of the phases this driver-only loop passes, once each and in order (startup.py reads them)
    marks = [line.split()[1] for line in capsys.readouterr().out.splitlines() if line.startswith(timeline.MARK)]
    assert marks == ["trainer_init", "train_begin", "first_rollout_done", "first_step_done"]


def test_infra_spends_no_budget_and_the_problem_is_drawn_again(make, monkeypatch):
    trainer = make(ttrl=("sdpo.ttrl.theorems=[toy_add_7_5,toy_lt_9_11]",), budget=4,
                   extra=("data.train_batch_size=1",))
    names, metrics, fake = step(trainer, monkeypatch, lambda name, j: "infra")
    (first,) = names
    update = merged(fake.puts)
    assert all(row.sum() == 0 for row in update["response_mask"].unbind())  # never trained on
    assert trainer.ttrl_set.problems[first].attempts == 0 and metrics["sdpo_lean/ttrl_infra_samples"] == N
    assert metrics["sdpo_lean/ttrl_open_problems"] == 2
    (second,), _, _ = step(trainer, monkeypatch)
    assert second != first  # the other problem has no more work and wins the next slot...
    (third,), _, _ = step(trainer, monkeypatch)
    assert third == first   # ...then the INFRA-hit problem, still with its whole budget, is drawn again
    assert [r["attempt"] for r in log_of(trainer) if r["problem"] == first] == [0] * N + [1, 2, 3, 4]


def test_a_resumed_run_keeps_its_solved_set_and_counts(make, monkeypatch):
    monkeypatch.setattr(PPOTrainerSync, "_save_checkpoint", lambda self: None)  # verl's part needs the workers
    first = make(budget=16)
    step(first, monkeypatch, lambda name, j: "valid" if name == "toy_add_7_5" and j == 0 else "lean_error")
    first._save_checkpoint()
    saved = json.loads(open(f"{first._step_folder()}/{TTRL_SET_FILE}").read())
    assert saved["step"] == 1 and saved["problems"]["toy_add_7_5"]["first_success"] == 1
    # judged after the checkpoint, then the process died: its attempts are spent and its proof stays found
    step(first, monkeypatch, lambda name, j: "valid" if name == "toy_lt_9_11" and j == 3 else "lean_error")
    before = {p: (s.attempts, s.first_success) for p, s in first.ttrl_set.problems.items()}

    resumed = make(budget=16)
    assert resumed.attempt_log.run_id != first.attempt_log.run_id and resumed.ttrl_set.solved() == []
    monkeypatch.setattr(PPOTrainerSync, "_load_checkpoint", lambda self: setattr(self, "global_steps", 1))
    resumed._load_checkpoint()
    assert resumed.attempt_log.run_id == first.attempt_log.run_id
    assert {p: (s.attempts, s.first_success) for p, s in resumed.ttrl_set.problems.items()} == before
    assert sorted(resumed.ttrl_set.solved()) == ["toy_add_7_5", "toy_lt_9_11"]
    logged = len(log_of(resumed))
    names, _, _ = step(resumed, monkeypatch)
    assert len(names) == resumed.config.data.train_batch_size and set(names) == {"toy_mul_6_7", "toy_div_36_4"}
    records = [r for r in log_of(resumed)[logged:] if r["problem"] == "toy_mul_6_7"]
    assert records[0]["step"] == 2 and records[0]["run_id"] == first.attempt_log.run_id
    assert records[0]["attempt"] == before["toy_mul_6_7"][0] + 1  # the numbering continues


def test_a_resume_after_the_last_problem_retired_runs_no_step(make, monkeypatch):
    monkeypatch.setattr(PPOTrainerSync, "_save_checkpoint", lambda self: None)
    first = make(ttrl=("sdpo.ttrl.theorems=[toy_add_7_5]",), extra=("data.train_batch_size=1",))
    step(first, monkeypatch, lambda name, j: "valid")
    first._save_checkpoint()
    resumed = make(ttrl=("sdpo.ttrl.theorems=[toy_add_7_5]",), extra=("data.train_batch_size=1",))
    monkeypatch.setattr(PPOTrainerSync, "_load_checkpoint", lambda self: setattr(self, "global_steps", 1))
    resumed._load_checkpoint()
    assert resumed.ttrl_set.finished and resumed.total_training_steps == 1  # fit() starts at step 2: no step


@pytest.mark.parametrize("algorithm", ["sdpo", "srpo", "sc_sdpo", "grpo"])
def test_every_method_trains_on_a_mixed_batch_with_per_problem_groups(make, monkeypatch, algorithm):
    trainer = make(algorithm)
    assert trainer.sdpo_enabled == (algorithm != "grpo")
    names, metrics, fake = step(trainer, monkeypatch,
                                lambda name, j: "valid" if name == "toy_div_36_4" and j == 0 else "lean_error")
    assert metrics["sdpo_lean/ttrl_solved_problems"] == 1 and sorted(trainer.ttrl_set.solved()) == ["toy_div_36_4"]
    if algorithm == "grpo":
        assert fake.puts == []  # no INFRA to mask, no teacher fields
        return
    (update,) = fake.puts  # no INFRA to mask: the teacher fields only
    assert update["sdpo_mask"].shape == (len(names) * N,)
    teacher = [trainer.tokenizer.decode(row.tolist()) for row in update["teacher_prompt_ids"].unbind()]
    for k, name in enumerate(name for name in names for _ in range(N)):
        # distilled with a sibling's proof: exactly the failed samples of the solved problem's group (SC-SDPO: the
        # other groups, all failed, get weight 0; SRPO: the valid sample goes to the policy gradient)
        shows_proof = bool(update["sdpo_mask"][k] > 0) and "Correct solution" in teacher[k]
        assert shows_proof == (name == "toy_div_36_4" and k % N != 0), (k, name)
        if shows_proof:
            assert "toy_div_36_4 reply" in teacher[k] and "36" in teacher[k]


def test_one_theorem_is_a_set_of_one(make, monkeypatch):
    trainer = make(ttrl=("sdpo.ttrl.theorem=toy_add_7_5",), budget=48)
    n = trainer.config.actor_rollout_ref.rollout.n
    assert (trainer.config.data.train_batch_size, n) == (1, 16)  # the recipe's TTRL values
    assert list(trainer.ttrl_set.problems) == ["toy_add_7_5"] and trainer.total_training_steps == 2 * 3
    names, _, _ = step(trainer, monkeypatch)
    assert names == ["toy_add_7_5"] and trainer.total_training_steps == 6
    step(trainer, monkeypatch, lambda name, j: "valid" if j == 5 else "lean_error")
    assert trainer.total_training_steps == trainer.global_steps == 2
    assert trainer.ttrl_set.problems["toy_add_7_5"].first_success == 16 + 6


def test_a_split_is_every_problem_of_its_files_and_a_typo_names_the_closest(make):
    trainer = make(ttrl=("sdpo.ttrl.split=train",))
    assert list(trainer.ttrl_set.problems) == ["toy_add_7_5", "toy_mul_6_7", "toy_sub_20_8", "toy_pow_2_5"]
    with pytest.raises(ValueError, match="toy_add_7_6.*toy_add_7_5"):
        make(ttrl=("sdpo.ttrl.theorems=[toy_add_7_6]",))


def test_a_run_cut_short_by_the_last_retirement_still_saves_its_final_checkpoint(make, monkeypatch):
    """verl saves at its last step only when it knew it was the last one (is_last_step is computed before the step);
    a run the set ends early gets its final checkpoint from on_step_end, and only once."""
    saved = []
    monkeypatch.setattr(PPOTrainerSync, "_save_checkpoint", lambda self: saved.append(self.global_steps))
    monkeypatch.setattr(PPOTrainerSync, "on_step_end", lambda self: None)  # weight sync to the rollout engine
    trainer = make(budget=8, extra=("trainer.save_freq=20", "trainer.test_freq=-1"))
    step(trainer, monkeypatch)
    trainer.on_step_end()
    assert saved == [] and trainer.total_training_steps == 4
    step(trainer, monkeypatch)  # every budget spent at step 2 of at most 4
    trainer.on_step_end()
    assert trainer.total_training_steps == trainer.global_steps == 2 and saved == [2]
