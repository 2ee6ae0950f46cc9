"""One path for Ctrl-C and SIGTERM (`stop_signals`), stops held while work in flight finishes (`held_stops`, real
signals), and the exact `--resume` command (`resume_command`)."""
from __future__ import annotations

import asyncio
import os
import shlex
import signal

import pytest

from sdpo_options.stop import held_stops, resume_command, stop_signals


def test_sigterm_is_a_keyboard_interrupt_within_and_the_earlier_handler_after():
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(KeyboardInterrupt):
        with stop_signals():
            os.kill(os.getpid(), signal.SIGTERM)
            for _ in range(1000):   # Python runs the handler between bytecodes
                pass
    assert signal.getsignal(signal.SIGTERM) is before


def test_a_held_stop_comes_after_the_work_and_a_nested_block_is_the_outer_ones():
    loop, done = asyncio.new_event_loop(), []

    async def work():
        os.kill(os.getpid(), signal.SIGINT)
        await asyncio.sleep(0.05)   # the stop arrives here; the work goes on
        done.append(True)

    try:
        with pytest.raises(KeyboardInterrupt):
            with held_stops(loop):
                with held_stops(loop):   # Verifier's own block inside best-of-k's
                    loop.run_until_complete(work())
                done.append("after the inner block")
        assert done == [True, "after the inner block"]
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        loop.close()


def test_resume_command_is_pasteable_and_adds_resume_once():
    argv = ["--model", "/models/my model", "--log", "s.jsonl"]
    assert shlex.split(resume_command("sdpo_eval.math_eval", argv)) == ["python", "-m", "sdpo_eval.math_eval",
                                                                         *argv, "--resume"]
    assert resume_command("m", ["--resume"]).count("--resume") == 1
