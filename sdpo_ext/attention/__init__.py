"""Our attention implementations for packed rows (varlen: SDPA per sequence; fa4: flash-attn-4's varlen kernel) and
their registration in transformers (registry). verl-free: torch and transformers only. This file imports nothing.
"""
