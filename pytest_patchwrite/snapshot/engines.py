"""Which engine a manuscript needs, as its author's tools would pick it: the one engine chooser.

In order: the root's `% !TEX program` comment; a `latexmkrc`/`.latexmkrc` beside
it (`$pdf_mode = 4` lualatex, `5` xelatex; matched as text, Perl is never run);
else what the packages need, in the root's preamble and in the local class and
style files it loads, followed transitively but never out of the manuscript's
tree. A file that adapts to the engine (`\\ifxetex`, `\\iftutex`, ...) implies none.

`engine_and_reason` is the rule; `snapshot.engine` asks it once per snapshot, and every other caller goes through
that (tests/test_architecture.py checks no second chooser comes back).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from ..errors import InputError
from ..files.inputs import read_prefix
from ..tex.magic import magic_comments
from ..tex.texmask import mask

ENGINES = ("pdflatex", "xelatex", "lualatex")  # what `% !TEX program` and the settings may name
PDF_MODES = {"1": "pdflatex", "4": "lualatex", "5": "xelatex"}
RC_FILES = ("latexmkrc", ".latexmkrc")  # latexmk reads both from the working directory, the later one wins
MAX_STYLE_FILES = 64
MAX_FILE_BYTES = 2 * 1024 * 1024
_PDF_MODE = re.compile(r"^\s*\$pdf_mode\s*=\s*(?P<mode>\d)\s*;", re.MULTILINE)
_LOAD = r"\\(?:usepackage|RequirePackage)\s*(?:\[[^\]]*\])?\s*\{[^}]*\b"
_NEEDS_XETEX = re.compile(
    r"\\documentclass\s*(?:\[[^\]]*\])?\s*\{ctex\w*\}|" + _LOAD + r"(?:fontspec|xeCJK|ctex|unicode-math|polyglossia)\b"
)
_NEEDS_LUATEX = re.compile(_LOAD + r"(?:luacode|luatexja|luatexja-fontspec)\b|\\directlua\b")
# a file that tests the engine works under several: it implies none
_ADAPTS = re.compile(
    r"\\if(?:xetex|luatex|tutex|XeTeX|LuaTeX|PDFTeX|pdftex)(?![A-Za-z])|\\sys_if_engine_"
    r"|\\(?:ifx|ifdefined|ifcsname|@ifundefined)\s*\{?\\?(?:XeTeXversion|XeTeXrevision|directlua|luatexversion)"
)
_LOADS = re.compile(
    r"\\(?P<cmd>documentclass|LoadClass|LoadClassWithOptions|usepackage|RequirePackage|RequirePackageWithOptions)"
    r"\s*(?:\[[^\]]*\])?\s*\{(?P<names>[^}]*)\}"
)


def _read_inside(path: Path, tree: Path) -> str | None:
    """Return the text of a regular file whose real path stays inside `tree`, or None."""
    try:
        real = path.resolve()
        if not real.is_relative_to(tree) or not real.is_file():
            return None
        return read_prefix(real, MAX_FILE_BYTES).decode("utf-8", errors="replace")
    except (OSError, InputError):
        return None


def engine_from_magic(text: str) -> str | None:
    """Return the engine named by `% !TEX program = ...` (one of `ENGINES`), or None when there is none."""
    value = magic_comments(text).get("tex.program", "").strip().lower()
    return value if value in ENGINES else None


def _masked_needs(masked: str) -> str | None:
    """Return the engine the packages a masked text loads need (`lualatex`, `xelatex`), or None."""
    if _ADAPTS.search(masked):
        return None
    if _NEEDS_LUATEX.search(masked):
        return "lualatex"
    if _NEEDS_XETEX.search(masked):
        return "xelatex"
    return None


def package_engine(text: str) -> str | None:
    """Return the engine the packages loaded in `text` (a class or style file) need, or None."""
    return _masked_needs(mask(text)[0])


def preamble_engine(root_text: str) -> str | None:
    """Return the engine the packages of a root's preamble need, or None; the preamble ends at the first
    `\\begin{document}` outside a comment (one in a comment above a `fontspec` line does not hide it)."""
    return _masked_needs(mask(root_text)[0].split("\\begin{document}", 1)[0])


def latexmkrc_engine(directory: Path) -> str | None:
    """Return the engine a latexmkrc in `directory` selects with `$pdf_mode`, or None."""
    tree = directory.resolve()
    engine = None
    for name in RC_FILES:
        text = _read_inside(directory / name, tree)
        if text is None:
            continue
        uncommented = "\n".join(line.split("#", 1)[0] for line in text.splitlines())
        modes = [m.group("mode") for m in _PDF_MODE.finditer(uncommented)]
        if modes and modes[-1] in PDF_MODES:
            engine = PDF_MODES[modes[-1]]
    return engine


def read_local_styles(root: Path, root_text: str) -> list[str]:
    """Return the texts of the `.cls`/`.sty` files inside the root's tree that it loads, directly or not."""
    tree = root.parent.resolve()
    texts: list[str] = []
    seen: set[Path] = set()
    pending = [(root_text, "tex")]
    while pending and len(seen) < MAX_STYLE_FILES:
        text, _ = pending.pop()
        for m in _LOADS.finditer(mask(text)[0]):
            suffix = ".cls" if "Class" in m.group("cmd") or m.group("cmd") == "documentclass" else ".sty"
            for name in m.group("names").split(","):
                path = tree / f"{name.strip()}{suffix}"
                if not name.strip() or path in seen:
                    continue
                seen.add(path)
                found = _read_inside(path, tree)
                if found is not None:
                    texts.append(found)
                    pending.append((found, suffix))
    return texts


def engine_and_reason(
    root: Path, root_text: str, styles: Callable[[], list[str]] | None = None
) -> tuple[str | None, str]:
    """Return (the engine the manuscript at `root` needs or None, what says so), in the order of the module doc.

    `styles`: gives the texts of the local class and style files (`snapshot.local_styles`) when they were read
    already."""
    named = engine_from_magic(root_text)
    if named:
        return named, "its `% !TEX program` comment"
    configured = latexmkrc_engine(root.parent)
    if configured:
        return configured, "$pdf_mode in its latexmkrc"
    loaded = styles() if styles is not None else read_local_styles(root, root_text)
    needs = {preamble_engine(root_text), *(package_engine(text) for text in loaded)}
    for engine in ("lualatex", "xelatex"):
        if engine in needs:
            return engine, "the packages it loads"
    return None, "nothing it loads needs a Unicode engine"
