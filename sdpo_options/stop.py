"""A stopped tool keeps what it made and says how to go on: stop signals and the one line that ends a stopped run.

`stop_signals()`: while it is entered (in the main thread), SIGTERM, a scheduler's stop, raises KeyboardInterrupt as
Ctrl-C (SIGINT) already does, so a tool has one path for both; the earlier handler comes back on exit.
`resume_command(module, argv)`: the exact command that continues the run, `python -m <module> <argv> --resume`.
`STOPPED_EXIT` is the shell's code for a run stopped by SIGINT (128 + 2), as `reward.lean.cli verify` exits.
"""
from __future__ import annotations

import shlex
import signal
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

STOPPED_EXIT = 130


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(signal.Signals(signum).name)


@contextmanager
def stop_signals() -> Iterator[None]:
    """Within: SIGTERM raises KeyboardInterrupt in the main thread (no effect from another thread)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    earlier = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, earlier)


def resume_command(module: str, argv: Sequence[str], flag: str = "--resume") -> str:
    """`python -m module argv`, with `flag` added unless it is there: pasteable in a POSIX shell."""
    args = list(argv) + ([] if flag in argv else [flag])
    return shlex.join(["python", "-m", module, *args])
