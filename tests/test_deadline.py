"""`deadline.within` bounds Python work in any thread, is cancelled when its body ends, and nests.

The bounds asserted on elapsed time are generous upper limits that prove the work stopped (an unbounded body
here spins for as long as the test runs), never timings.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from pytest_patchwrite.deadline import OutOfTime, within


def _spin() -> None:
    while True:
        pass


def _in_thread(body: Callable[[], Any]) -> tuple[Any, BaseException | None, float]:
    """Return (the result of `body` run in a new thread, the exception it raised, the seconds it took)."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        started = time.monotonic()
        try:
            outcome["result"] = body()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            outcome["error"] = exc
        outcome["seconds"] = time.monotonic() - started

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(120)
    assert not thread.is_alive(), "the bounded body was never stopped"
    return outcome.get("result"), outcome.get("error"), outcome["seconds"]


def test_within_stops_a_body_in_a_worker_thread() -> None:
    def bounded() -> None:
        with within(0.5):
            _spin()

    _result, error, seconds = _in_thread(bounded)
    assert isinstance(error, OutOfTime) and error.seconds == 0.5
    assert "did not finish within 0.5 s" in str(error)
    assert seconds < 5  # stopped: unbounded, it would spin until the join gave up


def test_within_stops_a_body_in_the_main_thread_without_the_process_timer() -> None:
    handler = signal.getsignal(signal.SIGALRM)
    with pytest.raises(OutOfTime):
        with within(0.3):
            assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)  # the process's one timer stays free
            _spin()
    assert signal.getsignal(signal.SIGALRM) is handler


def test_a_bound_stops_only_its_own_thread() -> None:
    other_stopped = threading.Event()
    release = threading.Event()

    def unbounded() -> int:
        count = 0
        while not release.is_set():
            count += 1  # bytecodes run all the while the other thread's bound fires
        return count

    results: dict[str, Any] = {}
    worker = threading.Thread(target=lambda: results.update(count=unbounded()), daemon=True)
    worker.start()

    def bounded() -> None:
        try:
            with within(0.3):
                _spin()
        finally:
            other_stopped.set()

    _result, error, _seconds = _in_thread(bounded)
    assert other_stopped.is_set() and isinstance(error, OutOfTime)
    release.set()
    worker.join(60)
    assert results["count"] > 0  # the unbounded thread finished normally, no exception reached it


def test_a_finished_body_is_never_interrupted_afterwards() -> None:
    # bodies that end around their deadline: a bound that fired as its body ended must not strike later code
    def many() -> tuple[int, int]:
        stopped = leaked = 0
        for _ in range(3000):
            try:
                with within(0.0002):
                    sum(range(300))
            except OutOfTime:
                stopped += 1
            try:
                for _ in range(3000):
                    pass
            except OutOfTime:
                leaked += 1
        return stopped, leaked

    for runner in (many, lambda: _in_thread(many)[0]):
        stopped, leaked = runner()
        assert leaked == 0
        assert stopped <= 3000


def test_nested_bounds_keep_the_tighter_one() -> None:
    def inner_tighter() -> None:
        with within(30):
            with within(0.3):
                _spin()

    def outer_tighter() -> None:
        with within(0.3):
            with within(30):
                _spin()

    for body in (inner_tighter, outer_tighter):
        _result, error, seconds = _in_thread(body)
        assert isinstance(error, OutOfTime) and error.seconds == 0.3
        assert seconds < 10


def test_an_outer_bound_stops_work_after_an_inner_one_caught_its_own() -> None:
    seen: list[str] = []

    def body() -> None:
        with within(1.0):
            try:
                with within(0.2):
                    _spin()
            except OutOfTime as exc:
                seen.append(f"inner {exc.seconds:g}")
            try:
                _spin()
            except OutOfTime as exc:
                seen.append(f"outer {exc.seconds:g}")
                raise

    _result, error, _seconds = _in_thread(body)
    assert seen == ["inner 0.2", "outer 1"]
    assert isinstance(error, OutOfTime) and error.seconds == 1.0


def test_no_bound_and_a_finished_bound_change_nothing() -> None:
    for seconds in (None, 0, -1):
        with within(seconds):
            time.sleep(0.01)
    with within(30) as bound:
        value = sum(range(1000))
    assert value == 499500 and bound.done and not bound.fired


def test_a_bound_entered_again_bounds_again() -> None:
    bound = within(0.3)
    for _ in range(2):
        _result, error, _seconds = _in_thread(lambda: _spin_within(bound))
        assert isinstance(error, OutOfTime)


def _spin_within(bound: within) -> None:
    with bound:
        _spin()


def test_a_bound_swallowed_in_a_weakref_callback_is_set_again_and_kept_out_of_the_report() -> None:
    # Half of this body's time is spent in weak reference callbacks, where the interpreter swallows an
    # exception (it goes to sys.unraisablehook): found as a failing CI test under load (WeakSet._remove).
    import sys
    import weakref

    class Thing:
        pass

    def busy(seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            pass

    def callback(_: object) -> None:
        busy(0.002)

    def body() -> None:
        keep = []
        while True:
            thing = Thing()
            keep.append(weakref.ref(thing, callback))
            del thing  # the callback runs here, in this thread
            keep.clear()
            busy(0.002)

    reported: list[object] = []
    before = sys.unraisablehook
    sys.unraisablehook = reported.append
    try:
        _, error, seconds = _in_thread(lambda: _bounded(body, 0.5))
    finally:
        sys.unraisablehook = before
    assert isinstance(error, OutOfTime)
    assert seconds < 30
    assert not [r for r in reported if isinstance(getattr(r, "exc_value", None), OutOfTime)]


def _bounded(body: Callable[[], Any], seconds: float) -> Any:
    with within(seconds):
        return body()


def test_a_bound_eaten_by_a_broad_except_fires_again_until_the_body_ends() -> None:
    eaten: list[BaseException] = []

    def body() -> None:
        while len(eaten) < 3:
            try:
                _spin()
            except Exception as exc:  # noqa: BLE001 - the careless code a bound must still stop
                eaten.append(exc)

    _, error, seconds = _in_thread(lambda: _bounded(body, 0.3))
    assert error is None  # the body ended on its own, after the bound had fired three times
    assert len(eaten) == 3 and all(isinstance(e, OutOfTime) for e in eaten)
    assert seconds < 30
