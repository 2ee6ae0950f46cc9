"""Lean backends implementing `lean_env.types.LeanBackend` (kimina, repl, ray_actor; imported lazily by users), the
probe that asks whether one is there, and the factory that builds the one a `BackendOptions` names."""
