"""The SDPO loss math: `divergence`, log-probs (`logprobs`), the loss `objective` and its aggregation, distillation
weights (`distill_weights`), the variants' `routing`, packed response rows (`packed_rows`), the `grpo_valid`
`advantage`.

Pure: every module here imports only the standard library, torch, numpy and `sdpo_ext.loss` / `sdpo_ext.teacher`
(tests/layout/test_import_graph.py). Import from the module that defines a name; this file imports nothing.
"""
