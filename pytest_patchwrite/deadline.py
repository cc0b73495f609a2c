"""A wall-clock bound for our own Python work on a manuscript (the evidence locks), as the sandbox bounds the engine.

A manuscript from a stranger can be made slow to scan (ten megabytes dense with numbers); `--timeout` bounds the
engine, and `within` bounds the Python side with the same number of seconds, in whichever thread runs it: the
command line's main thread, a pytest-xdist worker, or an MCP server's worker thread.

How: a watcher thread per bound raises `OutOfTime` in the bounded thread with `PyThreadState_SetAsyncExc`, which
the interpreter delivers between two bytecodes, exactly where a signal handler would run. The choices against it:

- the process's SIGALRM (what this module used before) reaches only the main thread, and takes the one real-time
  timer of the process away from anything else that wants it (pytest-timeout's signal method);
- a deadline checked cooperatively in the scanner's loops needs a check in every loop that a manuscript can make
  long, in modules that other concerns own, and one forgotten loop is an unbounded one;
- the check in a child process costs an interpreter start and a copy of the snapshot per call (the MCP server's
  latency is one engine run), and forking a threaded server is unsafe.

Like a signal, it cannot stop one long call into C (a single regular-expression search); the scanner's work is
many short ones. Unlike a signal's, the exception can arrive while the thread runs a weak reference's callback or a
`__del__` that the garbage collector started, where the interpreter swallows it and reports it to
`sys.unraisablehook` (found as a CI test failing under load: `Exception ignored in WeakSet._remove`, the body run on
unbounded). So a bound hears of its own swallowed exception through that hook, keeps it out of the report, and its
watcher sets it again 10 ms later; and while the body runs on past its time (an `except Exception` ate it), the
watcher sets it again every second until the body ends, or the frame that entered the bound is gone.

The watcher and the end of the body are ordered by one lock, so a bound whose body has finished never fires
afterwards, and an exception set but not yet delivered when the body finishes is withdrawn (and an outer bound's,
which that withdrawal would have taken with it, set again). Bounds nest: each keeps its own watcher, so the tighter
one fires first, and an inner bound passes an outer one's `OutOfTime` through.
"""

from __future__ import annotations

import ctypes
import sys
import threading
import time
from types import FrameType, TracebackType

#: seconds a compile, and our own work on one manuscript, may take unless told (`--timeout`, `patchwrite_timeout`)
DEFAULT_TIMEOUT = 60.0


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

# orders a watcher's firing against its body's end, and guards `_bounds`; reentrant, since the unraisable hook can run
# (from a garbage collection) inside a locked section of the same thread
_lock = threading.RLock()
_bounds: dict[int, list[within]] = {}  # thread id -> the bounds in force in that thread, outermost first
_AGAIN_EVERY = 1.0  # seconds between two firings while a body runs on past its time (a broad except ate it)
_LOOK_EVERY = 0.01  # how often a bound past its time looks whether its exception was swallowed


def _swallowed(unraisable: object) -> bool:
    """Whether an exception the interpreter could not raise was a bound's (now marked to be set again)."""
    bound = getattr(type(getattr(unraisable, "exc_value", None)), "bound", None)
    if not isinstance(bound, within):
        return False
    bound.swallowed = True  # one store: the bound's watcher sets it again (no lock, no thread start in here)
    return True


def _hook_in() -> None:
    """Put the filter of swallowed bounds in front of whatever `sys.unraisablehook` is now (pytest's, the default)."""
    current = sys.unraisablehook
    if getattr(current, "patchwrite_deadline", False):
        return

    def hook(unraisable: object) -> None:
        if not _swallowed(unraisable):
            current(unraisable)  # type: ignore[arg-type]

    hook.patchwrite_deadline = True  # type: ignore[attr-defined]
    sys.unraisablehook = hook


def _on_stack(thread: int, frame: FrameType | None) -> bool:
    """Whether `frame` (where a bound was entered) still runs in `thread`."""
    top = sys._current_frames().get(thread)
    while top is not None:
        if top is frame:
            return True
        top = top.f_back
    return False


class within:  # noqa: N801 - used as `with within(seconds):`, as the function it replaces was
    """Run the body with a wall-clock bound: raise OutOfTime in it after `seconds` (None or <= 0: no bound)."""

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self.fired = False  # the watcher set this bound's exception in the thread
        self.delivered = False  # the thread raised it: it is on its way up (or was swallowed), no longer pending
        self.swallowed = False  # the interpreter could not raise it (a callback, a __del__): set it again
        self.done = False  # the body ended: the watcher must not fire any more
        self.thread = 0
        self._entered: FrameType | None = None
        self._stop = threading.Event()
        self._armed, self._since = threading.Event(), 0.0
        self._watcher: threading.Thread | None = None
        owner, bound = self, seconds or 0.0

        class Expired(OutOfTime):
            # the interpreter makes the exception (from the class, without arguments) in the thread it stops
            bound = owner

            def __init__(self) -> None:
                super().__init__(bound)
                owner.delivered = True

        self.expired = Expired

    def __enter__(self) -> within:
        """Return the bound, now in force for the calling thread."""
        if self.seconds is None or self.seconds <= 0:
            return self
        self.thread = threading.get_ident()
        self.fired = self.delivered = self.swallowed = self.done = False  # a bound entered again starts afresh
        self._entered = sys._getframe(1)
        self._stop = threading.Event()
        # the watcher waits until `start` has returned: fired into `Thread.start` itself, the exception ends in
        # threading's own cleanup (`del _limbo[self]`, a KeyError) instead of this bound's OutOfTime
        self._armed, self._since = threading.Event(), time.monotonic()
        self._watcher = threading.Thread(target=self._watch, name="patchwrite-deadline", daemon=True)
        try:
            _hook_in()
            with _lock:
                stack = _bounds.setdefault(self.thread, [])
                # a bound that left without its exit (the exception arrived on the exit's first line) would
                # otherwise stay listed
                stack[:] = [b for b in stack if not b.done and _on_stack(self.thread, b._entered)]
                stack.append(self)
            self._watcher.start()
            self._armed.set()
        except BaseException:
            self._close()  # an outer bound ran out while this one was being set up
            raise
        return self

    def _watch(self) -> None:
        """The bound's own thread: fire at the time, then again while the body runs on, until it ends."""
        self._armed.wait()
        if self._stop.wait(max(0.0, (self.seconds or 0.0) - (time.monotonic() - self._since))):
            return
        last = 0.0
        while True:
            with _lock:
                if self.done:
                    return
                if not _on_stack(self.thread, self._entered):
                    self.done = True  # the body left without its exit: nothing of it is left to stop
                    return
                now = time.monotonic()
                again = self.delivered and (self.swallowed or now - last >= _AGAIN_EVERY)
                if not self.fired or again:
                    self.fired, self.delivered, self.swallowed, last = True, False, False, now
                    _set_async_exc(self.thread, ctypes.py_object(self.expired))
            if self._stop.wait(_LOOK_EVERY):
                return

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        arrived: list[OutOfTime] = []
        while True:
            try:
                if self._watcher is not None:
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
            self._stop.set()
            self._armed.set()
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
