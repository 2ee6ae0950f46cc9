"""Row bookkeeping for sequences packed back-to-back (verl's remove-padding layout).

Sample i occupies rows [off_i, off_i + L_i) of the packed logits, off = exclusive cumsum of the
sequence lengths L, and its last r_i tokens are the response. A causal LM's logits row p predicts
token p + 1, so response token j of sample i (at row off_i + (L_i − r_i) + j) is predicted by row
off_i + (L_i − r_i) − 1 + j. The student and the teacher see the same response tokens after
different prompts, so this maps both micro-batches onto the same [Σ r_i] response positions.
"""

from __future__ import annotations

import torch


def response_logit_rows(seq_lens: torch.Tensor, response_lens: torch.Tensor) -> torch.Tensor:
    """LongTensor [Σ r_i]: for each response token (sample-major, in order), the packed logits row
    that predicts it: off_i + (L_i − r_i) − 1 + j, j ∈ [0, r_i). Requires prompt length L_i − r_i ≥ 1."""
    if seq_lens.dim() != 1 or response_lens.dim() != 1 or seq_lens.shape != response_lens.shape:
        raise ValueError(f"seq_lens and response_lens must be 1-D of equal length, got {tuple(seq_lens.shape)} "
                         f"and {tuple(response_lens.shape)}")
    if seq_lens.is_floating_point() or response_lens.is_floating_point():
        raise ValueError("seq_lens and response_lens must be integer tensors")
    seq_lens = seq_lens.long()
    response_lens = response_lens.long()
    if bool((response_lens < 0).any()):
        raise ValueError(f"response lengths must be >= 0, got {response_lens.tolist()}")
    prompt_lens = seq_lens - response_lens
    bad = (prompt_lens < 1).nonzero().flatten().tolist()
    if bad:
        raise ValueError(
            f"samples {bad} have prompt length < 1 (seq_len {seq_lens[bad].tolist()}, "
            f"response_len {response_lens[bad].tolist()}): "
            "the first response token needs a preceding position to be predicted from"
        )
    offsets = torch.cumsum(seq_lens, 0) - seq_lens
    first_rows = offsets + prompt_lens - 1
    sample_of_token = torch.repeat_interleave(torch.arange(seq_lens.numel(), device=seq_lens.device), response_lens)
    token_starts = torch.cumsum(response_lens, 0) - response_lens
    j = torch.arange(sample_of_token.numel(), device=seq_lens.device) - token_starts[sample_of_token]
    return first_rows[sample_of_token] + j


def jagged(rows: list[torch.Tensor]) -> torch.Tensor:
    """Rows of different lengths as one jagged nested tensor (verl's per-sample TransferQueue layout)."""
    return torch.nested.as_nested_tensor(rows, layout=torch.jagged)
