"""What a LaTeX source says about the files around it: whether it is a root (`\\documentclass` before
`\\begin{document}`), the files it inputs (`\\input`, `\\include`, `\\subfile`, the import package) and the tool
that reads its bibliography. Text only (comments and verbatim masked out): resolving a name to a file is
`snapshot.manuscript`'s."""

from __future__ import annotations

import os
import re

from .texmask import mask

_DOCCLASS = re.compile(r"\\documentclass\b")
_BEGIN_DOC = re.compile(r"\\begin\{document\}")


_INCLUDE = re.compile(
    r"\\(?P<cmd>input|include|subfile|subfileinclude|InputIfFileExists)\s*\{(?P<name>[^{}]+)\}"
    # TeX's own syntax: `\input nums` (the name ends at a space, a brace, a backslash or a comment)
    r"|\\input(?:\s+|(?=[./]))(?P<bare>[^\s{}\\%]+)"
    # the import package: \import{dir/}{file} (from the root's directory), \subimport{dir/}{file} (from the file's)
    r"|\\(?P<imp>import|subimport|inputfrom|subinputfrom|includefrom|subincludefrom)\*?\s*"
    r"\{(?P<dir>[^{}]*)\}\s*\{(?P<file>[^{}]+)\}"
)


def include_name(match: re.Match[str], here: str = ".") -> str:
    """Return the file an `_INCLUDE` match reads, relative to the root's directory (`here`: the including file's)."""
    if match.group("name") is not None:
        return match.group("name")
    if match.group("bare") is not None:
        return match.group("bare")
    base = here if match.group("imp").startswith("sub") else "."
    return os.path.normpath(os.path.join(base, match.group("dir").strip(), match.group("file").strip()))


def include_lines(text: str, here: str = ".") -> list[tuple[int, str]]:
    """Return (line, name) of every `\\input`-like command of `text` outside comments, one per match, names
    relative to the root's directory (`here`: the including file's)."""
    return [
        (lineno, include_name(match, here))
        for lineno, line in enumerate(mask(text)[0].splitlines(), start=1)
        for match in _INCLUDE.finditer(line)
    ]


def is_root(text: str) -> bool:
    """Return whether `text` is a root document: `\\documentclass` before `\\begin{document}`."""
    masked = mask(text)[0]
    doc = _DOCCLASS.search(masked)
    if not doc:
        return False
    begin = _BEGIN_DOC.search(masked)
    return begin is None or doc.start() < begin.start()


def input_spans(text: str) -> list[tuple[int, int, str]]:
    """Return (start, end, name) of every `\\input`/`\\include`/`\\subfile` outside comments and verbatim."""
    return [(m.start(), m.end(), include_name(m)) for m in _INCLUDE.finditer(mask(text)[0])]


_BIBLATEX = re.compile(r"\\usepackage\s*(?:\[(?P<options>[^\]]*)\])?\s*\{[^}]*\bbiblatex\b[^}]*\}")


def bib_backend(text: str) -> str:
    """Return the tool that reads the bibliography: `biber` for biblatex (unless backend=bibtex), else `bibtex`."""
    preamble = mask(text)[0].split("\\begin{document}", 1)[0]
    found = _BIBLATEX.search(preamble)
    if found is None:
        return "bibtex"
    return "bibtex" if re.search(r"backend\s*=\s*bibtex", found.group("options") or "") else "biber"
