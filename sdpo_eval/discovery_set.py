"""Set-TTRL discovery runs: one verl run per (method, seed) over the whole problem set, best-of-k included.

    python -m sdpo_eval.discovery run-set --model kimina_1_7b --problems mathd_algebra_10,imo_1983_p6 \\
        --budget 256 --out-dir ~/sdpo_runs/discovery_set [--methods grpo,sdpo,best_of_k] [--seeds 1,2] [-- overrides]
    python -m sdpo_eval.discovery report --run-dir ~/sdpo_runs/discovery_set --budget 256 \
        --data ~/data/sdpo_lean/minif2f_kimina_test.parquet --recheck-project ~/recheck-ws   # or --no-recheck

Each run is `python -m verl.trainer.main_ppo +recipe=<algorithm>_<model> ++sdpo.ttrl.theorems=[...]
sdpo.ttrl.max_attempts=<budget> ...` (`set_command`): every problem trained on together from the base model, a
problem retiring at its first valid proof, one attempt log per run (<out-dir>/<method>/seed<seed>/attempts.jsonl).
Best-of-k is the same run of the GRPO recipe with verl's actor update switched off (`trainer.critic_warmup`: verl
updates the actor only from that step on), so it samples with the same sampler (verl's rollout engine, prompts,
temperature, n, prompts per step) and stops by the same rules on the same per-problem budget; only learning is
missing. `reprompt` (SAMPLED_METHODS) runs `sdpo_eval.discovery_sampler` instead: no update, each later attempt drawn
from the context SDPO's teacher would get for the latest failed one. The runs go one after another (finished ones
skipped unless --force); `report` reads them all.
"""
from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from sdpo_eval import run_checks
from sdpo_eval.launch import finished, launch

# method -> (recipe algorithm part, its overrides). sdpo_confident: the SDPO setting that learns on the 135M demo
# (bench/learning/results/learning.json); best_of_k: no actor update (verl: `critic_warmup <= global_steps` gates it).
SINGLE = "sdpo.ttrl.protocol=single"  # one problem at a time, each from the initial state (sdpo_ext.ttrl.queue)
CONFIDENT = "actor_rollout_ref.actor.sdpo.token_weighting=confident"
SET_METHODS: dict[str, tuple[str, tuple[str, ...]]] = {
    "best_of_k": ("grpo", ("trainer.critic_warmup=1000000000", SINGLE)),
    "grpo": ("grpo", (SINGLE,)),
    "sdpo": ("sdpo", (SINGLE,)),
    "sdpo_confident": ("sdpo", (CONFIDENT, SINGLE)),
    "srpo": ("srpo", (SINGLE,)),
    "sc_sdpo": ("sc_sdpo", (SINGLE,)),
    "grpo_shared": ("grpo", ()),
    "sdpo_confident_shared": ("sdpo", (CONFIDENT,)),
    "srpo_shared": ("srpo", ()),
}
# Sampled without any update by sdpo_eval.discovery_sampler (vLLM offline with the recipe's sampling settings and
# reward): reprompt draws each later attempt from SDPO's teacher context of the slot's latest failed attempt.
SAMPLED_METHODS = ("reprompt",)


def set_command(method: str, model: str, problems: Sequence[str], budget: int, run_dir: Path, seed: int,
                overrides: Sequence[str] = (), stop_on_success: bool = True, python: str = sys.executable) -> list[str]:
    """argv of one set-TTRL run of `method` on `problems` with the `<algorithm>_<model>` recipe (a sampled method:
    the sampler with the `sdpo_<model>` recipe, writing into the same run_dir)."""
    if method not in SET_METHODS and method not in SAMPLED_METHODS:
        raise ValueError(f"error: unknown method {method!r} (known: {sorted([*SET_METHODS, *SAMPLED_METHODS])})")
    if not problems or any("," in p or not p for p in problems):
        raise ValueError(f"error: problem names must be non-empty and comma-free, got {list(problems)[:5]}")
    if method in SAMPLED_METHODS:
        return [python, "-m", "sdpo_eval.discovery_sampler", "--recipe", f"sdpo_{model}",
                "--problems", ",".join(problems), "--budget", str(budget), "--runs", f"{method}:{seed}",
                "--out-dir", str(run_dir.parent.parent), *([] if stop_on_success else ["--keep-going"]),
                "--", *overrides]
    algorithm, method_overrides = SET_METHODS[method]
    return [
        python, "-m", "verl.trainer.main_ppo",
        f"+recipe={algorithm}_{model}",
        f"++sdpo.ttrl.theorems=[{','.join(problems)}]",
        f"sdpo.ttrl.max_attempts={budget}",
        f"sdpo.ttrl.stop_on_success={str(stop_on_success).lower()}",
        f"sdpo.algorithm_name={method}",
        f"sdpo.attempt_log={run_dir / 'attempts.jsonl'}",
        f"trainer.experiment_name={method}_{model}_set_s{seed}",
        f"trainer.default_local_dir={run_dir / 'checkpoints'}",
        f"data.seed={seed}",
        f"actor_rollout_ref.rollout.seed={seed}",
        # no checkpoints unless asked for (no validation pass either: the recipes' TTRL settings, TTRLConfig)
        "trainer.save_freq=-1",
        *method_overrides,
        *overrides,
    ]


def set_aside_unresumable_log(run_dir: Path) -> bool:
    """Before a relaunch: without a checkpoint to resume from (run-set saves none unless asked), the run starts over
    under a new run id, so the first try's attempts.jsonl is renamed (attempts.jsonl.<n>, which `report` does not
        read); left in place, the report would count that partial try as one more run of the seed. True when the run has
    a checkpoint to resume from instead."""
    log = run_dir / "attempts.jsonl"
    if (run_dir / "checkpoints" / "latest_checkpointed_iteration.txt").exists():
        return True  # verl resumes it (trainer.resume_mode=auto), the attempt log under the checkpoint's run id
    if log.exists():
        n = 1
        while log.with_name(f"attempts.jsonl.{n}").exists():
            n += 1
        log.rename(log.with_name(f"attempts.jsonl.{n}"))
    return False


def run_set(model: str, problems: Sequence[str], budget: int, out_dir: Path, methods: Sequence[str],
            seeds: Sequence[int], overrides: Sequence[str] = (), force: bool = False,
            dry_run: bool = False) -> list[dict]:
    """Every (method, seed) run not finished yet, one after another; [{method, seed, command, returncode}]. The
    training start-up checks run once, before the first training launch (ValueError with their message: it and the
    runs after it are not started)."""
    done, checked = [], False
    for method in methods:
        for seed in seeds:
            run_dir = out_dir / method / f"seed{seed}"
            command = set_command(method, model, problems, budget, run_dir, seed, overrides)
            if dry_run:
                print(" ".join(command))
                rc = None
            elif finished(run_dir) and not force:
                rc = 0
            else:
                if not checked and run_checks.TRAINER_MODULE in command:   # the sampler checks its reward itself
                    run_checks.stop_on_preflight(command)
                    checked = True
                set_aside_unresumable_log(run_dir)
                rc = launch(command, run_dir)
                if rc != 0:
                    print(run_checks.failure_line(f"{method} seed {seed}", rc, run_dir), file=sys.stderr)
            done.append({"method": method, "seed": seed, "command": command, "returncode": rc})
    return done
