"""Lean backends implementing `lean_env.types.LeanBackend`: `kimina` (the Kimina Lean Server over HTTP), `repl` (a
pool of `lake exe repl` processes), `ray_actor` (the REPL pool in a Ray actor); imported lazily by users. `common`
holds what they share, `probe` asks whether one is there, and `factory` builds the one a `BackendOptions` names."""
