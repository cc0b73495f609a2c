"""The engine's own record of a compile: the files it opened (`-recorder`'s `.fls`) and the bibliographies
bibtex or biber were asked to read (`\\bibdata` in the `.aux` files, the datasources of the `.bcf`).

This record, not our reading of the source, is the truth about which files and bibliographies a
manuscript uses: a bibliography named through a macro (`\\addbibresource{\\articleBIBLIOGRAPHY}`)
or a file read as `\\input{fig.pgf}` shows up here with the name the engine resolved.
"""

from __future__ import annotations

import html
import os
import re
from pathlib import Path, PurePosixPath

from .. import sandbox, sandboxcmd
from ..texlog import Recording, log_inputs, parse_fls
from .rerun import bib_input, read_log

_BIBDATA = re.compile(r"\\bibdata\{(?P<names>[^}]*)\}")
_DATASOURCE = re.compile(r"<bcf:datasource\b(?P<attrs>[^>]*)>(?P<name>[^<]*)</bcf:datasource>")


def recording(work: Path, job: str) -> Recording:
    """Return what the last engine run's `.fls` lists (empty when the run wrote none)."""
    return parse_fls(read_log(work / f"{job}.fls"))


def tree_inputs(record: Recording, work: Path, job: str) -> list[str]:
    """Return the files of the copy the engine read, relative to `work` (POSIX form), job files left out.

    A system file (a class from the TeX tree) is no file of the manuscript; a mirrored file above
    the paper (`../refs.bib`) is.
    """
    tree = sandbox.owning_job_directory(work) or work
    tops = ((sandboxcmd.TREE, str(Path(sandboxcmd.TREE) / work.relative_to(tree))), (str(tree), str(work)))
    found: dict[str, None] = {}
    for name in record.inputs:
        if os.path.isabs(name):
            cwd = next((cwd for top, cwd in tops if name.startswith(top.rstrip("/") + "/")), None)
            if cwd is None:
                continue
            name = os.path.relpath(name, cwd)
        relative = PurePosixPath(os.path.normpath(name)).as_posix()
        if not relative.startswith(f"{job}."):
            found.setdefault(relative, None)
    return list(found)


# what the engine reads that is code or data, not typeset text: classes, packages, fonts, graphics
_NOT_TYPESET = frozenset(
    ".cls .sty .def .cfg .clo .fd .ldf .bbx .cbx .lbx .dbx .bst .ist .map .enc .tfm .vf .pfb .otf .ttf .ttc "
    ".pdf .png .jpg .jpeg .eps .ps .svg .gif .bmp .tif .tiff .jbig2 .bib .bbl .aux .toc .lof .lot .out .nav .snm "
    ".csv .tsv .dat .json .yaml .yml .xml".split()
)


def typeset_inputs(inputs: list[str], log: str, record: Recording) -> list[str]:
    """Return the files of `inputs` (see `tree_inputs`) the engine typeset: opened with `\\input` (its log shows
    them), whatever their name (`part.txt`, `fig.pgf`, no extension), but no class, package, font or graphic."""
    opened = {PurePosixPath(os.path.normpath(name)).as_posix() for name in log_inputs(log, record.inputs)}
    return [rel for rel in inputs if rel in opened and PurePosixPath(rel).suffix.lower() not in _NOT_TYPESET]


def bibliographies(work: Path, job: str, tool: str | None) -> list[str]:
    """Return the bibliography names the tool was asked to read, relative to `work`, `.bib` added as bibtex does.

    bibtex: the `\\bibdata` of the job's `.aux` and of the `.aux` files it inputs (an `\\include`'d
    file's); biber: the file datasources of the `.bcf` (remote ones are never fetched, so never named).
    """
    names: dict[str, None] = {}
    if tool == "bibtex":
        for match in _BIBDATA.finditer(bib_input(work, job, "bibtex") or ""):
            for name in match.group("names").split(","):
                if name.strip():
                    name = name.strip()
                    names.setdefault(name if name.endswith(".bib") else f"{name}.bib", None)
    elif tool == "biber":
        for match in _DATASOURCE.finditer(read_log(work / f"{job}.bcf")):
            attrs = match.group("attrs")
            if 'type="file"' in attrs or "type=" not in attrs:
                names.setdefault(html.unescape(match.group("name").strip()), None)
    return [name for name in names if name]
