"""A wall-clock bound for our own Python work on a manuscript (the evidence locks), as the sandbox bounds the engine.

A manuscript from a stranger can be made slow to scan (ten megabytes dense with numbers); `--timeout` bounds the
engine, and `within` bounds the Python side with the same number of seconds. It uses the process's real-time
timer, so it bounds only the main thread; elsewhere (a server's worker thread) the work runs unbounded.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


class OutOfTime(Exception):
    """The work inside `within` ran past its seconds."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"did not finish within {seconds:g} s")
        self.seconds = seconds


@contextmanager
def within(seconds: float | None) -> Iterator[None]:
    """Run the body with a wall-clock bound: raise OutOfTime in it after `seconds` (None: no bound).

    An outer bound still in force is restored afterwards with what is left of it.
    """
    if seconds is None or seconds <= 0 or threading.current_thread() is not threading.main_thread():
        yield
        return
    started = time.monotonic()

    def expired(_signum: int, _frame: FrameType | None) -> None:
        raise OutOfTime(seconds)

    previous = signal.signal(signal.SIGALRM, expired)
    outer, _interval = signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer:
            left = outer - (time.monotonic() - started)
            signal.setitimer(signal.ITIMER_REAL, max(left, 0.001))
