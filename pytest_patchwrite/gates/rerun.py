"""When the compile loop runs again: the auxiliary files a run reads back, and what the bibliography tool reads."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from ..engine.texlog import ERROR, FATAL, LogMessage

# files an engine run writes and a later run reads back: when they change, the output may change
AUX_SUFFIXES = frozenset((".aux", ".toc", ".lof", ".lot", ".loa", ".out", ".nav", ".snm", ".bbl", ".thm", ".brf"))
_MISSING_INPUT = re.compile(r"No file (?P<name>\S+)\.$", re.MULTILINE)
_AUX_INPUT = re.compile(r"\\@input\{(?P<name>[^}]+)\}")


def read_log(path: Path) -> str:
    """Return a log's (or an auxiliary file's) text, or "" when the run did not write it."""
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def aux_state(work: Path) -> dict[str, bytes]:
    """Return {relpath: sha256} of the auxiliary files in the sandbox (those a later run reads back)."""
    state: dict[str, bytes] = {}
    for dirpath, _, filenames in os.walk(work):
        for name in filenames:
            if os.path.splitext(name)[1] in AUX_SUFFIXES:
                path = Path(dirpath) / name
                state[str(path.relative_to(work))] = hashlib.sha256(path.read_bytes()).digest()
    return state


def settling(before: dict[str, bytes], after: dict[str, bytes], log: str) -> bool:
    """Return whether a run changed an auxiliary file the next run reads.

    A file that existed changed; or a file the run looked for (`No file x.toc.`) now exists.
    A first `.aux` is left to LaTeX itself: it compares the labels and citations of the
    `.aux` it wrote with the ones it read and asks for a rerun when they differ (a
    one-page document then needs one run, as with latexmk).
    """
    if any(rel in before and before[rel] != digest for rel, digest in after.items()):
        return True
    wanted = {m.group("name") for m in _MISSING_INPUT.finditer(log)}
    return any(rel in wanted and not rel.endswith(".aux") for rel in after if rel not in before)


def bib_input(work: Path, job: str, tool: str | None) -> str | None:
    """Return what the bibliography tool reads: the .bcf (biber), or the citation lines of the .aux files."""
    if tool == "biber":
        return read_log(work / f"{job}.bcf")
    if tool != "bibtex":
        return None
    lines: list[str] = []
    pending, seen = [f"{job}.aux"], set()
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        text = read_log(work / name)
        lines.extend(ln for ln in text.splitlines() if ln.startswith(("\\citation", "\\bibdata", "\\bibstyle")))
        pending.extend(m.group("name") for m in _AUX_INPUT.finditer(text))  # \include'd files' .aux
    return "\n".join(lines)


def failed(messages: list[LogMessage], allow_no_output: bool) -> bool:
    """Return whether a run stopped at an error (no pages is no error while the bibliography is pending).

    A group still open at `\\end` stops nothing: TeX only warns, and the references need their later runs.
    """
    return any(
        m.severity in (ERROR, FATAL) and m.kind != "unclosed_group" and not (allow_no_output and m.kind == "no_output")
        for m in messages
    )


def bib_tool_input(work: Path, job: str) -> tuple[str | None, str | None]:
    """Return (the bibliography tool the last run asks for, what it reads): one read of the .bcf or .aux files."""
    if (work / f"{job}.bcf").exists():
        return "biber", bib_input(work, job, "biber")
    wanted = bib_input(work, job, "bibtex") or ""
    if "\\bibdata" in wanted:  # also in an \include'd file's .aux
        return "bibtex", wanted
    return None, None
