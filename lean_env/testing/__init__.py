"""Test doubles for Lean: a REPL process double and a Kimina HTTP double sharing one rule engine."""
