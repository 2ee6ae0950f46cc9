"""Lean backends implementing `lean_env.types.LeanBackend` (imported lazily by users)."""
