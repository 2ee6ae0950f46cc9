"""SDPO (Self-Distilled Policy Optimization) as a verl 0.9.1 plugin.

The pure math lives in ``loss``, ``packed_rows``, ``routing``, ``teacher`` and ``reprompt`` (torch + stdlib only);
the verl glue lives beside them. This file imports nothing on purpose.
"""
