"""The shapes every gate speaks: violations, gate results and the gate protocol."""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from . import shown
from .kinds import PAGE, help_for


def display_path(file: str | os.PathLike[str], root: Path | None = None) -> str:
    """Return `file` relative to `root` when it lies below it, else as given: where a file is, for a person (every
    face prints paths so; pass `Path.cwd()` for the working directory; a path a message names, `Violation.paths`,
    is shown so too). A path far outside reads better absolute."""
    if root is None or not os.path.isabs(file):  # a relative name is shown as given (an address: `tcp://host:1`)
        return os.fspath(file)
    if Path(file).is_relative_to(root):  # lexically below: as the user wrote it (`paper/../refs.bib`: `../refs.bib`)
        return Path(file).relative_to(root).as_posix()
    try:
        relative = os.path.relpath(file, root)
    except ValueError:
        return os.fspath(file)
    return os.fspath(file) if relative.startswith("..") else Path(relative).as_posix()


def show_paths(text: str, paths: tuple[str, ...] | list[str], root: Path | None) -> str:
    """Return `text` with each absolute path it names shown as files are (`display_path` against `root`): the
    commands a message or a note gives then work pasted where it is printed."""
    for path in sorted(set(paths), key=len, reverse=True):
        text = text.replace(path, display_path(path, root))
    return text


def relative_name(path: str | os.PathLike[str], base: Path) -> str:
    """Return `path` named from `base` (the paper's directory) as the bindings file, a magic comment and the
    messages about logs spell it: always relative, `../results/run.json` above it, POSIX."""
    return Path(os.path.relpath(path, base)).as_posix()


ERROR, WARNING = "error", "warning"
SEVERITIES = (ERROR, WARNING)


class PatchwriteWarning(UserWarning):
    """A violation of severity `warning`, reported through Python's warnings (`-W error::...` makes it fail)."""


@dataclass(frozen=True)
class Violation:
    """One located problem: `file:line: kind token message`; a `warning` fails only under strict checking."""

    kind: str
    file: str
    line: int
    token: str
    message: str
    severity: str = ERROR
    #: absolute paths the message names (the root in the command that settles it, a FILE:LINE:TOKEN place): shown
    #: relative to the same base as `file` when printed, so a pasted command works wherever the face runs
    paths: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "paths", tuple(self.paths))  # a JSON round trip (the verdict cache) gives a list

    def shown_message(self, root: Path | None = None) -> str:
        """Return the message with each path it names shown as `file` is (`display_path` against `root`)."""
        return show_paths(self.message, self.paths, root)

    def format(self, root: Path | None = None) -> str:
        """Return the violation as an editor-clickable `relpath:line: [warning: ]kind token message` line.

        What came from the manuscript (file, token, message) is escaped (`shown.line`): one line, never a
        workflow command.
        """
        file = display_path(self.file, root) if self.file else ""
        head = f"{file}:{self.line}: " if file else ""
        if self.severity == WARNING:
            head += "warning: "
        token = f" {self.token}" if self.token else ""
        return shown.line(f"{head}{self.kind}{token} {self.shown_message(root)}".rstrip())

    def to_json(self, root: Path | None = None) -> dict[str, Any]:
        """Return the violation as the JSON object of `apply --json` and `check --json` (docs/json.md).

        `root`: show `file` (and the paths the message names) relative to it when below it, as the terminal does.
        """
        data = asdict(self)
        del data["paths"]  # in the message, shown as `file` is
        data["message"] = self.shown_message(root)
        if root is not None and self.file:
            data["file"] = display_path(self.file, root)
        data["help"] = help_for(self.kind) or PAGE
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Violation:
        """Return the violation a `to_json` object describes (fields added later, such as `help`, are ignored)."""
        return cls(**{name: data[name] for name in cls.__dataclass_fields__ if name in data})


#: violations printed per kind and gate in terminal output; --json and the pytest report keep them all
MAX_PRINTED = 50
#: kinds printed before the rest: a reviewed decision that no longer holds matters first
FIRST_KINDS = ("binding_mismatch",)


def first_things_first(violations: list[Violation], changed: Collection[tuple[str, int]] = ()) -> list[Violation]:
    """Return the violations, the ones that matter first: `binding_mismatch`, then those on a line an edit or pull
    request changed (`changed`: (file, line) pairs), then the rest, each rank in the gate's order. Every face that
    caps a list (the terminal per kind, the MCP tools in all) cuts it after this order, never before."""
    touched = {(os.path.realpath(f), line) for f, line in changed}

    def rank(v: Violation) -> int:
        if v.kind in FIRST_KINDS:
            return 0
        return 1 if touched and (os.path.realpath(v.file), v.line) in touched else 2

    return sorted(violations, key=rank)  # stable: within a rank, the gate's order


def printed_lines(
    violations: list[Violation],
    root: Path | None,
    where: str,
    limit: int = MAX_PRINTED,
    changed: Collection[tuple[str, int]] = (),
) -> list[str]:
    """Return the violations formatted in `first_things_first` order; at most `limit` of each kind are printed,
    then `... and N more KIND (all in <where>)` per kind that has more."""
    shown: dict[str, int] = {}
    lines: list[str] = []
    left: dict[str, int] = {}
    for v in first_things_first(violations, changed):
        if shown.get(v.kind, 0) >= limit:
            left[v.kind] = left.get(v.kind, 0) + 1
            continue
        shown[v.kind] = shown.get(v.kind, 0) + 1
        lines.append(v.format(root))
    lines += [f"... and {n} more {kind} (all in {where})" for kind, n in left.items()]
    return lines


def failing(violations: list[Violation], strict: bool = False) -> list[Violation]:
    """Return the violations that fail a check: the errors, and under `strict` the warnings too."""
    return [v for v in violations if strict or v.severity != WARNING]


@dataclass
class GateResult:
    """A gate's verdict on one candidate."""

    ok: bool
    violations: list[Violation] = field(default_factory=list)
    gate: str = ""
    seconds: float = 0.0
    details: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(
        cls, violations: list[Violation], gate: str, seconds: float = 0.0, details: dict[str, Any] | None = None
    ) -> GateResult:
        """Return a result that passes unless some violation is an error."""
        return cls(not failing(violations), list(violations), gate, seconds, dict(details or {}))

    def strict(self) -> GateResult:
        """Return this result with every warning failing it too (`patchwrite_strict`)."""
        return GateResult(self.ok and not self.violations, self.violations, self.gate, self.seconds, self.details)

    def to_json(self, root: Path | None = None) -> dict[str, Any]:
        """Return `{"ok": ..., "violations": [...]}` plus the gate's details (`root`: as in Violation.to_json)."""
        out: dict[str, Any] = {"ok": self.ok, "violations": [v.to_json(root) for v in self.violations]}
        out.update(self.details)
        return out


@dataclass(frozen=True)
class PatchContext:
    """What a gate may know about a candidate besides its text."""

    path: Path
    head: str
    files: dict[Path, str] = field(default_factory=dict)
    # what an earlier gate learned about this candidate, for a later one: the compile gate leaves its report
    # ("compile") and a way to get HEAD's ("compile_head"), so the evidence gate can hold against the candidate
    # an undefined citation or reference the engine reports that HEAD's compile did not
    records: dict[str, Any] = field(default_factory=dict)
    #: the transaction's snapshots (`snapshot.Snapshots`): HEAD's manuscript and the candidate's, built once and
    #: shared by every gate of one `try_patch`; None when a gate is called on its own
    snapshots: Any = None


@runtime_checkable
class Gate(Protocol):
    """A check on a candidate text; `stage` names it in a PatchResult."""

    stage: str

    def check(self, text: str, context: PatchContext) -> GateResult:
        """Return the verdict on `text` as the new content of `context.path`."""
        ...
