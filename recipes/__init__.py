"""Hydra YAML recipes (package data only, found through `pkg://recipes` by the `hydra_plugins` search-path plugin).

`recipe/` (one file per run: `+recipe=NAME`, a composition of the parts below), `sdpo_model/` (model, batch and
sampling sizes), `sdpo_algorithm/` (GRPO, SDPO and its variants), `sdpo_task/` (data, reward and TTRL settings),
`sdpo_runtime/` (start-up shared by every task: the Hydra callback of `sdpo_ext.startup.checks`, TransferQueue sized
to the host).
"""
