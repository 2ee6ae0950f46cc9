"""Set-TTRL: the problem set's bookkeeping (`problem_set`, pure), the rules of the `sdpo.ttrl` modes (`modes`, pure),
the trainer's hooks over it (`hooks`) and the dataset that keeps the named theorems (`dataset`, imports verl). This
file imports nothing.
"""
