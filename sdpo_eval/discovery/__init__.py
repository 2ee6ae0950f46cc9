"""Test-time discovery in one home: which methods find a proof in how many attempts, on one GPU.

`methods` (the table of method names and their protocols), `commands` (each run's command line), `sampler` (the
sampling methods best_of_k and reprompt), `runs` (a run as a process: start, end, resume), `problems` (candidates,
base rates, the choice), `launcher` (the job: `python -m sdpo_eval.discovery run`), `estimates` (discovery@k, its
bootstrap band, the paired difference), `curves` (the report's numbers from attempt logs), `summary` (the plot, the
first-success table, the summary schema), `switches` (the reset cost of single-protocol runs), `teacher` (what the
teacher gave per step), `startup` (the start-up table), `report` (the one report), `merge` (runs brought back by
several device calls), `recipe` (a recipe composed as main_ppo composes it), `run_checks` (the start-up checks
before the first verl run, a failed run's first error line), `cli` and `__main__` (`python -m sdpo_eval.discovery`).
"""
