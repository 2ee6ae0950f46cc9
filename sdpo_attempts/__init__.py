"""What training and evaluation share about attempts at a problem (stdlib only; imports no other package here).

`log`: the append-only JSONL attempt log written by SDPO/GRPO runs and the best-of-k sampler.
`pass_at_k`: the unbiased pass@k estimator used by training validation and by the evaluations.
`valid`: the one rule for a valid attempt (`is_valid`, `valid_record`), read by training, samplers and reports.
Both `sdpo_ext` (training) and `sdpo_eval` import these, so they live below both.
"""
