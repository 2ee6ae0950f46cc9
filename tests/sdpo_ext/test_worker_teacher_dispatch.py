"""Which weights score the teacher context in each teacher mode, and at which rows.

The worker is built without Ray or GPUs. Its engines are stand-ins whose `forward_step` produces known
logits for whatever sequences they are given (a per-engine scale times a one-hot of the input token), and
which record the contexts they were entered in. The checks: ema/frozen use the reference engine in eval
mode, live uses the actor, trust_region mixes the two as ref + r·(actor − ref), frozen without a reference
(LoRA) uses the actor with its adapter disabled, and the rows returned are those predicting the response.
"""
from __future__ import annotations

from contextlib import contextmanager
from types import SimpleNamespace

import pytest
import torch
from verl.utils import tensordict_utils as tu

from sdpo_ext import worker as worker_module
from sdpo_ext.config import SDPOActorConfig, SDPOConfig, SDPOTeacherConfig
from sdpo_ext.worker import SDPOActorRolloutRefWorker

VOCAB = 16


class FakeModel:
    """The engine's model: a forward that takes logits_to_keep, as transformers' causal LMs do."""

    def __init__(self, engine: "FakeEngine"):
        self.engine = engine

    def forward(self, input_ids, position_ids, use_cache, logits_to_keep=None):
        return self.engine.forward(input_ids, position_ids, use_cache, logits_to_keep)

    __call__ = forward


class FakeEngine:
    """Models verl's FSDP engine as the teacher uses it. `prepare_model_inputs` packs the batch (padding removed) or
    pads it to its longest sequence with `pad_token_id` (padding kept), and gives each token its sample's temperature;
    `module` gives logits = scale·onehot(input token), at the `logits_to_keep` rows when asked; `forward_step` runs
    both, cuts padded logits back to each sequence's rows and packs them (verl's NO_PADDING branch of
    `prepare_model_outputs`), and hands the loss function the logits divided by their temperature, as verl's does.
    Per forward it records the contexts it ran in, whether gradients were on, the sequences, their temperatures and
    how many logit rows the model made."""

    model_config = SimpleNamespace(use_fused_kernels=False)

    def __init__(self, scale: float):
        self.scale = scale
        self.module = FakeModel(self)
        self.calls: list[dict] = []
        self._modes: list[str] = []
        self._prepared: dict = {}

    @contextmanager
    def _mode(self, name):
        self._modes.append(name)
        try:
            yield
        finally:
            self._modes.pop()

    def eval_mode(self):
        return self._mode("eval")

    def disable_adapter(self):
        return self._mode("adapter_disabled")

    def prepare_model_inputs(self, micro_batch):
        input_ids = micro_batch["input_ids"]
        temperature = tu.get_non_tensor_data(micro_batch, "temperature", None)
        if temperature is None:
            raise KeyError("temperature")  # verl reads micro_batch["temperature"]
        per_sample = temperature if isinstance(temperature, torch.Tensor) else torch.tensor([temperature] * len(
            input_ids.unbind()))
        self._prepared = {"sequences": [s.tolist() for s in input_ids.unbind()], "temperature": temperature}
        if tu.get_non_tensor_data(micro_batch, "use_remove_padding", True):
            inputs = {"input_ids": input_ids.values()[None], "position_ids": micro_batch["position_ids"].values()[None]}
        else:
            pad = tu.get_non_tensor_data(micro_batch, "pad_token_id", 0)
            inputs = {"input_ids": input_ids.to_padded_tensor(pad),
                      "position_ids": micro_batch["position_ids"].to_padded_tensor(0)}
        args = {"temperature_is_one": not isinstance(temperature, torch.Tensor) and temperature == 1.0,
                "temperature_rmpad": torch.repeat_interleave(per_sample.float(), input_ids.offsets().diff())}
        return inputs, args

    def forward(self, input_ids, position_ids, use_cache, logits_to_keep=None):
        logits = self.scale * torch.nn.functional.one_hot(input_ids, VOCAB).float()
        if logits_to_keep is not None:
            logits = logits[:, logits_to_keep]
        self.calls.append({**self._prepared, "modes": list(self._modes), "grad": torch.is_grad_enabled(),
                           "autocast": torch.is_autocast_enabled("cpu"), "logit_rows": logits[..., 0].numel()})
        return SimpleNamespace(logits=logits)

    def forward_step(self, batch, loss_function, forward_only):
        inputs, args = self.prepare_model_inputs(batch)
        logits = self.forward(**inputs, use_cache=False).logits
        if tu.get_non_tensor_data(batch, "use_remove_padding", True):
            logits = logits.squeeze(0)
        else:  # each sequence's rows without its padding, packed
            lengths = batch["input_ids"].offsets().diff().tolist()
            logits = torch.cat([row[:n] for row, n in zip(logits, lengths)])
        if not args["temperature_is_one"]:
            logits = logits / args["temperature_rmpad"][:, None]
        if tu.get_non_tensor_data(batch, "distillation_use_topk", False):  # verl's logits-processor path
            loss_function(student_logits=logits.unsqueeze(0), data=batch)
        return loss_function(model_output={}, data=batch)


@pytest.fixture(autouse=True)
def _on_the_cpu(monkeypatch):
    """The worker moves a batch to its device before the forward; without an accelerator that is the CPU."""
    monkeypatch.setattr(worker_module, "get_device_id", lambda: "cpu")
    monkeypatch.setattr(worker_module, "get_device_name", lambda: "cpu")


def make_worker(mode: str, rate: float = 0.25, with_ref: bool = True):
    worker = object.__new__(SDPOActorRolloutRefWorker)
    worker.actor = SimpleNamespace(engine=FakeEngine(scale=1.0))
    worker.ref = SimpleNamespace(engine=FakeEngine(scale=3.0)) if with_ref else None
    worker.sdpo_config = SDPOActorConfig(
        ppo_mini_batch_size=4, ppo_micro_batch_size_per_gpu=1, rollout_n=1, policy_loss={"loss_mode": "sdpo"},
        sdpo=SDPOConfig(teacher=SDPOTeacherConfig(mode=mode, update_rate=rate)),
    )
    return worker


def nested(rows):
    return torch.nested.as_nested_tensor(rows, layout=torch.jagged)


def micro_batch(last_teacher_prompt=(6, 7, 8, 9)):
    teacher_prompts = [torch.tensor([1, 2, 3]), torch.tensor([4, 5]), torch.tensor(last_teacher_prompt)]
    responses = [torch.tensor([10, 11]), torch.tensor([12, 13, 14]), torch.tensor([15])]
    positions = [torch.arange(5), torch.arange(5), torch.arange(5)]
    data = tu.get_tensordict({"teacher_prompt_ids": nested(teacher_prompts), "responses": nested(responses),
                              "input_ids": nested([torch.cat([p, r]) for p, r in zip(teacher_prompts, responses)]),
                              "position_ids": nested(positions), "temperature": torch.tensor([0.5, 0.6, 0.7])})
    return data, teacher_prompts, responses


def expected_rows(scale: float, teacher_prompts, responses, active, temperatures=(0.5, 0.6, 0.7)) -> torch.Tensor:
    """Rows predicting each active response token (the token before it: the last prompt token and all response
    tokens but the last), divided by the sample's temperature."""
    rows = []
    for p, r, a, t in zip(teacher_prompts, responses, active, temperatures):
        if a:
            seq = torch.cat([p, r])
            rows.append(scale * torch.nn.functional.one_hot(seq[len(p) - 1:len(seq) - 1], VOCAB).float() / t)
    return torch.cat(rows)


ACTIVE = torch.tensor([True, False, True])


@pytest.mark.parametrize("mode", ["ema", "frozen"])
def test_ema_and_frozen_score_with_the_reference_in_eval_mode(mode):
    worker = make_worker(mode)
    data, prompts, responses = micro_batch()
    got = worker._teacher_response_logits(data, ACTIVE)
    torch.testing.assert_close(got, expected_rows(3.0, prompts, responses, ACTIVE))
    (call,) = worker.ref.engine.calls
    assert call["modes"] == ["eval"] and call["grad"] is False and call["autocast"] is True
    assert call["sequences"] == [[1, 2, 3, 10, 11], [6, 7, 8, 9, 15]]  # [teacher prompt | same response], active only
    assert call["temperature"].tolist() == pytest.approx([0.5, 0.7])
    assert call["logit_rows"] == 2 + 1  # the LM head ran on the rows predicting the responses only
    assert worker.actor.engine.calls == []


def test_with_padding_kept_the_teacher_goes_through_forward_step():
    """Without remove-padding the rows do not index one packed sequence: verl's forward_step pads the teacher
    sequences to the longest, computes every row's logits, and packs each sequence's rows back; the teacher keeps
    the rows predicting the responses, none of the padding's."""
    worker = make_worker("ema")
    data, prompts, responses = micro_batch(last_teacher_prompt=(6, 7, 8, 9, 3, 2))   # teacher sequences of 5 and 7
    tu.assign_non_tensor(data, use_remove_padding=False, pad_token_id=VOCAB - 1)
    got = worker._teacher_response_logits(data, ACTIVE)
    torch.testing.assert_close(got, expected_rows(3.0, prompts, responses, ACTIVE))
    (call,) = worker.ref.engine.calls
    assert call["logit_rows"] == 2 * 7 and call["grad"] is False   # two sequences padded to 7 rows each


def test_live_scores_with_the_current_actor():
    worker = make_worker("live")
    data, prompts, responses = micro_batch()
    got = worker._teacher_response_logits(data, ACTIVE)
    torch.testing.assert_close(got, expected_rows(1.0, prompts, responses, ACTIVE))
    assert worker.ref.engine.calls == [] and worker.actor.engine.calls[0]["modes"] == []


def test_trust_region_mixes_reference_and_actor_logits():
    worker = make_worker("trust_region", rate=0.25)
    data, prompts, responses = micro_batch()
    got = worker._teacher_response_logits(data, ACTIVE)
    ref, actor = expected_rows(3.0, prompts, responses, ACTIVE), expected_rows(1.0, prompts, responses, ACTIVE)
    torch.testing.assert_close(got, ref + 0.25 * (actor - ref))
    assert len(worker.ref.engine.calls) == 1 and len(worker.actor.engine.calls) == 1


def test_frozen_without_reference_uses_the_base_model_with_the_adapter_disabled():
    worker = make_worker("frozen", with_ref=False)
    data, prompts, responses = micro_batch()
    got = worker._teacher_response_logits(data, ACTIVE)
    torch.testing.assert_close(got, expected_rows(1.0, prompts, responses, ACTIVE))
    assert worker.actor.engine.calls[0]["modes"] == ["adapter_disabled"]


@pytest.mark.parametrize("mode", ["ema", "trust_region", "live"])
@pytest.mark.parametrize("ranks", [1, 2])
def test_a_micro_batch_without_an_active_sample_runs_the_same_forwards_on_one_token(mode, ranks, monkeypatch):
    """On several ranks the teacher's FSDP forward gathers weights from all of them: a micro-batch with no active
    sample runs each engine's forward as an active one does, on one token, and gives no rows; on one rank, nothing."""
    monkeypatch.setattr(worker_module, "_world_size", lambda: ranks)
    data, _, _ = micro_batch()
    busy = make_worker(mode)
    busy._teacher_response_logits(data, ACTIVE)
    idle = make_worker(mode)
    assert idle._teacher_response_logits(data, torch.zeros(3, dtype=torch.bool)) is None
    for engine, busy_engine in ((idle.ref.engine, busy.ref.engine), (idle.actor.engine, busy.actor.engine)):
        assert len(engine.calls) == (len(busy_engine.calls) if ranks > 1 else 0)
        assert all(call["sequences"] == [[1]] and call["modes"] == busy_call["modes"]
                   for call, busy_call in zip(engine.calls, busy_engine.calls))


def test_the_prefix_cache_lives_for_one_update_call(monkeypatch):
    """Cleared when verl's update returns or raises: the teacher's weights may change after it, and its memory is
    the rollout's."""
    from verl.workers.engine_workers import ActorRolloutRefWorker

    from sdpo_ext.teacher.shared_prefix import PrefixKVCache

    worker = make_worker("frozen")
    worker.prefix_cache = PrefixKVCache()
    for outcome in ("returns", "raises"):
        worker.prefix_cache.get(torch.tensor([1, 2, 3]), lambda prefix: "kv")

        def update(self, data, outcome=outcome):
            assert self.prefix_cache.prefix is not None  # alive during the update
            if outcome == "raises":
                raise RuntimeError("update failed")
            return "output"

        monkeypatch.setattr(ActorRolloutRefWorker, "update_actor", update)
        data = tu.get_tensordict({"input_ids": nested([torch.arange(5)] * 4)})
        tu.assign_non_tensor(data, force_group_size=1)  # the trainer's own choice: left as it is
        if outcome == "raises":
            with pytest.raises(RuntimeError, match="update failed"):
                SDPOActorRolloutRefWorker.update_actor(worker, data)
        else:
            assert SDPOActorRolloutRefWorker.update_actor(worker, data) == "output"
        assert worker.prefix_cache.prefix is None


@pytest.mark.parametrize("dynamic", [True, False])
def test_with_a_shared_prefix_verl_keeps_the_groups_samples_in_one_micro_batch(monkeypatch, dynamic):
    """With dynamic batch size the update asks verl for micro-batches of whole group parts (`force_group_size`): the
    largest part of a group of 4 whose sequences fit the token cap (here 2 of 5 tokens in 12). Without, the micro-batch
    size is fixed, and force_group_size would multiply it: left unset."""
    from verl.workers.engine_workers import ActorRolloutRefWorker

    from sdpo_ext.teacher.shared_prefix import PrefixKVCache

    worker = make_worker("frozen")
    worker.prefix_cache = PrefixKVCache()
    worker.config = SimpleNamespace(rollout=SimpleNamespace(n=4))
    worker.actor.engine_config = SimpleNamespace(use_dynamic_bsz=dynamic, max_token_len_per_gpu=12)
    seen = []
    monkeypatch.setattr(ActorRolloutRefWorker, "update_actor",
                        lambda self, data: seen.append(tu.get_non_tensor_data(data, "force_group_size", None)))
    SDPOActorRolloutRefWorker.update_actor(worker, tu.get_tensordict({"input_ids": nested([torch.arange(5)] * 8)}))
    assert seen == [2 if dynamic else None]


class ForwardWithKwargs(torch.nn.Module):
    """A model whose forward takes logits_to_keep in **kwargs (as verl's replacement forwards do) and ignores it."""

    def forward(self, input_ids, **kwargs):
        return SimpleNamespace(logits=torch.zeros(1, input_ids.shape[1], VOCAB))


class ForwardWithLogitsToKeep(ForwardWithKwargs):
    def forward(self, input_ids, logits_to_keep=0, **kwargs):
        return super().forward(input_ids)


def test_rows_are_kept_only_where_the_model_and_the_engine_allow_it():
    from sdpo_ext.worker import _keeps_rows

    data, _, _ = micro_batch()
    engine = FakeEngine(1.0)
    engine.module = ForwardWithLogitsToKeep()
    assert _keeps_rows(engine, data)
    engine.module = ForwardWithKwargs()  # logits_to_keep would be swallowed: every row's logits
    assert not _keeps_rows(engine, data)
    engine.module = SimpleNamespace(module=ForwardWithLogitsToKeep())  # FSDP1 wraps the model
    assert _keeps_rows(engine, data)
    tu.assign_non_tensor(data, use_remove_padding=False)
    assert not _keeps_rows(engine, data)


def test_a_model_that_ignores_logits_to_keep_is_a_clear_error(monkeypatch):
    worker = make_worker("ema")
    monkeypatch.setattr(worker_module, "_keeps_rows", lambda engine, batch: True)
    monkeypatch.setattr(FakeModel, "__call__", lambda self, input_ids, **kwargs: SimpleNamespace(
        logits=torch.zeros(1, input_ids.shape[1], VOCAB)))
    data, _, _ = micro_batch()
    with pytest.raises(RuntimeError, match="does not honour a tensor logits_to_keep"):
        worker._teacher_response_logits(data, ACTIVE)
