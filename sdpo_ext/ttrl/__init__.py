"""TTRL over a set: the problem set's bookkeeping (`problem_set`, pure), the single protocol's queue over it (`queue`,
pure), the rules of the `sdpo.ttrl` modes (`modes`, pure), the trainer's hooks over them (`hooks`), the initial state
in host memory that the queue's resets restore (`snapshot`, pure) and the dataset that keeps the named theorems
(`dataset`, imports verl). This file imports nothing.
"""
