"""A git revision's tree of a paper, taken with `git archive` into a directory of ours, within the copy cap."""

from __future__ import annotations

import subprocess
import tarfile
from pathlib import Path

from ..errors import InputError, InputTooLarge
from ..files.manuscriptcopy import MAX_COPY_BYTES, MAX_COPY_FILES

GIT_SECONDS = 120.0


def _size_of(top: Path, rev: str, subdir: str) -> tuple[int, int]:
    """Return (bytes, files) of the blobs below `subdir` at `rev`, from `git ls-tree` (nothing is extracted)."""
    done = subprocess.run(
        ["git", "ls-tree", "-r", "-l", "-z", rev, "--", subdir or "."],
        cwd=top, capture_output=True, timeout=GIT_SECONDS,
    )  # fmt: skip
    if done.returncode != 0:
        raise InputError(rev, "git ls-tree cannot list the base revision's tree")
    total = files = 0
    for entry in done.stdout.split(b"\0"):
        meta = entry.split(b"\t", 1)[0].split()
        if len(meta) == 4 and meta[1] == b"blob" and meta[3].isdigit():
            total, files = total + int(meta[3]), files + 1
    return total, files


def archive(top: Path, rev: str, subdir: str, dest: Path) -> Path:
    """Extract `subdir` (POSIX, relative to the repository `top`; "" for all of it) at `rev` into `dest`; return
    the directory of `subdir` there. Raise InputTooLarge past the sandbox copy's cap, InputError when git fails."""
    total, files = _size_of(top, rev, subdir)
    if total > MAX_COPY_BYTES or files > MAX_COPY_FILES:
        raise InputTooLarge(
            f"{rev}:{subdir or '.'}",
            f"the base tree holds more than {MAX_COPY_BYTES >> 20} MB or {MAX_COPY_FILES} files; the copy is capped",
        )
    proc = subprocess.Popen(
        ["git", "archive", "--format=tar", rev, "--", subdir or "."],
        cwd=top, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        with tarfile.open(fileobj=proc.stdout, mode="r|") as tar:
            seen = size = 0
            for member in tar:
                seen, size = seen + 1, size + member.size
                if seen > MAX_COPY_FILES or size > MAX_COPY_BYTES:  # the listing above already said no more
                    raise InputTooLarge(f"{rev}:{subdir or '.'}", "the base tree grew past the copy cap")
                # the `data` filter refuses absolute names, `..`, links leaving `dest`, devices
                tar.extract(member, dest, filter="data")
    except (tarfile.TarError, OSError) as exc:
        raise InputError(f"{rev}:{subdir or '.'}", f"git archive of the base revision failed ({exc})") from None
    finally:
        if proc.stdout is not None:
            proc.stdout.close()
        try:
            proc.wait(timeout=GIT_SECONDS)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    if proc.returncode != 0:
        raise InputError(rev, f"git archive of the base revision failed (exit {proc.returncode})")
    return dest / subdir if subdir else dest
