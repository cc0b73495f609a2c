"""Our exception types: every user or input error names the file, the line when known, and the problem.

The command line maps a `PatchwriteError` to exit 2 with one line, the pytest items show it as a
located failure; anything else is a bug (exit 3).
"""

from __future__ import annotations

from pathlib import Path

from . import shown
from .model import display_path


class PatchwriteError(Exception):
    """A problem the user can fix: `file:line: problem`, with a stable `reason` code."""

    reason = "error"

    def __init__(self, path: Path | str, problem: str, *, line: int | None = None, reason: str | None = None) -> None:
        self.path = str(path)
        self.line = line
        self.problem = problem
        if reason is not None:
            self.reason = reason
        # printed as one line (shown.line): a path or a `% !TEX root` value may come from the manuscript
        super().__init__(shown.line(self.location() + ": " + problem if self.path else problem))

    def location(self) -> str:
        """Return `file:line` (or just `file`) where the problem is."""
        return f"{self.path}:{self.line}" if self.line is not None else self.path

    def format(self, root: Path | None = None) -> str:
        """Return `relpath:line: problem`, the path relative to `root` when it lies below it."""
        path = display_path(self.path, root) if self.path else ""
        where = f"{path}:{self.line}" if self.line is not None else path
        return shown.line(f"{where}: {self.problem}" if where else self.problem)


class InputError(PatchwriteError):
    """A file or option that cannot be used as input; the message names the file and the problem."""

    reason = "bad_input"


class InputTooLarge(InputError):
    """An input larger than its configured cap."""

    reason = "too_large"


class NotRegularFile(InputError):
    """An input that is a FIFO, a device, a socket or a directory, which is never read."""

    reason = "not_a_file"


class UsageError(InputError):
    """A command-line option outside its allowed values."""

    reason = "usage"


class EnvironmentFault(PatchwriteError):
    """The machine, not the manuscript: a full disk, a killed engine, a sandbox that could not start.

    Never a verdict and never cached: the command line exits 2 with `place: cause; remedy`, a pytest
    item errors (E, not F), JSON adds `"error": {"reason", "cause", "remedy"}`. `reason` is one of
    `disk_full`, `quota_exceeded`, `out_of_memory`, `read_only`, `io_error`, `engine_killed`,
    `job_dir_vanished`, `sandbox_failed`, `changed_during_check`.
    """

    reason = "environment"

    def __init__(self, place: Path | str, cause: str, remedy: str, *, reason: str, stage: str | None = None) -> None:
        super().__init__(place, f"{cause}; {remedy}", reason=reason)
        self.cause = cause
        self.remedy = remedy
        self.stage = stage  # the stage of a transaction it stopped (set by try_patch)

    def __reduce__(self) -> tuple[object, ...]:  # crosses process pools (the stress harness) whole
        return (_rebuild_fault, (self.path, self.cause, self.remedy, self.reason, self.stage))

    def to_json(self) -> dict[str, str]:
        """Return the `error` object of the JSON output: reason, cause (naming the place) and remedy."""
        cause = f"{self.path}: {self.cause}" if self.path else self.cause
        return {"reason": self.reason, "cause": cause, "remedy": self.remedy}


def _rebuild_fault(path: str, cause: str, remedy: str, reason: str, stage: str | None) -> EnvironmentFault:
    return EnvironmentFault(path, cause, remedy, reason=reason, stage=stage)
