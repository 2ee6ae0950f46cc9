"""The SDPO teacher: its context (`reprompt`), the prompt prefix a group shares (`shared_prefix`), and its weights
(`weights`: EMA, trust region).

Pure: every module here imports only the standard library, torch, numpy, `sdpo_options` (stdlib only: the config
fields' `option`) and `sdpo_ext.loss` / `sdpo_ext.teacher` (tests/layout/test_import_graph.py). This file imports
nothing.
"""
