"""The command lines of a discovery job: one verl run per (method, seed) over the whole problem set, or the sampler
for the sampling methods (`sdpo_eval.discovery.methods` says which).

A verl run is `python -m verl.trainer.main_ppo +recipe=<algorithm>_<task> ++sdpo.ttrl.theorems=[...]
sdpo.ttrl.protocol=<single|shared> sdpo.ttrl.max_attempts=<budget> ...`: a problem retires at its first valid proof
(unless `stop_on_success` is off) or at its budget, one attempt log per run (<run_dir>/attempts.jsonl). The sampler
is `python -m sdpo_eval.discovery sample --recipe sdpo_<task> ...`, which runs each (method, seed) in turn on one
engine into <out_dir>/<method>/seed<s>/, the same layout.
"""
from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from sdpo_eval.discovery.methods import method as lookup


def _check_problems(problems: Sequence[str]) -> None:
    if not problems or any("," in p or not p for p in problems):
        raise ValueError(f"error: problem names must be non-empty and comma-free, got {list(problems)[:5]}")


def verl_command(name: str, task: str, problems: Sequence[str], budget: int, run_dir: Path, seed: int,
                 overrides: Sequence[str] = (), stop_on_success: bool = True, save_freq: int = -1,
                 python: str = sys.executable) -> list[str]:
    """argv of the verl run of method `name` (protocol single or shared) on `problems` of `task`; the caller's
    overrides come last and win. save_freq -1: no checkpoints (then a cut run cannot resume)."""
    entry = lookup(name)
    if not entry.trained:
        raise ValueError(f"error: {name} is a sampler method, not a verl run (use sampler_command)")
    _check_problems(problems)
    resume = ["trainer.max_actor_ckpt_to_keep=1", "trainer.resume_mode=auto"] if save_freq > 0 else []
    return [
        python, "-m", "verl.trainer.main_ppo",
        f"+recipe={entry.algorithm}_{task}",
        f"++sdpo.ttrl.theorems=[{','.join(problems)}]",
        f"sdpo.ttrl.protocol={entry.protocol}",
        f"sdpo.ttrl.max_attempts={budget}",
        f"sdpo.ttrl.stop_on_success={str(stop_on_success).lower()}",
        f"sdpo.algorithm_name={name}",
        f"sdpo.attempt_log={run_dir / 'attempts.jsonl'}",
        f"trainer.experiment_name={name}_{task}_s{seed}",
        f"trainer.default_local_dir={run_dir / 'checkpoints'}",
        f"data.seed={seed}",
        f"actor_rollout_ref.rollout.seed={seed}",
        f"trainer.save_freq={save_freq}",  # no validation pass either: the recipes' TTRL settings (TTRLConfig)
        *resume,
        *entry.overrides,
        *overrides,
    ]


def sampler_command(runs: Sequence[tuple[str, int]], task: str, problems: Sequence[str], budget: int, out_dir: Path,
                    overrides: Sequence[str] = (), keep_going: bool = False, flags: Sequence[str] = (),
                    python: str = sys.executable) -> list[str]:
    """argv of one sampler process running each (method, seed) of `runs` in turn into out_dir/<method>/seed<s>/
    with the `sdpo_<task>` recipe (its reprompt block is SDPO's teacher's); `flags`: the sampler's own (engine)."""
    for name, _ in runs:
        if lookup(name).trained:
            raise ValueError(f"error: {name} is a verl run, not a sampler method (use verl_command)")
    _check_problems(problems)
    return [python, "-m", "sdpo_eval.discovery", "sample", "--recipe", f"sdpo_{task}",
            "--problems", ",".join(problems), "--budget", str(budget),
            "--runs", ",".join(f"{name}:{seed}" for name, seed in runs), "--out-dir", str(out_dir),
            *(["--keep-going"] if keep_going else []), *flags, "--", *overrides]
