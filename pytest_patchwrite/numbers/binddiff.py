"""What a change did to the bindings file and to the declared logs, beside the numbers it affects (the `diff` item).

Listed as warnings, like `config_changed`: a reviewer sees that a pull request moved a binding
or a logged value a bound number reports, while the number lock judges with the base's bindings.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

from ..errors import InputError
from ..model import WARNING, Violation, relative_name
from .bindfile import FileBinding, parse
from .logread import load_entries


def _name(log: Path | None, at: str | None, base: Path) -> str:
    if log is None:
        return "typed by hand"
    return f"{relative_name(log, base)} {at}"


def binding_changes(old: list[FileBinding], new: list[FileBinding], base: Path) -> list[Violation]:
    """Return one warning per binding the change added, dropped or pointed at another entry."""

    def key(b: FileBinding) -> tuple[str, tuple[tuple[str, str], ...]]:
        return str(b.file.resolve()), tuple(sorted(b.anchor.items()))

    before = {key(b): b for b in old}
    after = {key(b): b for b in new}
    out = []
    for k, b in after.items():
        was = before.get(k)
        if was is None:
            message = f"binding added: {_name(b.log, b.at, base)} ({b.transform})"
        elif (was.log, was.at, was.transform, was.value if was.manual else None) != (
            b.log,
            b.at,
            b.transform,
            b.value if b.manual else None,
        ):
            message = f"binding changed: {_name(was.log, was.at, base)} -> {_name(b.log, b.at, base)} ({b.transform})"
        else:
            continue
        out.append(Violation("binding_changed", str(b.file), b.line, b.token, message, WARNING))
    for k, b in before.items():
        if k not in after:
            message = f"binding removed: was {_name(b.log, b.at, base)}"
            out.append(Violation("binding_changed", str(b.file), b.line, b.token, message, WARNING))
    return out


def _entries_of(text: str, suffix: str) -> dict[str, str]:
    with tempfile.TemporaryDirectory(prefix="patchwrite-base-log-") as tmp:
        path = Path(tmp) / f"base{suffix}"
        path.write_text(text, encoding="utf-8")
        data = load_entries(path)
        return {e.at: e.raw for e in (*data.entries, *data.means)}


def log_changes(
    logs: list[Path], base_text: Callable[[Path], str | None], bindings: list[FileBinding], root: Path, line: int
) -> list[Violation]:
    """Return a warning per bound entry whose logged value the change moved, or per changed log that moved none."""
    out = []
    base = root.parent
    for log in logs:
        try:
            old_text = base_text(log)
        except ValueError:  # a log outside the repository has no base copy to compare
            continue
        try:
            new_text = log.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if old_text == new_text:
            continue
        shown = relative_name(log, base)
        if old_text is None:
            out.append(Violation("log_changed", str(root), line, shown, "is a log the base does not have", WARNING))
            continue
        try:
            old_entries, new_entries = _entries_of(old_text, log.suffix), _entries_of(new_text, log.suffix)
        except InputError:
            out.append(Violation("log_changed", str(root), line, shown, "changed (the base's copy cannot be read)",
                                 WARNING))  # fmt: skip
            continue
        moved = False
        for b in bindings:
            if b.log is None or b.at is None or b.log.resolve() != log.resolve():
                continue
            was, now = old_entries.get(b.at), new_entries.get(b.at)
            if was != now:
                moved = True
                old_value, new_value = was if was is not None else "absent", now if now is not None else "absent"
                message = f"log {shown} {b.at}: {old_value} -> {new_value}"
                out.append(Violation("log_changed", str(b.file), b.line, b.token, message, WARNING))
        if not moved:
            out.append(Violation("log_changed", str(root), line, shown, "changed; no bound entry moved", WARNING))
    return out


def bindings_at(text: str | None, path: Path, root: Path) -> list[FileBinding]:
    """Return the bindings a file's text holds (none for a missing file)."""
    return [] if text is None else parse(text, path, root)
