"""What the MCP server's tools do, without the protocol: every path bounded by DIR, every result bounded in size.

Each tool returns plain JSON data or raises `ToolInputError` (bad input, one line) or a
`PatchwriteError` (a file the user can fix); the server turns both into MCP tool errors.
The only write is `apply_edit`, through `transaction.try_patch` behind the manuscript's
gates. Calls are served one at a time (`Workspace.lock`): the gates keep per-call state.
"""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..deadline import OutOfTime, within
from ..edit import number_lines, split_lines
from ..errors import PatchwriteError
from ..files.inputs import read_text, text_bytes
from ..files.paths import Boundary
from ..flows.transaction import revision_of, try_patch
from ..model import Gate, GateResult, PatchContext, Violation, display_path, first_things_first
from ..snapshot.manuscript import Manuscript, load_manuscript
from ..snapshot.roots import locate, peek_text, walked_dirs
from ..snapshot.snapshot import pair_for, root_of
from ..tex.texinputs import is_root
from .project import ProjectSettings, load_settings
from .shownresults import clean, escaped, shown_rows

MAX_READ_LINES = 400  # lines one read_numbered call returns at most
MAX_RESULT_BYTES = 48_000  # the text of one result (numbered lines, context) at most
MAX_LINE_CHARS = 2_000  # a longer line is cut in the view (and marked)
MAX_VIOLATIONS = 25  # violations listed per result; the count says how many there were
MAX_EDIT_BYTES = 256 * 1024  # an EDIT body of 40 lines never needs more
MAX_MANUSCRIPTS = 100
MAX_FILES_LISTED = 200
MAX_WALK_ENTRIES = 20_000
CONTEXT_LINES = 3
_REVISION = re.compile(r"[0-9a-fA-F]{64}")
_GIT_REV = re.compile(r"[A-Za-z0-9._/~^@{}+-]{1,200}")
_NO_ROOT = "no root manuscript (\\documentclass) under DIR \\inputs it"


class ToolInputError(PatchwriteError):
    """A tool argument that cannot be used (a path outside DIR, a bad range); the message says what to do."""

    reason = "bad_input"


@dataclass
class Workspace:
    """The directory the server may touch, its project settings, and the gates of each manuscript (kept warm)."""

    directory: Path
    settings: ProjectSettings = field(init=False)
    lock: threading.Lock = field(default_factory=threading.Lock, init=False)
    _gates: list[Gate] = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        self.directory = Path(os.path.realpath(self.directory))
        if not self.directory.is_dir():
            raise ToolInputError(self.directory, "not a directory; `patchwrite mcp DIR` serves a directory")
        self.settings = load_settings(self.directory)
        self.boundary = Boundary(self.directory)

    # -- paths ----------------------------------------------------------------------
    def resolve(self, path: str) -> Path:
        """Return the real path of a tool's `path` argument; raise ToolInputError, before opening it, if outside DIR."""
        if not isinstance(path, str) or not path.strip() or "\0" in path or len(path) > 4096:
            raise ToolInputError("path", "give a file path relative to the served directory, e.g. main.tex")
        candidate = Path(path) if os.path.isabs(path) else self.directory / path
        real = self.boundary.allowed(candidate)
        if real is None:
            inside = os.path.realpath(candidate).startswith(str(self.directory).rstrip(os.sep) + os.sep)
            why = self.boundary.why_refused(candidate) if inside else "is outside the served directory; it is not read"
            raise ToolInputError(path, why)
        return real

    def shown(self, path: Path | str) -> str:
        """Return `path` relative to DIR when it lies below it."""
        return display_path(str(path), self.directory)

    def boundary_of(self, root: Path) -> Boundary:
        """Return where the manuscript rooted at `root` may read (as the gates and the evidence locks bound it)."""
        return self.settings.options.evidence_config().boundary(root)

    def editable(self, real: Path) -> None:
        """Raise ToolInputError unless `real` may be the target of an edit (a .tex file; its root is checked later)."""
        if real.suffix != ".tex":
            raise ToolInputError(self.shown(real), "is not a .tex file of a manuscript; only those can be edited")

    def snapshot_of(self, real: Path) -> Manuscript:
        """Return the one snapshot of the manuscript that reads `real`; raise ToolInputError when none under DIR does.

        `real` is read once; a root found because it inputs `real` is loaded once, and that load is the snapshot.
        """
        self.editable(real)
        text = read_text(real)
        root, loaded = locate(real, text=text)
        self.require_inside(real, root)
        if root == real and not is_root(text):
            raise ToolInputError(self.shown(real), _NO_ROOT)
        boundary = self.boundary_of(root)
        if loaded is not None and loaded.boundary == boundary:
            manuscript = loaded
        else:  # what root finding read stands for the disk: no file is read twice
            known = dict(loaded.texts) if loaded is not None else {}
            manuscript = load_manuscript(root, boundary=boundary, known={**known, real: text})
        self.require_reader(real, manuscript)
        return manuscript

    def require_inside(self, real: Path, root: Path) -> None:
        """Raise ToolInputError unless `root` (found for `real`) lies inside DIR."""
        if self.boundary.allowed(root) is None:
            raise ToolInputError(self.shown(real), f"its root manuscript {root} lies outside the served directory")

    def require_reader(self, real: Path, manuscript: Manuscript) -> None:
        """Raise ToolInputError unless `manuscript` is a root manuscript that reads `real`."""
        if not is_root(manuscript.root_text):
            raise ToolInputError(self.shown(real), _NO_ROOT)
        if real not in manuscript.files:
            raise ToolInputError(self.shown(real), f"is not read by the manuscript {self.shown(manuscript.root)}")

    def gates(self) -> list[Gate]:
        """Return the gates of every edit: the guard, compile, evidence (built once so their state stays warm).

        They find the root in the transaction, from the text read under the file lock, and share its snapshot.
        """
        if not self._gates:
            from ..gates.evidence import EvidenceGate

            options = self.settings.options
            self._gates = [_Guard(self), options.compile_gate(), EvidenceGate(None, options.evidence_config())]
        return self._gates

    # -- tools ----------------------------------------------------------------------
    def list_manuscripts(self) -> dict[str, Any]:
        """Return the root manuscripts under DIR, each with the files it reads."""
        roots: list[Path] = []
        seen = 0
        truncated = False
        for dirpath, dirnames, filenames in os.walk(self.directory):
            dirnames[:] = walked_dirs(dirpath, dirnames)
            for name in sorted(filenames):
                seen += 1
                if seen > MAX_WALK_ENTRIES or len(roots) >= MAX_MANUSCRIPTS:
                    truncated = True
                    break
                if not name.endswith(".tex") or name.startswith("."):
                    continue
                real = self.boundary.allowed(Path(dirpath) / name)
                try:
                    if real is not None and is_root(peek_text(real)):
                        roots.append(real)
                except PatchwriteError:
                    continue
            if truncated:
                break
        manuscripts = []
        for root in roots:
            entry: dict[str, Any] = {"root": self.shown(root)}
            try:
                loaded = load_manuscript(root, boundary=self.boundary_of(root))
            except PatchwriteError as exc:
                entry["error"] = clean(exc.format(self.directory))
            else:
                files = [self.shown(p) for p in loaded.files]
                entry["files"] = files[:MAX_FILES_LISTED]
                hostile = [clean(name, 500) for name in [entry["root"], *files] if escaped(name) != name]
                if hostile:  # the names above are exact (a client passes them back); these are safe to print
                    entry["hostile_names"] = hostile[:MAX_FILES_LISTED]
                entry["lines"] = sum(len(split_lines(t)) for t in loaded.texts.values())
                if len(files) > MAX_FILES_LISTED:
                    entry["files_omitted"] = len(files) - MAX_FILES_LISTED
            manuscripts.append(entry)
        settings = {"file": str(self.settings.source) if self.settings.source else None,
                    "ignored": self.settings.ignored}  # fmt: skip
        return {"directory": str(self.directory), "manuscripts": manuscripts, "truncated": truncated,
                "settings": settings}  # fmt: skip

    def read_numbered(self, path: str, start: int | None = None, end: int | None = None) -> dict[str, Any]:
        """Return lines `start..end` of a file as `N | text`, bounded, with its revision (sha256 of its bytes)."""
        real = self.resolve(path)
        text = read_text(real)
        # split at LF only: str.splitlines also breaks at CR, U+2028, NEL (U+0085), ..., which are a line's own
        # characters here, and would shift every later line number away from the EDIT grammar's
        lines = number_lines(text).split("\n")[:-1]
        total = len(lines)
        first = 1 if start is None else start
        if first < 1 or (total and first > total):
            raise ToolInputError(path, f"start {first} is outside the file's lines 1..{total}")
        last = total if end is None else min(end, total)
        if last < first and total:
            raise ToolInputError(path, f"end {end} is before start {first}")
        last = min(last, first + MAX_READ_LINES - 1)
        shown: list[str] = []
        size = cut = 0
        for line in lines[first - 1 : last]:
            if len(line) > MAX_LINE_CHARS:
                line = line[:MAX_LINE_CHARS] + f" [... line cut: {len(line) - MAX_LINE_CHARS} more characters]"
                cut += 1
            if size + len(line) + 1 > MAX_RESULT_BYTES and shown:
                break
            shown.append(line)
            size += len(line.encode("utf-8")) + 1
        returned_last = first + len(shown) - 1
        result: dict[str, Any] = {
            "path": self.shown(real),
            "revision": revision_of(text),
            "total_lines": total,
            "start": first,
            "end": returned_last,
            "text": "\n".join(shown) + ("\n" if shown else ""),
        }
        if returned_last < total:
            result["next_start"] = returned_last + 1
        if cut:
            result["lines_cut"] = cut
        return result

    def apply_edit(self, path: str, edit: str, revision: str | None = None) -> dict[str, Any]:
        """Return the `apply --json` object of one edit behind every gate, plus the new revision and context."""
        real = self.resolve(path)
        if not isinstance(edit, str) or not edit.strip():
            raise ToolInputError("edit", "the edit is empty; send an `EDIT N M` block or a `DELETE N M` line")
        if len(text_bytes(edit)) > MAX_EDIT_BYTES:
            raise ToolInputError("edit", f"longer than {MAX_EDIT_BYTES // 1024} KB; an edit replaces at most "
                                         f"{self.settings.max_span} lines")  # fmt: skip
        if revision is not None and not _REVISION.fullmatch(revision.strip()):
            raise ToolInputError("revision", "expected the 64-hex-digit `revision` that read_numbered returned")
        self.editable(real)
        # the root is found, and the manuscript read, under the file lock, once for every gate (see _Guard)
        result = try_patch(real, edit, self.gates(), max_span=self.settings.max_span, revision=revision,
                           tree=self.directory)  # fmt: skip
        out = result.to_json(self.directory)
        out["violations"], omitted = self._violations(result.violations)
        if omitted:
            out["violations_omitted"] = omitted
        out["path"] = self.shown(real)
        out["revision"] = revision_of(result.text)
        out["seconds"] = round(result.seconds, 3)
        if result.accepted and result.span and result.edit is not None:
            lo = result.span[0]
            hi = lo + (len(result.edit.body) if result.edit.verb != "DELETE" else 0) - 1
            out["context"] = _context(result.text, lo, max(lo, hi))
        elif result.stage is not None and result.stage != "parse" and result.span:
            out["context"] = _context(result.text, *result.span)
        out["hint"] = _hint(out)
        return out

    def check(self, path: str) -> dict[str, Any]:
        """Return the `check --json` object for the manuscript that reads `path`."""
        from ..flows.check import check_manuscript

        real = self.resolve(path)
        manuscript = self.snapshot_of(real)
        root = manuscript.root
        results = check_manuscript(manuscript, self.settings.options)
        gates = {}
        for name, result in results.items():
            data = result.to_json(self.directory)
            for key, value in data.items():
                if isinstance(value, list) and key != "violations" and len(value) > MAX_FILES_LISTED:
                    data[key] = value[:MAX_FILES_LISTED]  # the files a gate read: bounded like the listing
            data["violations"], omitted = self._violations(result.violations)
            if omitted:
                data["violations_omitted"] = omitted
            gates[name] = data
        ok = all(r.ok for r in results.values())
        return {"manuscripts": [{"path": self.shown(root), "gates": gates}], "ok": ok}

    def diff(self, path: str, base: str | None = None) -> dict[str, Any]:
        """Return what the working tree's manuscript moved against the git revision `base` (`diff --json`)."""
        from ..flows.prdiff import GitBase, diff_working_tree

        base = (base or self.settings.base or "").strip()
        if not base:
            raise ToolInputError("base", "name the git revision to compare against (e.g. HEAD or origin/main)")
        if not _GIT_REV.fullmatch(base) or base.startswith("-"):
            raise ToolInputError("base", f"{clean(base, 60)!r} is not a git revision name")
        real = self.resolve(path)
        manuscript = self.snapshot_of(real)
        root = manuscript.root
        settings = self.settings
        report, compiled = diff_working_tree(
            manuscript,
            GitBase.open(root.parent, base),
            settings.options.evidence_config(),
            lambda: settings.options.compile_gate(root).compile(manuscript),  # as `patchwrite diff`
            max_hunk=settings.max_hunk,
            evidence_from=settings.evidence_from,
        )
        data = report.result().to_json(self.directory)
        ran = {"engine": compiled.engine, "ok": compiled.ok, "cached": compiled.cached} if compiled else None
        data["compile"] = ran
        data["violations"], omitted = self._violations(report.failures)
        changes = data.get("changes", [])
        if len(changes) > MAX_VIOLATIONS * 4:
            data["changes_omitted"] = len(changes) - MAX_VIOLATIONS * 4
            data["changes"] = changes[: MAX_VIOLATIONS * 4]
        for change in data.get("changes", []):
            change["file"] = self.shown(change["file"])
            change["message"] = clean(str(change.get("message", "")))
            change["token"] = clean(str(change.get("token", "")), 200)
        if omitted:
            data["violations_omitted"] = omitted
        return {"path": self.shown(root), "base": base, **data}

    def bindings(self, path: str) -> dict[str, Any]:
        """Return the manuscript's bindings file as it is and what `patchwrite bind` would change (read-only)."""
        import json

        from ..flows.bind import bind_root, outcome_json

        real = self.resolve(path)
        manuscript = self.snapshot_of(real)
        root = manuscript.root
        seconds = self.settings.options.timeout
        try:
            with within(seconds):  # read-only, so safe to stop anywhere: the binder scans as the locks do
                outcome = bind_root(manuscript, self.settings.options.evidence_config())
        except OutOfTime:
            why = (f"the binder did not finish within {seconds:g} s and was stopped (a manuscript this large or this "
                   "dense with numbers); raise patchwrite_timeout")  # fmt: skip
            raise ToolInputError(self.shown(root), why) from None
        proposed = outcome_json(outcome)
        current = json.loads(outcome.old_text).get("bindings", []) if outcome.old_text else []
        key = ("file", "line", "token", "log", "at")
        have = {tuple(row.get(k) for k in key) for row in current}
        want = {tuple(row.get(k) for k in key) for row in proposed["bindings"]}
        limit = MAX_FILES_LISTED

        def rows(items: list[dict[str, Any]], keys: set[tuple[Any, ...]]) -> list[dict[str, Any]]:
            return shown_rows([row for row in items if tuple(row.get(k) for k in key) in keys][:limit])

        added = rows(proposed["bindings"], want - have)
        removed = rows(current, have - want)
        return {
            "path": self.shown(root),
            "bindings_file": self.shown(outcome.path),
            "exists": outcome.old_text is not None,
            "up_to_date": not outcome.changed,
            "current": shown_rows(current[:limit]),
            "would_add": added,
            "would_remove": removed,
            "unattested": shown_rows(proposed["unattested"][:limit]),
            "counts": proposed["counts"],
            "note": "read-only: only `patchwrite bind` writes the bindings file",
        }

    def _violations(self, violations: list[Violation]) -> tuple[list[dict[str, Any]], int]:
        shown = []
        for violation in first_things_first(violations)[:MAX_VIOLATIONS]:  # a binding_mismatch is never cut off
            data = violation.to_json(self.directory)
            data["message"] = clean(data["message"])
            data["token"] = clean(data["token"], 200)
            data["file"] = clean(data["file"], 500)
            shown.append(data)
        return shown, max(0, len(violations) - MAX_VIOLATIONS)


class _Guard:
    """The first gate of an edit: under the file lock, the edited file's root must lie inside DIR and read it.

    It takes the transaction's snapshot (`snapshot.pair_for`), which the compile and evidence gates then share, so
    the check costs no read; a refusal is a ToolInputError and nothing is written.
    """

    stage = "parse"

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace

    def check(self, text: str, context: PatchContext) -> GateResult:
        """Return a pass, or raise ToolInputError when no root manuscript under DIR reads the edited file."""
        real = Path(context.path).resolve()
        root = root_of(context, text)
        self.workspace.require_inside(real, root)
        head, _candidate = pair_for(context, text, root, self.workspace.boundary_of(root))
        self.workspace.require_reader(real, head)
        return GateResult(True, [], self.stage)


def _context(text: str, lo: int, hi: int) -> dict[str, Any]:
    """Return the numbered lines around `lo..hi` of `text` (bounded), for the agent to see what the file holds now."""
    lines = number_lines(text).splitlines()
    first = max(1, lo - CONTEXT_LINES)
    last = min(len(lines), hi + CONTEXT_LINES, first + 60)
    shown: list[str] = []
    size = 0
    for line in lines[first - 1 : last]:
        line = line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + " [... line cut]"
        size += len(line) + 1
        if size > MAX_RESULT_BYTES // 2:
            break
        shown.append(line)
    return {"start": first, "end": first + len(shown) - 1, "text": "\n".join(shown) + ("\n" if shown else "")}


def _hint(result: dict[str, Any]) -> str:
    """Return one sentence telling a model what to do next."""
    if result["accepted"]:
        return "accepted and written; line numbers after the edit may have moved: use the new revision and context"
    reason = result.get("reason") or ""
    if reason == "stale_revision":
        return "nothing written: the file changed; call read_numbered again and edit against the new lines"
    if result["stage"] == "parse":
        return "nothing written: the edit does not parse; fix it as the violation says and send it again"
    if result["stage"] == "compile":
        return "nothing written: the candidate does not compile; the violations name the file and line of the error"
    return "nothing written: the candidate adds a citation, number or placeholder no evidence attests; keep HEAD's"
