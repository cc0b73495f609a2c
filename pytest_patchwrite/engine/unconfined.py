"""Where no OS sandbox can be made: say so once, and refuse what kpathsea's paranoid mode alone cannot hold.

This is a best effort, not a sandbox: a list of the engines, tools and primitives known
to reach files outside the manuscript. Install bubblewrap for untrusted input, or mark
a manuscript one trusts as trusted.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from . import sandboxcmd

_warned = False


def warn_once() -> None:
    """Say once per process, as a warning on stderr, that untrusted manuscripts run without an OS sandbox."""
    global _warned
    if _warned:
        return
    _warned = True
    message = (
        f"patchwrite: no OS sandbox: {sandboxcmd.unavailable_reason()}; engines run with kpathsea's paranoid "
        "settings only, and lualatex, biber and file-embedding primitives are refused (install bubblewrap, or pass "
        "--trusted-input for a manuscript you trust)"
    )
    print(message, file=sys.stderr)


# What kpathsea's paranoid mode does not hold when no OS sandbox exists: primitives that read or embed
# any file, LuaTeX's libraries, and the variable and `~` expansion kpathsea applies after its check.
_UNCONFINABLE = re.compile(
    r"\\(?:directlua|latelua|luaexec|luadirect|luacode|pdfobj\b[^\n]*\bfile|pdfmapfile|pdfmapline|pdffiledump"
    r"|pdfmdfivesum\s*file|filedump|XeTeXpdffile|XeTeXpicfile|pdfximage|openin|read\b|readline|input\s*\||"
    r"special\s*\{\s*pdf:\s*(?:image|fstream|epdf|obj))"
    r"|\$\{|\{\s*\$[A-Za-z_]|\{\s*~|/proc/|\\usepackage(?:\[[^\]]*\])?\{[^}]*\bbiblatex\b"
)
_COMMENT = re.compile(r"(?<!\\)%")
_SCANNED = (".tex", ".sty", ".cls", ".def", ".cfg", ".ltx", ".bib", ".bbx", ".cbx", ".lbx", ".lua", ".conf")


def refusal(engine: str, work: Path) -> tuple[str, str, int, str] | None:
    """Return (message, file relative to `work`, line, token) when an unconfined run must be refused, else None."""
    if engine == "lualatex":
        return ("lualatex is refused without an OS sandbox: LuaTeX's io and os libraries reach any file "
                "(install bubblewrap, or mark the run trusted)", "", 0, engine)  # fmt: skip
    for path in sorted(work.rglob("*")):
        if path.suffix.lower() not in _SCANNED and path.name != "biber.conf":
            continue
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if path.name == "biber.conf":
            return ("a biber.conf is refused without an OS sandbox", path.name, 0, path.name)
        for number, line in enumerate(text.splitlines(), start=1):
            match = _UNCONFINABLE.search(_COMMENT.split(line, 1)[0])
            if match:
                token = match.group(0).strip()
                return (
                    "is refused without an OS sandbox: it can reach files outside the manuscript "
                    "(install bubblewrap, or mark the run trusted)",
                    str(path.relative_to(work)),
                    number,
                    token,
                )
    return None
