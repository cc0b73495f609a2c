"""Copying a manuscript's tree into the sandbox so that no other process can race it.

Another process on the runner may swap a file of the tree for a symlink to an outside file
between any check and the copy. So nothing here trusts a path that was checked earlier: the
walk opens the tree's top once, then every directory and file relative to its parent's
descriptor (`openat`) with `O_NOFOLLOW`, and decides on the opened file's own `fstat` (a
directory, or a regular file with one link). A symlink is resolved by hand, one component at a
time from the top's descriptor, and refused as soon as it would leave the tree or pass a dot-file.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from collections.abc import Callable
from pathlib import Path

from .inputs import note_read

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0)
MAX_LINKS = 40  # as the kernel's own limit on symlinks in one resolution


class CopyCap(Exception):
    """The tree holds more bytes or files than the copy may take."""


def _is_link(name: str, dir_fd: int) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(name, dir_fd=dir_fd).st_mode)
    except OSError:
        return False


def _open_beneath(top_fd: int, top: str, relative: str) -> tuple[int, str] | None:
    """Return (fd, real path relative to the top) of a regular file reached from `top_fd`, or None.

    Every component is opened with `O_NOFOLLOW`; a symlink met on the way is read and its target
    walked the same way (an absolute target only when it lies inside `top`). `..` above the top,
    a dot-component, a loop or a non-regular file gives None.
    """
    parts = [p for p in relative.split("/") if p not in ("", ".")]
    stack: list[tuple[int, str]] = []  # (fd, name) of the directories below the top
    links = 0
    try:
        while parts:
            part = parts.pop(0)
            here = stack[-1][0] if stack else top_fd
            if part == "..":
                if not stack:
                    return None
                os.close(stack.pop()[0])
                continue
            if part.startswith("."):
                return None
            try:
                fd = os.open(part, _DIR_FLAGS if parts else _FILE_FLAGS, dir_fd=here)
            except OSError as exc:
                if exc.errno not in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK) or not _is_link(part, here):
                    return None
                links += 1
                if links > MAX_LINKS:
                    return None
                try:
                    target = os.readlink(part, dir_fd=here)
                except OSError:
                    return None  # swapped again, or gone
                if os.path.isabs(target):
                    inside = os.path.relpath(target, top)
                    if inside == ".." or inside.startswith("../"):
                        return None
                    for fd_name in stack:
                        os.close(fd_name[0])
                    stack = []
                    target = inside
                parts = [p for p in target.split("/") if p not in ("", ".")] + parts
                continue
            if parts:
                stack.append((fd, part))
                continue
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
                os.close(fd)
                return None
            return fd, "/".join([name for _fd, name in stack] + [part])
        return None
    finally:
        for fd, _name in stack:
            os.close(fd)


def _copy_fd(fd: int, target: Path) -> tuple[bytes, int]:
    """Copy an open file into `target`; return (sha256 of its bytes, their count). Closes `fd`."""
    digest = hashlib.sha256()
    size = 0
    with os.fdopen(fd, "rb") as src, open(target, "wb") as dst:
        while chunk := src.read(1 << 20):
            digest.update(chunk)
            dst.write(chunk)
            size += len(chunk)
    return digest.digest(), size


def copy_tree(
    src: Path,
    dst: Path,
    *,
    keep: Callable[[str, bool], bool],
    max_bytes: int,
    max_files: int,
    held: dict[str, tuple[bytes, bytes | None]] | None = None,
    capture: Callable[[str, int], bool] | None = None,
    captured: dict[str, bytes] | None = None,
) -> dict[str, bytes]:
    """Copy the tree at `src` into `dst`; return {relpath: sha256} of every copied file (POSIX relpaths).

    `keep(relpath, is_dir)` decides which entries count (dot-files never do); a symlink is copied as
    the file it names when that file lies in the tree, one regular file with one link. Raise CopyCap
    past `max_bytes` or `max_files`. `held`: {relpath: (bytes, sha256 or None)} of files already read
    (a snapshot's texts): written from there, never opened again. `capture(relpath, size)`: which copied
    files' bytes to keep in `captured` (by real relpath), so the gates that read them later need not.
    """
    top = os.path.realpath(src)
    top_fd = os.open(top, _DIR_FLAGS)
    copied: dict[str, bytes] = {}
    total = 0
    pending: list[tuple[int, str]] = [(os.dup(top_fd), "")]
    try:
        while pending:
            dir_fd, rel_dir = pending.pop()
            try:
                with os.scandir(dir_fd) as listing:
                    entries = sorted((e.name, e.is_dir(follow_symlinks=False), e.is_symlink()) for e in listing)
                for name, is_dir, is_link in entries:
                    rel = f"{rel_dir}{name}"
                    if name.startswith(".") or not keep(rel, is_dir):
                        continue
                    if is_dir:
                        try:
                            sub = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
                        except OSError:
                            continue  # swapped for a symlink, or gone: never followed
                        pending.append((sub, f"{rel}/"))
                        continue
                    if held and not is_link and rel in held:
                        data, known = held[rel]
                        total += len(data)
                        if total > max_bytes or len(copied) >= max_files:
                            raise CopyCap(f"more than {max_bytes >> 20} MB or {max_files} files")
                        target = dst / rel
                        target.parent.mkdir(parents=True, exist_ok=True)
                        target.write_bytes(data)
                        copied[rel] = known or hashlib.sha256(data).digest()
                        continue
                    opened = _open_beneath(top_fd, top, rel) if is_link else _open_file(name, dir_fd, rel)
                    if opened is None:
                        continue
                    fd, real_rel = opened
                    size = os.fstat(fd).st_size
                    total += size
                    if total > max_bytes or len(copied) >= max_files:
                        os.close(fd)
                        raise CopyCap(f"more than {max_bytes >> 20} MB or {max_files} files")
                    target = dst / rel
                    target.parent.mkdir(parents=True, exist_ok=True)
                    info = os.fstat(fd)
                    if captured is not None and capture is not None and capture(real_rel, size):
                        with os.fdopen(fd, "rb") as handle:
                            data = handle.read()
                        target.write_bytes(data)
                        digest = hashlib.sha256(data).digest()
                        captured[real_rel] = data
                    else:
                        digest, _size = _copy_fd(fd, target)
                    note_read(os.path.join(top, real_rel), info, digest=digest)  # a commit compares it before its swap
                    copied[rel] = digest
            finally:
                os.close(dir_fd)
    finally:
        os.close(top_fd)
        for fd, _rel in pending:
            os.close(fd)
    return copied


def copy_beneath(top: Path, relative: str, target: Path) -> bytes | None:
    """Copy the regular file `relative` below `top` into `target`, walking from the top's descriptor as the tree
    copy does (no link out of the top, one link, no dot-component); return its sha256, or None when refused."""
    top_fd = os.open(top, _DIR_FLAGS)
    try:
        opened = _open_beneath(top_fd, str(top), relative)
    finally:
        os.close(top_fd)
    if opened is None:
        return None
    fd, real_rel = opened
    info = os.fstat(fd)
    digest, _size = _copy_fd(fd, target)
    note_read(os.path.join(top, real_rel), info, digest=digest)  # a commit compares it before its swap
    return digest


def _open_file(name: str, dir_fd: int, rel: str) -> tuple[int, str] | None:
    """Return (fd, `rel`) of a regular file with one link named `name` in `dir_fd`, never following a link."""
    try:
        fd = os.open(name, _FILE_FLAGS, dir_fd=dir_fd)
    except OSError:
        return None  # swapped for a symlink (ELOOP), a FIFO that would block, gone
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
        os.close(fd)
        return None
    return fd, rel
