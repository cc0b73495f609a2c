"""Temporary files and directories that name their owner's PID, and the sweep that removes orphans.

A process killed with SIGKILL runs no cleanup, so every temporary name carries the PID of the
process that made it; a later run removes the names whose process is gone.

- beside a manuscript: `.<name>.<pid>.<random>.patchwrite-tmp` (the atomic write's copy);
- in the per-user temp root `$TMPDIR/patchwrite-<uid>/`: `<kind>-<pid>-<random>` directories
  (compile sandboxes, session directories).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import tempfile
import time
from pathlib import Path

TEMP_SUFFIX = ".patchwrite-tmp"
#: a temp file of an older version carries no PID; one this old is surely abandoned
LEGACY_AGE_SECONDS = 3600.0

_OWNED_FILE = re.compile(r"^\..+\.(?P<pid>\d+)\.[A-Za-z0-9_]+" + re.escape(TEMP_SUFFIX) + "$")
_LEGACY_FILE = re.compile(r"^\..+\.[A-Za-z0-9_]{8}" + re.escape(TEMP_SUFFIX) + "$")
_OWNED_DIR = re.compile(r"^[a-z]+-(?P<pid>\d+)-[A-Za-z0-9_]+$")
_swept_root = False


def pid_alive(pid: int) -> bool:
    """Return whether a process with this PID exists and is not a zombie (one we may not signal counts as alive)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return not _zombie(pid)
    except OverflowError:
        return False
    return not _zombie(pid)


def _zombie(pid: int) -> bool:
    """Return whether `pid` has exited and only waits to be reaped (state Z or X): it cleans nothing up any more."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat_line = handle.read()
    except OSError:
        return False  # no /proc (or it went away): the signal said it exists
    state = stat_line.rpartition(b")")[2].split()[:1]  # the command name in (...) may hold spaces
    return state in ([b"Z"], [b"X"])


def temp_file_prefix(path: Path) -> str:
    """Return the mkstemp prefix for a temporary copy of `path` that names this process."""
    return f".{path.name}.{os.getpid()}."


def _is_orphan_file(entry: os.DirEntry[str], now: float) -> bool:
    match = _OWNED_FILE.match(entry.name)
    try:
        info = entry.stat(follow_symlinks=False)
    except OSError:
        return False
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
        return False
    if match:
        return not pid_alive(int(match.group("pid")))
    # a future mtime (a clock that jumped back, a copied tree) counts as old: it would otherwise never be removed
    age = now - info.st_mtime
    return bool(_LEGACY_FILE.match(entry.name)) and (age > LEGACY_AGE_SECONDS or age < -60)


def sweep_dir(directory: Path) -> list[Path]:
    """Remove the stale `*.patchwrite-tmp` files of dead processes in `directory`; return what went."""
    removed: list[Path] = []
    now = time.time()
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed
    for entry in entries:
        if entry.name.endswith(TEMP_SUFFIX) and _is_orphan_file(entry, now):
            try:
                os.unlink(entry.path)
            except OSError:
                continue
            removed.append(Path(entry.path))
    return removed


def sweep_tree(top: Path) -> list[Path]:
    """Remove the stale temp files of dead processes in `top` and below (symlinks not followed)."""
    removed: list[Path] = []
    for current, dirs, _files in os.walk(top, followlinks=False):
        dirs.sort()
        removed.extend(sweep_dir(Path(current)))
    return removed


def _private_root() -> Path:
    root = Path(tempfile.gettempdir(), f"patchwrite-{os.getuid()}")
    try:
        root.mkdir(mode=0o700)
    except FileExistsError:
        pass
    info = os.lstat(root)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        # someone else planted this name in a shared /tmp: never use it
        return Path(tempfile.mkdtemp(prefix=f"patchwrite-{os.getuid()}-"))
    if stat.S_IMODE(info.st_mode) != 0o700:
        os.chmod(root, 0o700)
    return root


def temp_root() -> Path:
    """Return `$TMPDIR/patchwrite-<uid>/`, private to this user; stale entries are swept on first use."""
    global _swept_root
    root = _private_root()
    if not _swept_root:
        _swept_root = True
        sweep_temp_root(root)
    return root


def remove_tree(path: Path | str) -> None:
    """Remove a directory tree we made, even where a sandboxed run left it read-only."""
    for current, dirs, _files in os.walk(path, followlinks=False):
        for name in dirs:
            child = os.path.join(current, name)
            if not os.path.islink(child):
                try:
                    os.chmod(child, 0o700)
                except OSError:
                    pass
    shutil.rmtree(path, ignore_errors=True)


def sweep_temp_root(root: Path | None = None) -> list[Path]:
    """Remove the `<kind>-<pid>-*` directories in the temp root whose process is gone; return what went."""
    root = _private_root() if root is None else root
    removed: list[Path] = []
    try:
        entries = list(os.scandir(root))
    except OSError:
        return removed
    for entry in entries:
        match = _OWNED_DIR.match(entry.name)
        if not match or pid_alive(int(match.group("pid"))):
            continue
        if entry.is_dir(follow_symlinks=False):
            remove_tree(entry.path)
        else:
            try:
                os.unlink(entry.path)
            except OSError:
                pass
        if not os.path.lexists(entry.path):
            removed.append(Path(entry.path))
    return removed


def owned_temp_dir(kind: str) -> tempfile.TemporaryDirectory[str]:
    """Return a TemporaryDirectory `<kind>-<pid>-*` in the temp root, removed on exit or by a later sweep."""
    return tempfile.TemporaryDirectory(prefix=f"{kind}-{os.getpid()}-", dir=temp_root())


def make_owned_temp_dir(kind: str) -> Path:
    """Return a new directory `<kind>-<pid>-*` in the temp root; the caller removes it (or a later sweep does)."""
    return Path(tempfile.mkdtemp(prefix=f"{kind}-{os.getpid()}-", dir=temp_root()))


def write_json(path: Path, data: object) -> bool:
    """Write `data` as JSON to `path` through a temp file that names this process; return False when it cannot."""
    return not write_json_failure(path, data)


def write_json_failure(path: Path, data: object) -> str:
    """`write_json`, returning "" when written, else why not in the system's words (`Read-only file system`)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=temp_file_prefix(path), suffix=TEMP_SUFFIX)
        try:
            with os.fdopen(fd, "w") as handle:
                json.dump(data, handle)
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
    except OSError as exc:
        return exc.strerror or str(exc)
    return ""
