"""Test doubles for Lean, so the suite needs no Lean toolchain; shipped so that a user can try the CLIs without Lean.

`semantics` (the rule engine both doubles share: what a command's outcome and messages are), `fake_repl` (a stand-in
for `lake exe repl`, run as a process), `fake_kimina` (an in-process Kimina Lean Server for `httpx.MockTransport`) over
`kimina_pool` (its REPL side: header split, REPL pool), `leanjson` (Lean's `Json.pretty` layout), `fake_lean_tools`
(fake `lake`, `lean`, `comparator`, `lean4checker`, `safe_verify` executables for the offline re-check).
"""
