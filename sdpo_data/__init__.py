"""Dataset preparation (verl parquet) for miniF2F, ProofNet, MATH and the built-in demo task."""
