"""The start-up checks of a training run, without the run: `python -m sdpo_ext.startup.check <main_ppo overrides>`.

Composes verl's `ppo_trainer` config with the overrides, as `python -m verl.trainer.main_ppo <overrides>` does, and
runs `checks.startup_problems` on it. Exit 0 and nothing printed when the run would start; else the refused run's
message (`checks.problems_message`: the problems, then one `error:` line) on stderr and exit 2, as the run itself
would; exit 2 too when the overrides do not compose. For launchers
that start several runs (`sdpo_eval.discovery run`): they learn what a machine lacks before the first run, and
they need not import the plugin.
"""
from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """The checks of `python -m verl.trainer.main_ppo <argv>`; the exit code of the module docstring."""
    from sdpo_ext.startup.checks import REFUSED_EXIT_CODE, problems_message, startup_problems
    from sdpo_ext.startup.compose import compose_ppo

    overrides = sys.argv[1:] if argv is None else argv
    try:
        config = compose_ppo(overrides)
    except Exception as e:  # noqa: BLE001 - Hydra's override and composition errors: all mean "fix the overrides"
        why = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__   # Hydra adds a caret line
        print(f"error: the overrides do not compose: {why} (check each key=value against the recipe)", file=sys.stderr)
        return 2
    problems = startup_problems(config)
    if problems:
        print(problems_message(problems), file=sys.stderr)
        return REFUSED_EXIT_CODE
    return 0


if __name__ == "__main__":
    sys.exit(main())
