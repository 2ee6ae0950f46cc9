"""SDPO (Self-Distilled Policy Optimization) as a verl 0.9.1 plugin.

This folder holds the verl glue and the config (`plugin`, `trainer`, `worker`, `loss_hook`, `config`, `resolvers`,
`judged` (a step's sample record, no verl), `teacher_fields`, `teacher_prep`, `val_metrics`); each concept has a
subpackage: `loss/` and `teacher/` (pure: torch, numpy, the stdlib and `sdpo_options` only), `ttrl/`, `startup/` and
`attention/`. This file imports nothing on purpose.
"""
