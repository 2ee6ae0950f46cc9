"""Typed options and their command-line flags (stdlib only; imports no other package here).

`flags`: the one bridge from an options dataclass to flags. A field is declared with `option(default, doc)`, so its
default and its one-line doc are written once, in the dataclass; `add_flags` builds one flag per field from them
and `from_flags` builds the dataclass back from the parsed flags. The Lean reward's options (`lean_env.options`), the
MATH grading options (`reward.math.options`) and the evaluation engine's options (`sdpo_eval.engines`) all go
through it, so every package above may import it and it imports none of them. verl's config dataclasses
(`sdpo_ext.config`, `sdpo_ext.teacher.reprompt`) declare their fields with it too (`option`, and `block` for a nested
dataclass), without flags: one documentation style for every config field
(tests/sdpo_options/test_flags_config_idiom.py).

`cli_checks`: what every CLI checks before it loads anything (outputs writable, inputs there) and its `error:` lines,
here so that a MATH or plotting command does not import the Lean package (the Lean backend's probe is
`lean_env.cli_checks`).

`stop`: one path for Ctrl-C and a scheduler's SIGTERM (`stop_signals`), and the exact `--resume` command a stopped
evaluation ends with (`resume_command`), so every tool that generates keeps what it made and says how to go on.

Naming rule: a dataclass that verl builds from the recipes' Hydra config (a block of the YAML, read through
`_target_` or `omega_conf_to_dataclass`) is a `*Config`; a dataclass of our own settings, given as keyword arguments
(verl's `reward_kwargs` included) or as command-line flags, is a `*Options`.
"""
