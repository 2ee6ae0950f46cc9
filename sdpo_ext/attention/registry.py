"""Our attention implementations in transformers' AttentionInterface, each with transformers' flash-attention mask
function (None without padding, else the 2-D mask): `sdpa_varlen` (sdpo_ext.attention.varlen) and `fa4_varlen`
(sdpo_ext.attention.fa4). verl-free, so a benchmark can register them without verl; `sdpo_ext.plugin` calls it in
every verl process. Idempotent."""
from __future__ import annotations


def register_attention() -> None:
    """Register `sdpa_varlen` and `fa4_varlen` in transformers' AttentionInterface, each with transformers'
    flash-attention mask function, so verl's packed path can select them."""
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, flash_attention_mask

    from sdpo_ext.attention import fa4, varlen

    for name, function in ((varlen.ATTN_IMPLEMENTATION, varlen.varlen_sdpa_attention),
                           (fa4.ATTN_IMPLEMENTATION, fa4.fa4_varlen_attention)):
        AttentionInterface.register(name, function)
        AttentionMaskInterface.register(name, flash_attention_mask)
