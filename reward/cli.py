"""Where `python -m reward.cli` went: proof checking moved to `python -m reward.lean.cli` when the rewards were split
into `reward.lean` and `reward.math`. Running this module says so in one line and exits 2; nothing is checked here."""
from __future__ import annotations

import sys

MOVED = ("error: reward.cli moved to reward.lean.cli (run python -m reward.lean.cli verify FILE.jsonl ..., the same "
         "options; python -m reward.lean.cli verify --help lists them)")


def main(argv: list[str] | None = None) -> int:
    """Print where the command went; exit code 2."""
    print(MOVED, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
