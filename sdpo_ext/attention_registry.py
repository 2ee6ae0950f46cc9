"""Our attention implementations in transformers' AttentionInterface, each with transformers' flash-attention mask
function (None without padding, else the 2-D mask): `sdpa_varlen` (sdpo_ext.varlen_attention) and `fa4_varlen`
(sdpo_ext.fa4_attention). verl-free, so a benchmark can register them without verl; `sdpo_ext.plugin` calls it in
every verl process. Idempotent."""
from __future__ import annotations


def register_attention() -> None:
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, flash_attention_mask

    from sdpo_ext import fa4_attention, varlen_attention

    for name, function in ((varlen_attention.ATTN_IMPLEMENTATION, varlen_attention.varlen_sdpa_attention),
                           (fa4_attention.ATTN_IMPLEMENTATION, fa4_attention.fa4_varlen_attention)):
        AttentionInterface.register(name, function)
        AttentionMaskInterface.register(name, flash_attention_mask)
