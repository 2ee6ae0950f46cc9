"""A stopped tool keeps what it made and says how to go on: stop signals and the one line that ends a stopped run.

`stop_signals()`: while it is entered (in the main thread), SIGTERM, a scheduler's stop, raises KeyboardInterrupt as
Ctrl-C (SIGINT) already does, so a tool has one path for both; the earlier handler comes back on exit.
`resume_command(module, argv)`: the exact command that continues the run, `python -m <module> <argv> --resume`.
`held_stops(loop)`: while an asyncio loop finishes work in flight (Lean checks), a first stop signal is held until the
work is done and then raised as KeyboardInterrupt; a second one stops at once.
`STOPPED_EXIT` is the shell's code for a run stopped by SIGINT (128 + 2), as `reward.lean.cli verify` exits.
"""
from __future__ import annotations

import asyncio
import shlex
import signal
import sys
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


_holding: list[bool] = []   # a held_stops block is open (an inner one then changes nothing)


@contextmanager
def held_stops(loop: asyncio.AbstractEventLoop) -> Iterator[None]:
    """Within (the main thread, `loop` running the work): SIGINT or SIGTERM is held, with a note on stderr, and raised
    as KeyboardInterrupt when the block ends; a second one raises at once (from the loop). A block inside another
    one is the outer one's."""
    if threading.current_thread() is not threading.main_thread() or _holding:
        yield
        return
    held: list[str] = []

    def hold(signum: signal.Signals) -> None:
        if held:
            raise KeyboardInterrupt(signum.name)
        held.append(signum.name)
        print(f"\n{signum.name}: stopping once the work in flight is done (again to stop at once)", file=sys.stderr)

    earlier = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    for signum in earlier:
        loop.add_signal_handler(signum, hold, signum)
    _holding.append(True)
    try:
        yield
    finally:
        _holding.pop()
        if not loop.is_running() and not loop.is_closed():
            loop.run_until_complete(asyncio.sleep(0))   # a signal since the loop last ran still reaches `hold`
        for signum, handler in earlier.items():
            loop.remove_signal_handler(signum)
            signal.signal(signum, handler)   # remove_signal_handler would leave SIG_DFL for SIGTERM
    if held:
        raise KeyboardInterrupt(held[0])
