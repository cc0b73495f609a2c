"""The HEAD invariant: a candidate replaces the file only when every gate passes."""

from __future__ import annotations

import fcntl
import os
import stat
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..edit import DEFAULT_MAX_SPAN, Edit, EditError, apply_edit, check_edit, count_lines, parse_edit
from ..errors import EnvironmentFault, InputError
from ..files import envfaults
from ..files.inputs import Reads, changed_since, read_text, recording_reads, text_digest
from ..files.tempfiles import TEMP_SUFFIX, sweep_dir, temp_file_prefix
from ..model import ERROR, Gate, PatchContext, Violation
from ..snapshot.snapshot import Snapshots


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
    skipped: dict[str, str] = field(default_factory=dict)  # check -> why a gate did not run it (no log declared)

    def to_json(self, root: Path | None = None) -> dict[str, Any]:
        """Return the `apply --json` object (docs/json.md); `root` as in Violation.to_json."""
        return {
            "accepted": self.accepted,
            "stage": self.stage,
            "reason": self.reason,
            "span": list(self.span) if self.span else None,
            "violations": [v.to_json(root) for v in self.violations],
            "skipped": dict(self.skipped),
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


def atomic_write(path: Path, text: str, unchanged: Callable[[], None] | None = None) -> None:
    """Replace `path` by `text` so a crash leaves either the old or the new bytes; raise InputError if it cannot.

    `unchanged` runs right before the rename, the new bytes already on disk beside the file: it raises
    (EnvironmentFault `changed_during_check`) when another writer changed what the candidate was judged on.
    Linux has no compare-and-rename, so a save in the instant between that check and the rename is still lost.
    """
    data = text.encode("utf-8")  # before any file exists: text that cannot be written leaves nothing behind
    try:
        mode = os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        if unchanged is not None:
            unchanged()  # names what went away
        raise InputError(path, "no such file (removed before the commit)") from None
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=temp_file_prefix(path), suffix=TEMP_SUFFIX)
    except OSError as exc:
        fault = envfaults.from_oserror(exc, "writing the temporary copy a commit needs", path.parent)
        if fault is not None:
            raise fault from None
        raise InputError(path.parent, f"cannot hold the temporary copy a commit needs ({exc.strerror})") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        if unchanged is not None:
            unchanged()
        os.replace(tmp, path)
    except BaseException as exc:
        if os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            fault = envfaults.from_oserror(exc, "writing the commit", path)
            if fault is not None:
                raise fault from None
            raise InputError(path, f"cannot be written ({exc.strerror})") from None
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def edit_target(path: Path, tree: Path | None = None, replace_read_only: bool = False) -> Path:
    """Return the file an edit of `path` writes: a symlink's target inside `tree` (default: the link's directory).

    Raise InputError for a link that leaves the tree, a read-only file (unless `replace_read_only`)
    or a directory where the temporary copy of a commit cannot be made.
    """
    real = path.resolve()
    if path.is_symlink():
        tree = (tree or path.parent).resolve()
        if not real.is_relative_to(tree):
            raise InputError(path, f"is a symlink to {real}, outside {tree}; edit that file itself if you mean to")
    read_text(real)  # a clear InputError (missing, not a regular file, too large, not UTF-8) before any lock
    if not os.stat(real).st_mode & stat.S_IWUSR and not replace_read_only:
        raise InputError(
            path,
            "is read-only; make it writable (chmod u+w) or ask to replace it (--replace-read-only)",
            reason="read_only",
        )
    if not os.access(real.parent, os.W_OK | os.X_OK):
        raise InputError(real.parent, "is not writable: a commit writes a temporary copy beside the file")
    return real


def revision_of(text: str) -> str:
    """Return the revision of a file holding `text`: the hex sha256 of its bytes (exactly the file's, `text_digest`)."""
    return text_digest(text).hex()


def try_patch(
    path: Path | str,
    edit: Edit | str,
    gates: Sequence[Gate] = (),
    *,
    max_span: int = DEFAULT_MAX_SPAN,
    context_files: dict[Path, str] | None = None,
    tree: Path | str | None = None,
    replace_read_only: bool = False,
    revision: str | None = None,
) -> PatchResult:
    """Return the outcome of applying `edit` to `path` behind `gates`; the file changes only if accepted.

    A symlink is followed when its target stays inside `tree` (default: the link's directory) and
    the link is kept; a read-only file is refused unless `replace_read_only`. With `revision` (the
    sha256 of the bytes the edit was written against) a file that changed since is refused
    (`stale_revision`, stage None), decided under the lock so no writer slips in between.
    """
    path = Path(path)
    started = time.perf_counter()
    real = edit_target(path, Path(tree) if tree is not None else None, replace_read_only)
    sweep_dir(real.parent)  # copies left by a killed earlier run
    with file_lock(real), recording_reads() as reads:
        head = read_text(real)
        if revision is not None and revision_of(head) != revision.strip().lower():
            message = (
                f"the file changed since revision {revision[:12]} was read (now {revision_of(head)[:12]}); "
                "read the lines again and write the edit against them"
            )
            violation = Violation("stale_revision", str(path), 0, "", message)
            return PatchResult(False, None, "stale_revision", [violation], head, time.perf_counter() - started)
        try:
            if isinstance(edit, str):
                edit = parse_edit(edit, count_lines(head), max_span)
            else:
                check_edit(edit, count_lines(head), max_span)
            candidate = apply_edit(head, edit)
        except EditError as exc:
            violation = Violation(exc.reason, str(path), 0, "", exc.message)
            return PatchResult(False, "parse", exc.reason, [violation], head, time.perf_counter() - started)
        span = (edit.start, edit.end)
        files = dict(context_files or {})
        # HEAD's and the candidate's snapshots, built once by the first gate that asks and shared by the others
        edited = {real: candidate, **{Path(p).resolve(): t for p, t in files.items()}}
        snapshots = Snapshots(head={real: head}, edited=edited)
        context = PatchContext(path=path, head=head, files=files, snapshots=snapshots)
        skipped: dict[str, str] = {}
        warnings: list[Violation] = []  # of the gates that passed: an accepted edit reports them (a dropped decision)
        for gate in gates:
            try:
                result = gate.check(candidate, context)
            except EnvironmentFault as exc:
                exc.stage = exc.stage or gate.stage
                raise
            skipped.update(result.details.get("skipped", {}))
            if not result.ok:
                first = result.violations[0] if result.violations else None
                reason = (
                    f"{first.kind}:{first.token}" if first and first.token else (first.kind if first else gate.stage)
                )
                seconds = time.perf_counter() - started
                return PatchResult(
                    False, gate.stage, reason, list(result.violations), head, seconds, span, edit, skipped
                )
            warnings.extend(v for v in result.violations if v.severity != ERROR)
        if candidate != head:
            atomic_write(real, candidate, lambda: _unchanged(reads, str(real)))
        return PatchResult(True, None, None, warnings, candidate, time.perf_counter() - started, span, edit, skipped)


#: build outputs TeX never reads back: another build writing them beside the paper does not change a verdict
_NOT_READ_BACK = (".log", ".pdf", ".fls", ".fdb_latexmk", ".synctex.gz", ".dvi", ".xdv", ".blg", ".patchwrite-tmp")


def _unchanged(reads: Reads, target: str) -> None:
    """Raise EnvironmentFault `changed_during_check` unless every file the verdict read (the target last, nearest to
    the rename) still has the identity and bytes it was judged on."""
    order = [p for p in reads if p != target and not p.endswith(_NOT_READ_BACK)]
    for path in [*order, target] if target in reads else order:
        identity, digest = reads[path]
        how = changed_since(path, identity, digest)
        if how:
            what = "the file" if path == target else f"{path}, which the verdict read,"
            raise envfaults.changed_during_check(target, f"{what} {how}")
