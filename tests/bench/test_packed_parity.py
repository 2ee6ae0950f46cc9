"""bench/step_time/packed_parity.py on CPU at a tiny shape: our varlen attention packed equals sdpa alone (also the
shared-prefix teacher's row), and an attention that lets packed sequences see each other shows up as a gap (so the
GPU job's figure can fail)."""
from __future__ import annotations

import torch

from tests.bench.bench_scripts import on_path

on_path("step_time")
from packed_parity import measure  # noqa: E402


def test_varlen_attention_packed_matches_each_sequence_alone():
    result = measure("sdpa_varlen", "tiny", [23, 5, 17], "cpu", torch.float32, repeats=2)
    assert result["packed_vs_alone"]["logit_max_abs_over_max_logit"] < 1e-5
    assert result["packed_vs_alone"]["grad_max_abs_over_max_grad"] < 1e-5
    assert abs(result["loss"]["packed"] - result["loss"]["alone"]) <= 1e-5 * result["loss"]["alone"]
    assert len(result["seconds_per_forward_backward"]["packed"]) == 2


def test_an_attention_that_crosses_sequences_shows_a_gap():
    from transformers import AttentionInterface
    from transformers.integrations.sdpa_attention import sdpa_attention_forward
    from transformers.masking_utils import AttentionMaskInterface, flash_attention_mask

    def across(module, query, key, value, attention_mask, **kwargs):  # one causal sequence over the packed row
        return sdpa_attention_forward(module, query, key, value, None, is_causal=True,
                                      **{k: v for k, v in kwargs.items() if k != "is_causal"})

    AttentionInterface.register("test_across", across)
    AttentionMaskInterface.register("test_across", flash_attention_mask)
    result = measure("test_across", "tiny", [23, 5, 17], "cpu", torch.float32, repeats=2)
    assert result["packed_vs_alone"]["logit_max_abs_over_max_logit"] > 1e-3
    assert result["sdpa_packed_vs_alone_floor"]["logit_max_abs_over_max_logit"] < 1e-5


def test_the_shared_prefix_row_gives_the_whole_rows_logits_with_fewer_tokens():
    from packed_parity import measure_shared_prefix

    result = measure_shared_prefix("sdpa_varlen", "tiny", 40, 3, 12, "cpu", torch.float32, repeats=2)
    assert result["tokens"] == {"whole": 3 * (40 + 1 + 12), "shared_prefix": 40 + 3 * (1 + 12)}
    gaps = result["logit_max_abs"]
    assert max(gaps.values()) < 1e-5 * result["max_logit"]
    assert len(result["seconds_per_forward"]["shared_prefix"]) == 2
