"""The one place that starts a process for a manuscript: TeX engines and tools inside a bubblewrap sandbox.

A manuscript comes from a stranger. Inside the sandbox only the TeX installation
(read-only) and the private copy of the manuscript (the only writable place) are
visible; there is no network, no environment but what TeX needs, a fresh PID
namespace that dies with the job, and resource limits. kpathsea's paranoid
settings stay on as a second layer. Where no sandbox can be made, the caller is
told once and refuses what the paranoid layer alone cannot hold, unless the run
is marked trusted.

This module runs the process and collects how it ended (and keeps the live jobs, so a signal can end them);
the command line it runs, and whether bubblewrap works here, come from `sandboxcmd.py`.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from ..files.tempfiles import make_owned_temp_dir, remove_tree
from .sandboxcmd import FontDirs, command
from .sandboxlimits import Limits, preexec


@dataclass(frozen=True)
class Outcome:
    """How one sandboxed process ended."""

    returncode: int | None
    timed_out: bool = False
    over_limit: str = ""  # which limit stopped it ("disk"), "cancel" when the caller stopped it, or ""
    signal: int = 0  # the signal that ended the tool when we did not send it (its wait status), else 0
    not_started: str = ""  # bwrap's own words when the sandbox never ran the tool (no exit status reported)
    stderr: str = ""  # the start of what the tool (and bwrap) wrote to stderr, at most 16 KiB


def tree_bytes(root: Path, stop_above: int | None = None) -> int:
    """Return the bytes of the regular files below `root` (stopping once past `stop_above`)."""
    total = 0
    stack = [str(root)]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                elif entry.is_file(follow_symlinks=False):
                    total += entry.stat(follow_symlinks=False).st_blocks * 512
            except OSError:
                continue
            if stop_above is not None and total > stop_above:
                return total
    return total


# -- live jobs, so a signal can end them and remove their directories ---------------------
_live_lock = threading.Lock()
_live_procs: set[subprocess.Popen[bytes]] = set()
_live_dirs: set[str] = set()
_handled: dict[int, object] = {}


_INNER: dict[int, int] = {}  # bwrap's pid -> the pid of the sandbox's init (its PID namespace)


def _read_child_pid(fd: int) -> int:
    """Return the sandbox init's pid that bwrap reports on its info fd (0 when it reports none)."""
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(4096)
    match = re.search(rb'"child-pid"\s*:\s*(\d+)', data)
    return int(match.group(1)) if match else 0


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    # the sandbox's init first: the kernel then kills its whole PID namespace, and bwrap, seeing its child
    # gone, exits only after every process in it has been reaped, so nothing outlives the wait
    inner = _INNER.get(proc.pid, 0)
    if inner:
        try:
            os.kill(inner, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        return
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _reap(procs: list[subprocess.Popen[bytes]], seconds: float = 5.0) -> None:
    """Wait (at most `seconds`) until the killed sandboxes' bwrap processes have exited.

    Not with `Popen.wait`: the signal usually interrupts the main thread inside
    `proc.wait()`, which holds the Popen's wait lock, so a second wait from the
    handler could never take it and always ran into its timeout.
    """
    pending = {proc.pid for proc in procs if proc.returncode is None}
    end = time.monotonic() + seconds
    while pending:
        for pid in list(pending):
            try:
                reaped, _status = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:  # already reaped (Popen then reports exit status 0)
                reaped = pid
            if reaped:
                pending.discard(pid)
        if not pending or time.monotonic() >= end:
            return
        time.sleep(0.01)


def _on_signal(signum: int, frame: object) -> None:
    with _live_lock:
        procs, dirs = list(_live_procs), list(_live_dirs)
    for proc in procs:
        _kill_group(proc)
    _reap(procs)
    for directory in dirs:
        remove_tree(directory)
    previous = _handled.get(signum, signal.SIG_DFL)
    if callable(previous):
        previous(signum, frame)  # Python's SIGINT handler raises KeyboardInterrupt: pytest's usual exit
        return
    # the usual exit code of a process killed by this signal
    signal.signal(signum, signal.SIG_DFL if previous in (None, signal.SIG_DFL) else previous)  # type: ignore[arg-type]
    os.kill(os.getpid(), signum)


def install_signal_handlers() -> None:
    """Make SIGTERM, SIGINT and SIGHUP kill every live sandbox and remove its directory before the usual exit."""
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        current = signal.getsignal(signum)
        if current is _on_signal or current == signal.SIG_IGN:
            continue
        _handled[signum] = current
        signal.signal(signum, _on_signal)


@contextmanager
def job_directory(kind: str = "sandbox") -> Iterator[Path]:
    """Yield a fresh private directory for one job; it is removed afterwards, or when a signal ends the run."""
    install_signal_handlers()
    path = str(make_owned_temp_dir(kind))
    with _live_lock:
        _live_dirs.add(path)
    try:
        yield Path(path)
    finally:
        with _live_lock:
            _live_dirs.discard(path)
        remove_tree(path)


def output_of(
    tool: str, options: list[str], operands: list[str], tree: Path, *, confined: bool, seconds: float = 30.0
) -> str | None:
    """Return the standard output (at most 64 KiB) of a short query such as kpsewhich, or None when it failed."""
    limits = Limits()
    argv, env, run_cwd = command(tool, options, operands, tree, tree, limits, confined, None)
    try:
        done = subprocess.run(
            argv, cwd=run_cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=seconds,
            start_new_session=True, preexec_fn=preexec(limits),
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout[: 64 * 1024].decode("utf-8", "replace")


def run(
    tool: str,
    options: list[str],
    operands: list[str],
    tree: Path,
    *,
    cwd: Path | None = None,
    deadline: float,
    limits: Limits | None = None,
    confined: bool = True,
    extra_env: dict[str, str] | None = None,
    fonts: FontDirs | None = None,
    cancel: threading.Event | None = None,
) -> Outcome:
    """Return how `tool options operands` ended, run in `cwd` (below `tree`), `tree` its only writable place.

    `options` are the caller's own fixed flags; `operands` come from the
    manuscript and are refused when a tool could read one as an option.

    Confined: inside bubblewrap, `tree` mounted at `TREE`. Not confined (a
    trusted run, or where the caller decided so): the same environment and
    limits, in the real directory. The whole process tree is killed at
    `deadline` (a `time.monotonic()` value), when it writes more than
    `limits.disk_bytes` into `tree` (and the job's font directory, `fonts.var`),
    or when `cancel` is set (the caller no longer needs the answer: `Outcome.over_limit` is then "cancel").
    """
    limits = limits or Limits()
    install_signal_handlers()
    job = _spawn(lambda info, status: command(tool, options, operands, tree, cwd or tree, limits, confined, extra_env,
                                              info, fonts, status), limits, confined)  # fmt: skip
    writable = [tree, fonts.var] if confined and fonts is not None else [tree]
    why = _supervise(job, deadline, limits, writable, cancel)
    return _outcome(job, why, confined)


@dataclass
class _Job:
    """A started sandbox: the process, the reader of its stderr and the pipe of bwrap's exit status (confined)."""

    proc: subprocess.Popen[bytes]
    stderr: _Drain
    status_read: int  # -1 when not confined
    info_read: int  # where bwrap reports its sandbox's init (-1 when not confined)


def _spawn(build: Callable[[int | None, int | None], tuple[list[str], dict[str, str], str]], limits: Limits,
           confined: bool) -> _Job:  # fmt: skip
    """Start what `build(info_fd, status_fd)` returns (`sandboxcmd.command`), register it as live and return it."""
    info_read, info_write = os.pipe() if confined else (-1, -1)
    status_read, status_write = os.pipe() if confined else (-1, -1)
    try:
        argv, env, run_cwd = build(info_write if confined else None, status_write if confined else None)
    except BaseException:
        if confined:
            for fd in (info_read, info_write, status_read, status_write):
                os.close(fd)
        raise
    try:
        proc = subprocess.Popen(
            argv, cwd=run_cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, start_new_session=True, preexec_fn=preexec(limits),
            pass_fds=(info_write, status_write) if confined else (),
        )  # fmt: skip
    except BaseException:
        if confined:
            os.close(info_read)
            os.close(status_read)
        raise
    finally:
        if confined:
            os.close(info_write)
            os.close(status_write)
    job = _Job(proc, _Drain(proc.stderr), status_read, info_read)
    with _live_lock:
        _live_procs.add(proc)
    return job


def _supervise(job: _Job, deadline: float, limits: Limits, writable: list[Path], cancel: threading.Event | None) -> str:
    """Wait for the job to end; return why we killed it ("timeout", "disk", "cancel") or "" when it ended itself."""
    proc = job.proc
    stopped = {"why": ""}

    def kill(why: str) -> None:
        stopped["why"] = stopped["why"] or why
        _kill_group(proc)

    # a blocking wait plus a timer: Popen.wait(timeout) polls with sleeps that add up to 20% here
    timer = threading.Timer(max(0.05, deadline - time.monotonic()), kill, args=("timeout",))
    timer.daemon = True
    timer.start()
    if job.info_read >= 0:  # until bwrap reports it (right after it starts), a kill takes bwrap's process group
        _INNER[proc.pid] = _read_child_pid(job.info_read)
    done = threading.Event()

    def over_disk() -> bool:
        return sum(tree_bytes(place, limits.disk_bytes) for place in writable) > limits.disk_bytes

    def watch() -> None:
        ticks = 0
        while not done.wait(0.05 if cancel is not None else 0.2):
            ticks += 1
            if cancel is not None and cancel.is_set():
                kill("cancel")
                return
            if (cancel is None or ticks % 4 == 0) and over_disk():
                kill("disk")
                return

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        proc.wait()
    finally:
        done.set()
        timer.cancel()
        if proc.returncode is None:
            _kill_group(proc)
            proc.wait()
        with _live_lock:
            _live_procs.discard(proc)
        _INNER.pop(proc.pid, None)
    if not stopped["why"] and over_disk():
        stopped["why"] = "disk"
    return stopped["why"]


def _outcome(job: _Job, why: str, confined: bool) -> Outcome:
    """Return how the job ended, from why we stopped it (`_supervise`), its exit status and bwrap's report."""
    errors = job.stderr.text()
    status = _read_status(job.status_read) if confined else b""
    returncode = job.proc.returncode
    signum = 0 if why else _signal_of(returncode, confined)
    not_started = ""
    if confined and not why and not signum and b'"exit-code"' not in status:
        # bwrap reports an exit status only once the sandbox ran the tool: without one, bwrap itself failed
        said = [line for line in errors.splitlines() if line.startswith("bwrap: ")]
        not_started = said[-1].removeprefix("bwrap: ") if said else f"bwrap exited with status {returncode}"
    over = why if why in ("disk", "cancel") else ""
    return Outcome(returncode, why == "timeout", over, signum, not_started, errors)


def _signal_of(returncode: int | None, confined: bool) -> int:
    """Return the signal that ended a tool from its wait status (bwrap passes on 128 + N), else 0."""
    if returncode is None:
        return 0
    if returncode < 0:  # the process we waited for (bwrap, or the unconfined tool) itself
        return -returncode
    if confined and 128 < returncode < 128 + 65:
        return returncode - 128
    return 0


def _read_status(fd: int) -> bytes:
    """Return what bwrap wrote on its status fd (it has exited: the pipe holds all of it)."""
    os.set_blocking(fd, False)
    chunks = []
    try:
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
    except BlockingIOError:
        pass  # a sandboxed process still holds the write end: what is there is all bwrap wrote
    finally:
        os.close(fd)
    return b"".join(chunks)


class _Drain:
    """Reads a child's stderr to its end in a thread, keeping the first 16 KiB (the rest is discarded)."""

    LIMIT = 16 * 1024

    def __init__(self, stream: IO[bytes] | None) -> None:
        self._kept = bytearray()
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream: IO[bytes] | None) -> None:
        if stream is None:
            return
        with stream:
            while chunk := os.read(stream.fileno(), 65536):
                if len(self._kept) < self.LIMIT:
                    self._kept += chunk[: self.LIMIT - len(self._kept)]

    def text(self) -> str:
        """Return what was kept, once the stream ended (at most 5 s after the process did)."""
        self._thread.join(5.0)
        return bytes(self._kept).decode("utf-8", "replace")


def owning_job_directory(path: Path) -> Path | None:
    """Return the live job directory that holds `path` (the sandbox's only writable place), or None."""
    with _live_lock:
        dirs = set(_live_dirs)
    for candidate in (path, *path.parents):
        if str(candidate) in dirs:
            return candidate
    return None
