"""From a compile's log messages to located violations: which messages fail a compile, and where each points.

The compile gate (`gates.compile`) runs the engine and parses its log (`texlog`); this module decides what those
messages mean for the verdict (errors, a deliberate unclosed `\\bgroup`, no PDF, an engine that exited with an
error, references that never settle) and locates each violation in the snapshot's texts, the compiled bytes.
`relocate` first turns a message's sandbox path back into the manuscript's own path.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from ..engine import sandbox, sandboxcmd
from ..engine.texlog import ERROR, FATAL, LogMessage
from ..errors import PatchwriteError
from ..files.inputs import read_text, text_bytes
from ..model import WARNING, Violation, failing

if TYPE_CHECKING:
    from .report import CompileReport

_NEEDS_UNICODE_ENGINE = re.compile(r"requires either XeTeX or\s*(?:\(\w+\)\s*)?LuaTeX|requires (?:XeTeX|LuaTeX)")


def located_violations(
    report: CompileReport,
    root: Path,
    timeout: float,
    max_runs: int,
    making_fonts: bool = False,
    texts: dict[Path, str] | None = None,
) -> list[Violation]:
    """Return the located violations of a compile; `texts`: the snapshot's sources, where lines are looked up."""
    lines = _SourceLines(texts or {})
    if report.timed_out:
        doing = (
            "it was generating bitmap fonts (mktexpk, METAFONT), which are kept for the next compile: run it again "
            "or raise the timeout"
            if making_fonts
            else "an endless macro loop?"
        )
        msg = f"the engine did not finish within {timeout:g} s ({doing}); it was killed"
        return [Violation("timeout", str(root), 0, "", msg)]
    errors = [m for m in report.messages if m.severity in (ERROR, FATAL)]
    deliberate = [m for m in errors if m.kind == "unclosed_group" and _opens_group_by_command(m, lines)]
    errors = [m for m in errors if m not in deliberate]
    located = [m for m in errors if m.kind not in ("emergency_stop", "fatal_error", "no_output")]
    shown = located or errors
    violations = [_locate(Violation(m.kind, m.file or str(root), m.line, m.token, _hint(m, root)), lines)
                  for m in shown]  # fmt: skip
    # one message per error and line: xelatex reports a picture it cannot load twice, at the same place
    violations = list({(v.kind, v.file, v.line, v.message): v for v in violations}.values())
    for m in deliberate if not violations else []:
        msg = _hint(m, root) + "; TeX only warns and the PDF is complete, but everything after it stays in that group"
        violations.append(Violation(m.kind, m.file, m.line, m.token, msg, severity=WARNING))
    if not failing(violations) and report.pdf_bytes <= 64:
        violations.append(Violation("no_pdf", str(root), 0, "", "the engine wrote no PDF (or an empty one)"))
    if not failing(violations) and report.exit_code not in (0, None):
        # the engine's own verdict: it counted an error the log parser did not locate
        msg = f"{report.engine} exited with status {report.exit_code}: it met an error (see its log)"
        violations.append(Violation("engine_exit", str(root), 0, "", msg))
    if not failing(violations) and report.unsettled:
        msg = (
            f"the auxiliary files still changed after {max_runs} {report.engine} runs (cross-references that "
            "never settle); raise patchwrite_max_runs (--patchwrite-max-runs, check --max-runs) if it needs more"
        )
        violations.append(Violation("rerun_limit", str(root), 0, "", msg))
    return violations


_GROUP_COMMAND = re.compile(r"\\(?:bgroup|begingroup)(?![A-Za-z@])")


_ESCAPED = re.compile(r"\\[{}%]")


class _SourceLines:
    """The lines of the files a compile's messages name: the snapshot's texts (the compiled bytes), else the file as
    the bounded reader reads it (a class or style file the engine read, which the snapshot does not hold)."""

    def __init__(self, texts: dict[Path, str]) -> None:
        self.texts = texts
        self.read: dict[str, list[str] | None] = {}

    def of(self, file: str) -> list[str] | None:
        """Return the lines of `file`, or None when it cannot be read."""
        if file not in self.read:
            text = self.texts.get(Path(os.path.realpath(file))) if file else None
            if text is None and file:
                try:
                    text = read_text(file)
                except PatchwriteError:
                    text = None
            self.read[file] = text.splitlines() if text is not None else None
        return self.read[file]


def _opens_group_by_command(message: LogMessage, sources: _SourceLines) -> bool:
    """Return whether the line TeX names for an unclosed group opens it with `\\bgroup`/`\\begingroup`, not a `{`.

    TeX prints both as `({)`. A template's `\\bgroup` that is never closed (the ICLR 2026 template's notation
    section) is deliberate code whose PDF is complete; a stray `{` is an editing fault.
    """
    lines = sources.of(message.file)
    if lines is None or not 0 < message.line <= len(lines):
        return False
    code = _ESCAPED.sub("", lines[message.line - 1]).split("%", 1)[0]
    return bool(_GROUP_COMMAND.search(code)) and code.count("{") <= code.count("}")


def _locate(violation: Violation, sources: _SourceLines) -> Violation:
    """Return `violation` with a line found in its source when the log gave none (a missing file or `\\include`)."""
    if violation.kind == "bib_syntax" and not violation.line:
        return _locate_aux_entry(violation, sources)
    if violation.kind == "capacity_exceeded" and violation.token.startswith("bufsize="):
        return _locate_long_line(violation, sources)
    if violation.line or not violation.token:
        return violation
    stem = Path(violation.token).stem if violation.kind in ("missing_file", "missing_include") else violation.token
    lines = sources.of(violation.file)
    if lines is None:
        return violation
    for number, line in enumerate(lines, start=1):
        if stem and stem in line.split("%")[0]:
            return Violation(violation.kind, violation.file, number, violation.token, violation.message)
    return violation


def _locate_long_line(violation: Violation, sources: _SourceLines) -> Violation:
    """Return a line too long for TeX's buffer located at the first line of its file that nearly fills the buffer
    (the buffer also holds the lines of the files around it), else at the file's longest line."""
    lines = sources.of(violation.file)
    size = int(violation.token.removeprefix("bufsize=") or 0)
    if not lines:
        return violation
    lengths = [len(text_bytes(line)) for line in lines]
    number = next((n for n, length in enumerate(lengths, start=1) if length >= size - 4096), 0)
    number = number or max(range(len(lengths)), key=lengths.__getitem__) + 1
    return Violation(violation.kind, violation.file, number, violation.token, violation.message)


def _locate_aux_entry(violation: Violation, sources: _SourceLines) -> Violation:
    """Return a bibtex complaint about the compile's own `.aux` located at the source line that wrote the entry
    (its argument standing as a list item, e.g. a cite key holding a newline), else at line 1 of the root: a
    line 0 is no place an editor can open."""
    if violation.token:
        item = re.compile(r"(?<![^\s{,])" + re.escape(violation.token) + r"(?![^\s},])")
        for path, text in sources.texts.items():
            for number, line in enumerate(text.split("\n"), start=1):  # LF only, as the engine counts lines
                if item.search(line.split("%")[0]):
                    return Violation(violation.kind, str(path), number, violation.token, violation.message)
    return Violation(violation.kind, violation.file, 1, violation.token, violation.message)


def _short(message: str) -> str:
    return message if message.startswith("!") else f"! {message}"


def _hint(message: LogMessage, root: Path) -> str:
    """Return the message as shown, with the fix when pdflatex met a package that needs XeTeX or LuaTeX."""
    text = _short(message.message)
    if _NEEDS_UNICODE_ENGINE.search(message.message):
        text += f"; put `% !TEX program = xelatex` (or lualatex) on the first line of {root.name}"
    return text


def relocate(message: LogMessage, work: Path, source_dir: Path, renamed: dict[str, str], job: str) -> LogMessage:
    """Return `message` with a sandbox path (and a root's safe name) turned into the manuscript's own path."""
    file = message.file
    if not file:
        return message
    candidate = Path(file)
    if candidate.is_absolute():
        tree = sandbox.owning_job_directory(work) or work
        inner = Path(sandboxcmd.TREE) / work.relative_to(tree)
        for outer, cwd in ((Path(sandboxcmd.TREE), inner), (tree.resolve(), work.resolve())):
            if candidate.is_relative_to(outer):
                candidate = Path(os.path.relpath(candidate, cwd))
                break
        else:
            # a file outside the copy (a class of the TeX tree): the error is the manuscript's, shown at its root
            where = f"{file}:{message.line}" if message.line else file
            return LogMessage(message.severity, message.kind, f"{message.message} (in {where})", str(source_dir /
                              renamed.get(job, file)), 0, message.token)  # fmt: skip
    candidate = Path(os.path.normpath(candidate))
    line, text = message.line, message.message
    if str(candidate) in renamed:
        candidate = Path(renamed[str(candidate)])
    elif candidate.parent == Path(".") and candidate.name.startswith(f"{job}."):
        # the sandbox's job files (`patchwrite.aux`, `.toc`) are not the user's: the root, at the token's line if any
        text = f"{text} (read back from the {candidate.suffix} file the compile wrote)"
        candidate, line = Path(renamed.get(job, candidate.name)), 0
    return LogMessage(message.severity, message.kind, text, str(source_dir / candidate), line,
                      message.token)  # fmt: skip
