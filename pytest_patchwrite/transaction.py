"""The HEAD invariant: a candidate replaces the file only when every gate passes."""

from __future__ import annotations

import fcntl
import os
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .edit import DEFAULT_MAX_SPAN, Edit, EditError, apply_edit, count_lines, parse_edit
from .errors import InputError as InputError  # re-exported: the historical import place
from .inputs import read_text
from .model import Gate, PatchContext, Violation
from .tempfiles import TEMP_SUFFIX, sweep_dir, temp_file_prefix


@dataclass
class PatchResult:
    """What `try_patch` did: accepted or the stage and reason it was rejected at."""

    accepted: bool
    stage: str | None
    reason: str | None
    violations: list[Violation] = field(default_factory=list)
    text: str = ""
    seconds: float = 0.0
    span: tuple[int, int] | None = None
    edit: Edit | None = None

    def to_json(self) -> dict[str, Any]:
        """Return the `apply --json` object (README, "JSON output")."""
        return {
            "accepted": self.accepted,
            "stage": self.stage,
            "reason": self.reason,
            "span": list(self.span) if self.span else None,
            "violations": [v.to_json() for v in self.violations],
        }


@contextmanager
def file_lock(path: Path) -> Iterator[int]:
    """Hold an exclusive lock on the current inode of `path` (re-taken if it was replaced)."""
    while True:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            # a writer that held the lock may have replaced the file: lock the new inode instead
            if os.fstat(fd).st_ino == os.stat(path).st_ino:
                break
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
    try:
        yield fd
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def atomic_write(path: Path, text: str) -> None:
    """Replace `path` by `text` so a crash leaves either the old or the new bytes."""
    mode = os.stat(path).st_mode & 0o7777
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=temp_file_prefix(path), suffix=TEMP_SUFFIX)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def try_patch(
    path: Path | str,
    edit: Edit | str,
    gates: Sequence[Gate] = (),
    *,
    max_span: int = DEFAULT_MAX_SPAN,
    context_files: dict[Path, str] | None = None,
) -> PatchResult:
    """Return the outcome of applying `edit` to `path` behind `gates`; the file changes only if accepted."""
    path = Path(path)
    started = time.perf_counter()
    read_text(path)  # a clear InputError before any lock is taken
    sweep_dir(path.parent)  # copies left by a killed earlier run
    with file_lock(path):
        head = read_text(path)
        try:
            if isinstance(edit, str):
                edit = parse_edit(edit, count_lines(head), max_span)
            elif edit.span > max_span:
                raise EditError(
                    "span_too_long", f"{edit.verb} {edit.start} {edit.end} spans more than {max_span} lines"
                )
            candidate = apply_edit(head, edit)
        except EditError as exc:
            violation = Violation(exc.reason, str(path), 0, "", exc.message)
            return PatchResult(False, "parse", exc.reason, [violation], head, time.perf_counter() - started)
        span = (edit.start, edit.end)
        context = PatchContext(path=path, head=head, files=dict(context_files or {}))
        for gate in gates:
            result = gate.check(candidate, context)
            if not result.ok:
                first = result.violations[0] if result.violations else None
                reason = (
                    f"{first.kind}:{first.token}" if first and first.token else (first.kind if first else gate.stage)
                )
                return PatchResult(
                    False, gate.stage, reason, list(result.violations), head, time.perf_counter() - started, span, edit
                )
        if candidate != head:
            atomic_write(path, candidate)
        return PatchResult(True, None, None, [], candidate, time.perf_counter() - started, span, edit)
