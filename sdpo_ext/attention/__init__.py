"""Our attention implementations for packed rows (`varlen`: SDPA per sequence; `fa4`: flash-attn-4's varlen kernel)
and their registration in transformers (`registry`). verl-free: torch, transformers and flash-attn only
(tests/layout/test_import_graph.py). This file imports nothing.
"""
