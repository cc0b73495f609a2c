"""Parsing TeX engine logs (and the engine's `.fls` record) into located messages.

The one place that reads TeX's logs (bibtex's and biber's `.blg`: `engine.biblog`). Logs are expected from
runs with `-file-line-error` and `max_print_line=10000` (no 79-column wrapping), but the plain `! ...` form is
parsed as well: a missing package or a runaway argument keeps it even with `-file-line-error`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass

FATAL, ERROR, WARNING = "fatal", "error", "warning"


@dataclass(frozen=True)
class LogMessage:
    """One message of a log, located in a source file when the log says where."""

    severity: str
    kind: str
    message: str
    file: str = ""
    line: int = 0
    token: str = ""


# A source path in `file:line: message` form: relative or absolute, a TeX-ish extension,
# no `//` (so `http://host:8080: ...` is not taken for a file).
_FILE_LINE = re.compile(
    r"^(?P<file>(?:\./|/)?(?:[^\s:/]+/)*[^\s:/]+\."
    # sources, and the auxiliary files a later run reads back (an error can sit in a .toc line)
    r"(?:tex|ltx|sty|cls|def|cfg|clo|dtx|ins|bbl|aux|toc|lof|lot|loa|out|nav|snm|thm|brf|ind))"
    r":(?P<line>\d+): (?P<msg>.*)$"
)
_CONTEXT_LINE = re.compile(r"^l\.(?P<line>\d+) ?(?P<text>.*)$")
_FILE_OPEN = re.compile(r"\((?P<path>(?:\.{0,2}/|[A-Za-z]:[\\/])?[^\s()\"]*?\.[A-Za-z0-9]{1,8})(?=[\s()]|$)")
_ON_INPUT_LINE = re.compile(r"on input line (\d+)")
_CITATION = re.compile(r"Citation [`'\"](?P<key>[^'\"]+)['\"] (?:on page \S+ )?undefined")
_REFERENCE = re.compile(r"Reference [`'\"](?P<key>[^'\"]+)['\"] on page \S+ undefined")
_MULTI_LABEL = re.compile(r"Label [`'\"](?P<key>[^'\"]+)['\"] multiply defined")
_NO_FILE = re.compile(r"^No file (?P<name>\S+\.tex)\.$")
_GROUP = re.compile(r"^\(\\end occurred inside a group at level (?P<level>\d+)\)")
_GROUP_ENTERED = re.compile(r"^### .* group \(level \d+\) entered at line (?P<line>\d+)")
_IF_OPEN = re.compile(r"^\(\\end occurred when (?P<cond>\\\S+) on line (?P<line>\d+) was incomplete\)")
_RERUN = re.compile(
    r"Rerun to get|Please rerun LaTeX|Please \(re\)run Biber|Please \(re\)run BibTeX|Label\(s\) may have changed"
)
_CS = re.compile(r"\\(?:[A-Za-z@]+|.)")
_PKG_CONTINUATION = re.compile(r"^\((?P<pkg>[A-Za-z0-9@_-]+)\)\s+(?P<rest>.*)$")


def _error_kind(text: str) -> str:
    lowered = text.lower()
    if text.startswith("Undefined control sequence"):
        return "undefined_control_sequence"
    if "emergency stop" in lowered:
        return "emergency_stop"
    if "fatal error occurred" in lowered:
        return "fatal_error"
    if re.search(r"File `[^']*' not found|I can't find file", text):
        return "missing_file"
    if text.startswith("Incomplete \\if"):
        return "unclosed_conditional"
    if text.startswith("LaTeX Error: \\begin{"):
        return "unclosed_environment"
    if text.startswith("Missing $") or "Display math should end with $$" in text:
        return "math_mode"
    if "Paragraph ended before" in text or text.startswith("File ended while scanning"):
        return "runaway_argument"
    if text.startswith("TeX capacity exceeded"):
        return "capacity_exceeded"
    if "forced-fail" in text or "patchwrite-forced-fail" in text:
        return "forced_fail"
    if re.match(r"(?:Fatal )?(?:LaTeX|Package|Class) ", text):
        return "latex_error"
    return "tex_error"


def _join_package_continuations(lines: list[str]) -> list[str]:
    """Return log lines with `(pkg)   rest` continuation lines folded into the line they continue."""
    out: list[str] = []
    for raw in lines:
        cont = _PKG_CONTINUATION.match(raw)
        if cont and out and f"Package {cont.group('pkg')} " in out[-1]:
            out[-1] = f"{out[-1]} {cont.group('rest')}"
        else:
            out.append(raw)
    return out


def _names_pattern(read: Collection[str]) -> re.Pattern[str] | None:
    """Return a pattern matching any of the file names the engine opened (longest first), or None."""
    if not read:
        return None
    alternatives = "|".join(re.escape(name) for name in sorted(set(read), key=len, reverse=True))
    return re.compile(f"(?:{alternatives})")


class _FileStack:
    """The files TeX has open, tracked from `(path` and `)` in the log.

    `names` matches the names the engine opened (its `.fls`): a name with a space or without an
    extension is still one file; without it a name needs an extension and no space.
    """

    def __init__(self, default: str, names: re.Pattern[str] | None = None) -> None:
        self.stack: list[str | None] = []
        self.default = default
        self.names = names
        self.pushed: list[str] = []  # the names opened, for `log_inputs`

    @property
    def current(self) -> str:
        for entry in reversed(self.stack):
            if entry:
                return entry
        return self.default

    def feed(self, line: str) -> None:
        i = 0
        while i < len(line):
            ch = line[i]
            if ch == "(":
                known = self.names.match(line, i + 1) if self.names is not None else None
                if known and (known.end() == len(line) or line[known.end()] in " \t()"):
                    self.stack.append(known.group(0))
                    self.pushed.append(known.group(0))
                    i = known.end()
                    continue
                match = _FILE_OPEN.match(line, i)
                if match:
                    self.stack.append(match.group("path"))
                    self.pushed.append(match.group("path"))
                    i = match.end()
                    continue
                self.stack.append(None)
            elif ch == ")" and self.stack:
                self.stack.pop()
            i += 1


def _file_line(
    line: str, read: Collection[str], is_source: Callable[[str], bool] | None
) -> tuple[str, int, str] | None:
    """Return (file, line, message) of a `file:line: message` error line, or None.

    The file is one the engine opened (`read`, its `.fls` names), whatever its extension or
    spacing (`./my part.txt:3: ...`), or a TeX-ish name `is_source` accepts.
    """
    if read:
        for colon in _LINE_NUMBER.finditer(line):
            if line[: colon.start()] in read:
                return line[: colon.start()], int(colon.group(1)), line[colon.end() :].strip()
    flm = _FILE_LINE.match(line)
    if flm and (is_source is None or is_source(flm.group("file"))):
        return flm.group("file"), int(flm.group("line")), flm.group("msg").strip()
    return None


_LINE_NUMBER = re.compile(r":(\d+): ")


def log_inputs(text: str, read: Collection[str] = ()) -> list[str]:
    """Return the names TeX opened with `\\input` (its log shows each as `(name`), first-seen order.

    Files read with `\\openin` (a probe, a data table) appear in the engine's `.fls` but not here.
    """
    files = _FileStack("", _names_pattern(frozenset(read)))
    for line in text.splitlines():
        files.feed(line)
    return list(dict.fromkeys(files.pushed))


def parse_tex_log(
    text: str,
    root: str = "",
    is_source: Callable[[str], bool] | None = None,
    read: Collection[str] = (),
) -> list[LogMessage]:
    """Return the errors, fatal markers and kept warnings of a TeX log, located where it says.

    `read`: the names the engine opened, as its `-recorder` `.fls` lists them; a `name:line:` prefix
    naming one of them is an error line, whatever the name. `is_source(path)` tells whether any other
    TeX-ish `path:line:` prefix names a real file; without it every such prefix counts (a `\\typeout`
    of `./x.tex:3: ...` would then look like an error).
    """
    lines = _join_package_continuations(text.splitlines())
    read = frozenset(read)
    files = _FileStack(root, _names_pattern(read))
    messages: list[LogMessage] = []
    for i, line in enumerate(lines):
        located = _file_line(line, read, is_source) if ":" in line else None
        if located or line.startswith(_ERROR_STARTS):
            messages.append(_error(lines, i, located, files.current, read, is_source))
            continue  # an error line opens and closes no file
        messages.extend(_end_of_job(lines, i, root, files.current))
        if "Warning" in line:
            messages.extend(_warning(line, files.current))
        files.feed(line)
    return messages


# web2c's input_line: a line longer than the buffer stops TeX with these words on stderr only (the log ends in the
# middle of the line that opened the file)
_BUFFER_FULL = re.compile(r"! Unable to read an entire line---bufsize=(?P<size>\d+)\.")


def terminal_errors(stderr: str, log: str, root: str = "", read: Collection[str] = ()) -> list[LogMessage]:
    """Return the fatal error TeX wrote to stderr (the start of it, as the sandbox keeps it) but not to its log: a
    line longer than its input buffer, in the file the log was reading when it ended. Words of the same form in
    the log (a manuscript's `\\message`) are not taken for it."""
    found = _BUFFER_FULL.search(stderr)
    if found is None or _BUFFER_FULL.search(log):
        return []
    files = _FileStack(root, _names_pattern(frozenset(read)))
    for line in log.splitlines():
        files.feed(line)
    size = found.group("size")
    msg = (f"a line longer than TeX's input buffer ({size} bytes): the engine stopped reading there "
           f"(on its stderr: {found.group(0)[2:]})")  # fmt: skip
    return [LogMessage(FATAL, "capacity_exceeded", msg, files.current, 0, f"bufsize={size}")]


# how an error line of the plain form starts (the `file:line:` form is `_file_line`'s)
_ERROR_STARTS = ("! ", "!pdfTeX error", "!  ==> Fatal")


def _error(
    lines: list[str],
    i: int,
    located: tuple[str, int, str] | None,
    current: str,
    read: Collection[str],
    is_source: Callable[[str], bool] | None,
) -> LogMessage:
    """Return the error that line `i` starts, located by its `file:line:` prefix, else in the file being read."""
    file, lineno, body = located if located else (current, 0, lines[i].lstrip("!").strip())
    kind = _error_kind(body)
    severity = FATAL if kind in ("emergency_stop", "fatal_error") or body.startswith("pdf") else ERROR
    context_line, token = _context(lines, i, kind, read, is_source)
    token, lineno = _named_in_message(kind, body, token, lineno or context_line)
    return LogMessage(severity, kind, body, file, lineno, token)


def _context(
    lines: list[str], i: int, kind: str, read: Collection[str], is_source: Callable[[str], bool] | None
) -> tuple[int, str]:
    """Return the line of the context line `l.NN text` after error line `i` (0: none before the next error) and,
    for an undefined macro, the macro."""
    for j in range(i + 1, min(i + 40, len(lines))):
        ctx = _CONTEXT_LINE.match(lines[j])
        if ctx:
            names = _CS.findall(ctx.group("text")) if kind == "undefined_control_sequence" else []
            return int(ctx.group("line")), names[-1] if names else ""
        if lines[j].startswith("! ") or _file_line(lines[j], read, is_source):
            break
    return 0, ""


def _named_in_message(kind: str, body: str, token: str, lineno: int) -> tuple[str, int]:
    """Return the token (and line) an error's own message names: the environment, the macro or the file."""
    if kind == "unclosed_environment":
        env = re.search(r"\\begin\{([^}]*)\}", body)
        where = _ON_INPUT_LINE.search(body)
        return (env.group(1) if env else ""), (int(where.group(1)) if where else lineno)
    if kind == "runaway_argument":
        before = re.search(r"before (\\\S+) was complete", body)
        return (before.group(1) if before else ""), lineno
    if kind == "unclosed_conditional":
        after = re.search(r"(\\\S+); all text was ignored after line (\d+)", body)
        return (after.group(1), int(after.group(2))) if after else ("", lineno)
    if kind == "missing_file":
        quoted = re.search(r"`([^']*)'", body)
        return (quoted.group(1) if quoted else ""), lineno
    return token, lineno


def _end_of_job(lines: list[str], i: int, root: str, current: str) -> list[LogMessage]:
    """Return what line `i` says went wrong as the job ended: a group or conditional never closed, no pages, an
    `\\include`d file missing."""
    line = lines[i]
    found: list[LogMessage] = []
    group = _GROUP.match(line)
    if group:
        entered = (_GROUP_ENTERED.match(lines[j]) for j in range(i + 1, min(i + 6, len(lines))))
        lineno = next((int(m.group("line")) for m in entered if m), 0)
        msg = f"a group opened here is never closed (\\end occurred inside a group at level {group.group('level')})"
        found.append(LogMessage(ERROR, "unclosed_group", msg, root, lineno, "{"))
    cond = _IF_OPEN.match(line)
    if cond:
        msg = f"conditional {cond.group('cond')} is never closed with \\fi"
        found.append(LogMessage(ERROR, "unclosed_conditional", msg, root, int(cond.group("line")), cond.group("cond")))
    if line.startswith("No pages of output."):
        found.append(LogMessage(FATAL, "no_output", "the engine produced no pages", root, 0))
    missing = _NO_FILE.match(line)
    if missing:
        name = missing.group("name")
        msg = f"included file {name} does not exist, so its pages are missing"
        found.append(LogMessage(ERROR, "missing_include", msg, current, 0, name))
    return found


def _warning(line: str, current: str) -> list[LogMessage]:
    where = _ON_INPUT_LINE.search(line)
    lineno = int(where.group(1)) if where else 0
    if m := _CITATION.search(line):
        return [LogMessage(WARNING, "undefined_citation", line.strip(), current, lineno, m.group("key"))]
    if m := _REFERENCE.search(line):
        return [LogMessage(WARNING, "undefined_reference", line.strip(), current, lineno, m.group("key"))]
    if m := _MULTI_LABEL.search(line):
        return [LogMessage(WARNING, "multiply_defined_label", line.strip(), current, lineno, m.group("key"))]
    if _RERUN.search(line):
        return [LogMessage(WARNING, "rerun", line.strip(), current, lineno)]
    return []


_ENGINE_RERUN = re.compile(r"Rerun to get|Please rerun LaTeX|Label\(s\) may have changed")


def needs_rerun(text: str) -> bool:
    """Return whether the log asks for another engine run.

    `Please (re)run Biber/BibTeX` is no such request: the bibliography tool runs when
    what it reads changed, and biblatex repeats that line for as long as a key is missing.
    """
    return bool(_ENGINE_RERUN.search(text))


# what engines and tools say when a write failed (their own words, so a manuscript can print them too: the
# caller also asks the filesystem, see envfaults)
_WRITE_FAILED = re.compile(
    r"fwrite\(\)(?:/fflush\(\))? failed|I can't write on file|No space left on device|Disk quota exceeded"
    r"|[Cc]annot (?:write|create)|write error|Read-only file system|Input/output error"
)
_MEMORY_EXHAUSTED = re.compile(r"memory exhausted|[Oo]ut of memory|not enough memory|Cannot allocate memory")


def write_failed(text: str) -> bool:
    """Return whether a log (or a tool's stderr) says that a write failed."""
    return bool(_WRITE_FAILED.search(text))


def memory_exhausted(text: str) -> bool:
    """Return whether a tool's stderr (or log) says that it could not allocate memory."""
    return bool(_MEMORY_EXHAUSTED.search(text))


@dataclass(frozen=True)
class Recording:
    """What the engine's `-recorder` file (`.fls`) says it opened, names as it wrote them, first-seen order."""

    pwd: str = ""
    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    #: the files written and then read again later in the same run (LaTeX's `\\end{document}` re-reads the `.aux`)
    read_back: tuple[str, ...] = ()


def parse_fls(text: str) -> Recording:
    """Return the working directory and the files read and written that a `.fls` lists."""
    pwd = ""
    seen: dict[str, dict[str, None]] = {"INPUT": {}, "OUTPUT": {}}
    written: set[str] = set()
    read_back: dict[str, None] = {}
    for line in text.splitlines():
        kind, _, name = line.partition(" ")
        if kind == "PWD":
            pwd = name
        elif kind in seen and name:
            seen[kind].setdefault(name, None)
            plain = os.path.normpath(name)
            if kind == "OUTPUT":
                written.add(plain)
            elif plain in written:
                read_back.setdefault(plain, None)
    return Recording(pwd, tuple(seen["INPUT"]), tuple(seen["OUTPUT"]), tuple(read_back))


def unfinished_document(recorded: Recording, job: str, root: str, messages: list[LogMessage]) -> list[LogMessage]:
    """Return a `truncated_document` error when a run that stopped at no error never reached LaTeX's end of
    document: it opened `JOB.aux` for writing (at `\\begin{document}`) and never read it back, which
    `\\end{document}` always does (`\\csname @@end\\endcsname`, `\\@@end` or `\\stop` end the job there and drop the
    rest of the paper without an error). A run under `\\nofiles` writes no `.aux` and is not judged by this."""
    if any(m.severity in (ERROR, FATAL) for m in messages) or not recorded.outputs:
        return []
    aux = f"{job}.aux"
    if aux not in {os.path.normpath(name) for name in recorded.outputs} or aux in recorded.read_back:
        return []
    why = ("the job ended before \\end{document} was processed (LaTeX re-reads the .aux there, and this run never "
           "did): the rest of the document is not typeset")  # fmt: skip
    return [LogMessage(ERROR, "truncated_document", why, root, 0)]
