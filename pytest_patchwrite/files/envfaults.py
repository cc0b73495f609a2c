"""Environment faults: when the machine, not the manuscript, stopped a check (see `errors.EnvironmentFault`).

Each is decided on evidence a manuscript cannot forge: an errno from our own file
operations, `statvfs` of the job directory's filesystem, the wait status of a tool we
started (a signal we did not send), bubblewrap's own status report, a job directory
that is gone. What the engine's log says is never enough on its own: a manuscript can
print `No space left on device`.
"""

from __future__ import annotations

import errno
import os
import signal
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from ..errors import EnvironmentFault

#: our own file operations that fail with these errnos are the machine's fault, never the manuscript's
ERRNO_REASONS = {
    errno.ENOSPC: "disk_full",
    errno.EDQUOT: "quota_exceeded",
    errno.ENOMEM: "out_of_memory",
    errno.EROFS: "read_only",
    errno.EIO: "io_error",
}
#: a filesystem with less room than this (or no free inode) counts as full when a write failed on it
FULL_BYTES = 8 << 20
T = TypeVar("T")
MEMORY_REMEDY = "free memory on this machine (or raise this process's address-space limit, `ulimit -v`) and run again"


def _under_tmpdir(path: Path | str) -> bool:
    try:
        return Path(path).resolve().is_relative_to(Path(tempfile.gettempdir()).resolve())
    except (OSError, RuntimeError):
        return False


def free_bytes(path: Path | str) -> int | None:
    """Return the bytes this process may still write on the filesystem holding `path` (0 without free inodes)."""
    try:
        info = os.statvfs(path)
    except OSError:
        return None
    if info.f_files and not (info.f_ffree if os.geteuid() == 0 else info.f_favail):
        return 0
    blocks = info.f_bfree if os.geteuid() == 0 else info.f_bavail  # root may use the reserved blocks
    return blocks * info.f_frsize


def is_full(path: Path | str) -> bool:
    """Return whether the filesystem holding `path` (or its nearest existing parent) is (nearly) full."""
    place = Path(path)
    while not place.exists() and place != place.parent:
        place = place.parent
    free = free_bytes(place)
    return free is not None and free < FULL_BYTES


def _room_remedy(place: Path | str) -> str:
    if _under_tmpdir(place):
        return (
            f"free space in {tempfile.gettempdir()} or point TMPDIR at a filesystem with room "
            "(a compile may write up to PATCHWRITE_SANDBOX_DISK_MB, default 2048 MB)"
        )
    return "free space on that filesystem and run again"


def _remedy(reason: str, place: Path | str) -> str:
    if reason in ("disk_full", "quota_exceeded"):
        return _room_remedy(place)
    if reason == "out_of_memory":
        return MEMORY_REMEDY
    if reason == "read_only":
        return "it is on a read-only filesystem: run where it can be written (TMPDIR for the sandboxes)"
    return "the device reported an I/O error: check the disk (dmesg) and run again"


def _shown_free(place: Path | str) -> str:
    free = free_bytes(place)
    return "" if free is None else f" ({free >> 10} KiB free)"


def from_oserror(exc: BaseException, what: str, place: Path | str | None = None) -> EnvironmentFault | None:
    """Return the environment fault an OSError of our own file operation `what` stands for, else None."""
    if isinstance(exc, MemoryError):
        return EnvironmentFault(place or "", f"{what}: out of memory", MEMORY_REMEDY, reason="out_of_memory")
    if not isinstance(exc, OSError) or exc.errno not in ERRNO_REASONS:
        return None
    reason = ERRNO_REASONS[exc.errno]
    where = exc.filename if exc.filename is not None else place
    where = where if where is not None else tempfile.gettempdir()
    cause = f"{what} failed: {exc.strerror}"
    if reason in ("disk_full", "quota_exceeded") and where:
        cause += _shown_free(Path(str(where)).parent if not Path(str(where)).exists() else where)
    return EnvironmentFault(str(where), cause, _remedy(reason, str(where)), reason=reason)


@contextmanager
def translated(what: str, place: Path | str | None = None) -> Iterator[None]:
    """Turn an OSError with an environment errno (or a MemoryError) raised inside into an EnvironmentFault."""
    try:
        yield
    except (OSError, MemoryError) as exc:
        fault = from_oserror(exc, what, place)
        if fault is None:
            raise
        raise fault from None


def disk_full(place: Path | str, what: str) -> EnvironmentFault:
    """Return the fault of a tool whose write failed on the full filesystem holding `place`."""
    return EnvironmentFault(place, f"{what}: the filesystem is full{_shown_free(place)}", _room_remedy(place),
                            reason="disk_full")  # fmt: skip


def signal_name(signum: int) -> str:
    """Return `SIGKILL` for 9 (the number itself when Python does not know it)."""
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def oom_kills() -> int | None:
    """Return the kernel's count of out-of-memory kills (`/proc/vmstat` oom_kill), None where it is not kept."""
    try:
        with open("/proc/vmstat", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("oom_kill "):
                    return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


def engine_killed(tool: str, signum: int, place: Path | str, oom: bool = False) -> EnvironmentFault:
    """Return the fault of a tool ended by a signal patchwrite did not send (the OOM killer, another process)."""
    who = "the kernel's out-of-memory killer" if oom else "a signal patchwrite did not send"
    cause = f"{tool} was killed by {signal_name(signum)} ({who}); no verdict was reached and nothing was cached"
    remedy = MEMORY_REMEDY if oom or signum == signal.SIGKILL else "find what signals processes on this machine"
    return EnvironmentFault(place, cause, remedy, reason="engine_killed")


def sandbox_failed(tool: str, message: str) -> EnvironmentFault:
    """Return the fault of a bubblewrap sandbox that could not start `tool` (`message`: bwrap's own words)."""
    cause = f"the sandbox for {tool} could not start ({message or 'bwrap reported no exit status'})"
    remedy = "fix what bwrap names (user namespaces, the mounts it needs) and run again"
    return EnvironmentFault("bwrap", cause, remedy, reason="sandbox_failed")


def vanished(place: Path | str) -> EnvironmentFault:
    """Return the fault of a job directory removed while its tool ran (a temp-dir cleaner, another user)."""
    cause = "the compile's job directory disappeared while the engine ran"
    remedy = "keep cleaners (systemd-tmpfiles, tmpreaper) away from TMPDIR during runs, or point TMPDIR elsewhere"
    return EnvironmentFault(place, cause, remedy, reason="job_dir_vanished")


def changed_during_check(path: Path | str, what: str, stage: str | None = None) -> EnvironmentFault:
    """Return the refusal of a commit whose inputs another writer changed while the candidate was checked."""
    cause = f"{what} while the candidate was checked; nothing was written and the other writer's bytes are kept"
    return EnvironmentFault(path, cause, "apply the edit again to the file as it is now", reason="changed_during_check",
                            stage=stage)  # fmt: skip


def shown_size(path: Path | str) -> str:
    """Return a file's size for a message (`12.3 MB`), or `unknown size`."""
    try:
        return f"{os.stat(path).st_size / (1 << 20):.1f} MB"
    except OSError:
        return "unknown size"


def out_of_memory(path: Path | str, what: str) -> EnvironmentFault:
    """Return the fault of reading a file that did not fit in memory, naming the file and its size."""
    return EnvironmentFault(path, f"reading {what} ({shown_size(path)}) ran out of memory", MEMORY_REMEDY,
                            reason="out_of_memory")  # fmt: skip


def retry_once(run: Callable[[], T]) -> T:
    """Return `run()`; after an EnvironmentFault run it once more, and let a second one propagate (exit 2).

    For the corpus harnesses: a machine's hiccup gets one more chance, and never becomes a cell of a table.
    """
    try:
        return run()
    except EnvironmentFault:
        return run()
