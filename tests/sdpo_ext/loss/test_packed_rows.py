"""response_logit_rows on hand-built packed sequences."""

import pytest
import torch

from sdpo_ext.loss.packed_rows import response_logit_rows


def test_rows_by_hand():
    # sample 0: 5 tokens, last 2 response -> rows [0, 5): predictors of tokens 3, 4 are rows 2, 3
    # sample 1: 3 tokens, last 1 response -> rows [5, 8): token 7 predicted by row 6
    # sample 2: 4 tokens, no response     -> rows [8, 12): nothing
    # sample 3: 2 tokens, last 1 response -> rows [12, 14): token 13 predicted by row 12
    rows = response_logit_rows(torch.tensor([5, 3, 4, 2]), torch.tensor([2, 1, 0, 1]))
    assert rows.dtype == torch.long
    assert rows.tolist() == [2, 3, 6, 12]


def test_rows_select_next_token_predictions_of_a_toy_causal_model():
    # "model": the logits row at position p is one-hot at the token at p + 1 (perfect predictor).
    g = torch.Generator().manual_seed(0)
    seqs = [torch.randint(0, 50, (n,), generator=g) for n in (7, 4, 9)]
    response_lens = torch.tensor([3, 1, 5])
    packed = torch.cat(seqs)
    next_token = torch.cat([packed[1:], packed[:1]])
    rows = response_logit_rows(torch.tensor([len(s) for s in seqs]), response_lens)
    expected = torch.cat([s[len(s) - r:] for s, r in zip(seqs, response_lens.tolist())])
    assert torch.equal(next_token[rows], expected)


def test_prompt_len_zero_is_an_error():
    with pytest.raises(ValueError, match="prompt length < 1"):
        response_logit_rows(torch.tensor([4, 3]), torch.tensor([2, 3]))
    with pytest.raises(ValueError, match=">= 0"):
        response_logit_rows(torch.tensor([4]), torch.tensor([-1]))
    with pytest.raises(ValueError, match="1-D"):
        response_logit_rows(torch.tensor([4, 3]), torch.tensor([2]))
    with pytest.raises(ValueError, match="integer"):
        response_logit_rows(torch.tensor([4.0]), torch.tensor([2.0]))
