"""A wall-clock bound for our own Python work on a manuscript (the evidence locks), as the sandbox bounds the engine.

A manuscript from a stranger can be made slow to scan (ten megabytes dense with numbers); `--timeout` bounds the
engine, and `within` bounds the Python side with the same number of seconds, in whichever thread runs it: the
command line's main thread, a pytest-xdist worker, or an MCP server's worker thread.

How: a timer thread raises `OutOfTime` in the bounded thread with `PyThreadState_SetAsyncExc`, which the
interpreter delivers between two bytecodes, exactly where a signal handler would run. The choices against it:

- the process's SIGALRM (what this module used before) reaches only the main thread, and takes the one real-time
  timer of the process away from anything else that wants it (pytest-timeout's signal method);
- a deadline checked cooperatively in the scanner's loops needs a check in every loop that a manuscript can make
  long, in modules that other concerns own, and one forgotten loop is an unbounded one;
- the check in a child process costs an interpreter start and a copy of the snapshot per call (the MCP server's
  latency is one engine run), and forking a threaded server is unsafe.

Like a signal, it cannot stop one long call into C (a single regular-expression search); the scanner's work is
many short ones. The timer and the end of the body are ordered by one lock, so a bound whose body has finished
never fires afterwards, and an exception set but not yet delivered when the body finishes is withdrawn (and an
outer bound's, which that withdrawal would have taken with it, set again). Bounds nest: each keeps its own timer,
so the tighter one fires first, and an inner bound passes an outer one's `OutOfTime` through.
"""

from __future__ import annotations

import ctypes
import threading
from types import TracebackType


class OutOfTime(Exception):
    """The work inside `within` ran past its seconds."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"did not finish within {seconds:g} s")
        self.seconds = seconds


# int PyThreadState_SetAsyncExc(unsigned long id, PyObject *exc): exc is a class (raised without arguments) or NULL
_set_async_exc = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_ulong, ctypes.py_object)(
    ("PyThreadState_SetAsyncExc", ctypes.pythonapi)
)
_NO_EXCEPTION = ctypes.py_object()  # NULL: withdraw a pending asynchronous exception

_lock = threading.Lock()  # orders a timer's firing against its body's end, and guards `_bounds`
_bounds: dict[int, list[within]] = {}  # thread id -> the bounds in force in that thread, outermost first


class within:  # noqa: N801 - used as `with within(seconds):`, as the function it replaces was
    """Run the body with a wall-clock bound: raise OutOfTime in it after `seconds` (None or <= 0: no bound)."""

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self.fired = False  # the timer set this bound's exception in the thread
        self.delivered = False  # the thread raised it: it is on its way up, no longer pending
        self.done = False  # the body ended: the timer must not fire any more
        self.thread = 0
        self._timer: threading.Timer | None = None
        owner, bound = self, seconds or 0.0

        class Expired(OutOfTime):
            # the interpreter makes the exception (from the class, without arguments) in the thread it stops
            def __init__(self) -> None:
                super().__init__(bound)
                owner.delivered = True

        self.expired = Expired

    def __enter__(self) -> within:
        """Return the bound, now in force for the calling thread."""
        if self.seconds is None or self.seconds <= 0:
            return self
        self.thread = threading.get_ident()
        self.fired = self.delivered = self.done = False  # a bound entered again starts afresh
        self._timer = threading.Timer(self.seconds, self._fire)
        self._timer.daemon = True  # a bound never keeps the interpreter alive
        try:
            with _lock:
                stack = _bounds.setdefault(self.thread, [])
                # a bound whose exception was raised fires no more; one that left without its exit (the exception
                # arrived on the exit's first line) would otherwise stay listed
                stack[:] = [b for b in stack if not b.delivered]
                stack.append(self)
            self._timer.start()
        except BaseException:
            self._close()  # an outer bound ran out while this one was being set up
            raise
        return self

    def _fire(self) -> None:
        with _lock:
            if not self.done and not self.fired:
                self.fired = True
                _set_async_exc(self.thread, ctypes.py_object(self.expired))

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._timer is None:
            return
        arrived: list[OutOfTime] = []
        while True:
            try:
                self._close()
                break
            except OutOfTime as late:
                arrived.append(late)  # set before the lock was taken, raised while we clean up: clean up again
        outer = [late for late in arrived if not isinstance(late, self.expired)]
        if outer:
            raise outer[0]  # an outer bound ran out: its body stops too
        # our own exception come late is dropped: the body had finished, and its result (or its error) stands

    def _close(self) -> None:
        with _lock:
            self.done = True
            if self._timer is not None:
                self._timer.cancel()
            stack = _bounds.get(self.thread, [])
            if self in stack:
                stack.remove(self)
            if not stack:
                _bounds.pop(self.thread, None)
            if self.fired and not self.delivered:
                # set but not raised yet: withdraw it, and set again an outer bound's that the withdrawal takes too
                _set_async_exc(self.thread, _NO_EXCEPTION)
                for outer in stack:
                    if outer.fired and not outer.delivered:
                        _set_async_exc(self.thread, ctypes.py_object(outer.expired))
                        break
