"""The engine's own record of a compile: the files it opened (`-recorder`'s `.fls`), the bibliographies
bibtex or biber were asked to read (`\\bibdata` in the `.aux` files, the datasources of the `.bcf`) and the
keys it cited (`\\citation` in the `.aux` files, biblatex's `\\abx@aux@cite`, the `.bcf`'s citekeys).

This record, not our reading of the source, is the truth about which files and bibliographies a
manuscript uses: a bibliography named through a macro (`\\addbibresource{\\articleBIBLIOGRAPHY}`)
or a file read as `\\input{fig.pgf}` shows up here with the name the engine resolved.
"""

from __future__ import annotations

import html
import os
import re
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from ..engine import sandbox, sandboxcmd
from ..engine.texlog import LogMessage, Recording, log_inputs, parse_fls
from ..snapshot.bib import parse_bib_text
from .rerun import bib_tool_input, read_log

if TYPE_CHECKING:
    from .report import CompileReport

_BIBDATA = re.compile(r"\\bibdata\{(?P<names>[^}]*)\}")
_DATASOURCE = re.compile(r"<bcf:datasource\b(?P<attrs>[^>]*)>(?P<name>[^<]*)</bcf:datasource>")
_CITATION = re.compile(r"^\\citation\{(?P<keys>[^}]*)\}", re.MULTILINE)
# biblatex: `\abx@aux@cite{<refsection>}{key}` (3.x), `\abx@aux@cite{key}` (older)
_ABX_CITE = re.compile(r"^\\abx@aux@cite(?:\{[^{}]*\})?\{(?P<key>[^{}]*)\}\s*$", re.MULTILINE)
_CITEKEY = re.compile(r"<bcf:citekey\b[^>]*>(?P<key>[^<]*)</bcf:citekey>")
_AUX_INPUT = re.compile(r"\\@input\{(?P<name>[^}]+)\}")
_BIBCITE = re.compile(r"^\\bibcite\{(?P<key>[^{}]*)\}", re.MULTILINE)


def recording(work: Path, job: str) -> Recording:
    """Return what the last engine run's `.fls` lists (empty when the run wrote none)."""
    return parse_fls(read_log(work / f"{job}.fls"))


def tree_inputs(record: Recording, work: Path, job: str) -> list[str]:
    """Return the files of the copy the engine read, relative to `work` (POSIX form), job files left out.

    A system file (a class from the TeX tree) is no file of the manuscript; a mirrored file above
    the paper (`../refs.bib`) is.
    """
    return [rel for rel in _in_copy(record.inputs, work) if not rel.startswith(f"{job}.")]


def _in_copy(names: tuple[str, ...], work: Path) -> list[str]:
    """Return the names of the `.fls` that are files of the copy, relative to `work` (POSIX form), in order."""
    tree = sandbox.owning_job_directory(work) or work
    tops = ((sandboxcmd.TREE, str(Path(sandboxcmd.TREE) / work.relative_to(tree))), (str(tree), str(work)))
    found: dict[str, None] = {}
    for name in names:
        if os.path.isabs(name):
            cwd = next((cwd for top, cwd in tops if name.startswith(top.rstrip("/") + "/")), None)
            if cwd is None:
                continue
            name = os.path.relpath(name, cwd)
        found.setdefault(PurePosixPath(os.path.normpath(name)).as_posix(), None)
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


def bib_record(work: Path, job: str, tool: str | None, record: Recording) -> tuple[list[str], list[str], list[str]]:
    """Return (the bibliography names the tool was asked to read, the keys the last run cited, the keys of the
    `\\bibcite`s in the `.aux` files it wrote), each file read once.

    Bibliographies, relative to `work`, `.bib` added as bibtex does: bibtex's are the `\\bibdata` of the job's
    `.aux` and of the `.aux` files it inputs (an `\\include`'d file's), as bibtex reads them; biber's the file
    datasources of the `.bcf` (remote ones are never fetched, so never named).
    Cited keys, whatever command cited them, first-cited order, `*` left out: the `\\citation` lines (and
    biblatex's `\\abx@aux@cite`) of those `.aux` files, or the `.bcf`'s citekeys under biber. Only files that run
    wrote count for them (its `.fls` OUTPUT lines): an `.aux` the checkout holds, or one a warm start seeded and no
    run rewrote, never names a key.
    """
    written = set(_in_copy(record.outputs, work))
    names: dict[str, None] = {}
    keys: dict[str, None] = {}
    bibcites: dict[str, None] = {}
    bcf = f"{job}.bcf"
    if tool == "biber" or bcf in written:
        text = read_log(work / bcf)
        for match in _DATASOURCE.finditer(text if tool == "biber" else ""):
            attrs = match.group("attrs")
            if 'type="file"' in attrs or "type=" not in attrs:
                names.setdefault(html.unescape(match.group("name").strip()), None)
        if bcf in written:
            keys.update((html.unescape(m.group("key").strip()), None) for m in _CITEKEY.finditer(text))
    if tool == "bibtex" or (f"{job}.aux" in written and bcf not in written):
        pending, seen = [f"{job}.aux"], set()
        while pending:
            name = PurePosixPath(os.path.normpath(pending.pop())).as_posix()
            if name in seen:
                continue
            seen.add(name)
            text = read_log(work / name)
            if tool == "bibtex":
                for match in _BIBDATA.finditer(text):
                    for bib in (b.strip() for b in match.group("names").split(",")):
                        if bib:
                            names.setdefault(bib if bib.endswith(".bib") else f"{bib}.bib", None)
            if name in written and bcf not in written:
                for match in _CITATION.finditer(text):
                    keys.update((key.strip(), None) for key in match.group("keys").split(","))
                keys.update((match.group("key").strip(), None) for match in _ABX_CITE.finditer(text))
            if name in written:
                bibcites.update((_as_read(m.group("key").strip()), None) for m in _BIBCITE.finditer(text))
            pending.extend(m.group("name") for m in _AUX_INPUT.finditer(text))
    cited = dict.fromkeys(_as_read(key) for key in keys)
    return [name for name in names if name], [key for key in cited if key and key != "*"], [k for k in bibcites if k]


def _as_read(key: str) -> str:
    """Return a key as the source spells it: TeX writes a control character to the `.aux` as `^^[` or `^^1b`."""
    key = re.sub(r"\^\^([0-9a-f]{2})", lambda m: chr(int(m.group(1), 16)), key)
    return re.sub(r"\^\^([\x00-\x7f])", lambda m: chr(ord(m.group(1)) ^ 0x40), key)


def job_definitions(
    work: Path, job: str, names: list[str], bibcites: list[str], record: Recording
) -> tuple[list[str], list[str], bool]:
    """Return (the bibliographies of `names` the job wrote itself, the keys the job defined, whether the last run
    wrote the job's `.aux` or `.bcf`: the record of what it cited).

    A class may turn the document's own text into bibliography entries: REVTeX writes each footnote to
    `<job>Notes.bib` (`@FOOTNOTE{Note1, ...}`) and names it in `\\bibdata`. Such a file, written by the last run
    (an OUTPUT of its `.fls`), defines keys; one of that name in the checkout never does (the job overwrote it, and
    it is not resolved from the checkout). The `\\bibcite`s of the `.aux` files the run wrote (`bibcites`, read by
    `bib_record`) define keys too (a class that writes them itself); the caller drops those the run still warned
    about.
    """
    written = set(_in_copy(record.outputs, work))
    own = [name for name in names if PurePosixPath(os.path.normpath(name)).as_posix() in written]
    keys: dict[str, None] = {}
    for name in own:
        found, _problems, _duplicates = parse_bib_text(work / name, read_log(work / name))
        keys.update(dict.fromkeys(found))
    cites_recorded = f"{job}.bcf" in written or f"{job}.aux" in written
    keys.update(dict.fromkeys(bibcites))
    return own, [key for key in keys if key], cites_recorded


def fill(
    report: CompileReport,
    work: Path,
    root_name: str,
    job: str,
    entry: str,
    recorded: Recording,
    asked: tuple[str | None, str | None] | None,
    messages: list[LogMessage],
    resolve: bool,
) -> None:
    """Put the engine's record of the last run into `report`: the files it read and typeset, the bibliographies,
    the keys it cited and defined (when `resolve`; `messages`: the last run's) and the PDF's size; paths relative
    to the root's directory, `entry` (the root's name in the sandbox) as `root_name`. `asked`: the bibliography
    tool and its input, when already read."""
    read_files = tree_inputs(recorded, work, job)
    report.inputs = [root_name if rel == entry else rel for rel in read_files]
    typeset = typeset_inputs(read_files, read_log(work / f"{job}.log"), recorded) if read_files else []
    report.typeset = [root_name if rel == entry else rel for rel in typeset]
    tool = (asked or bib_tool_input(work, job))[0]
    names, cited, bibcites = bib_record(work, job, tool, recorded)
    own, defined, report.cites_recorded = job_definitions(work, job, names, bibcites, recorded)
    report.bibliographies = [name for name in names if name not in own]  # the job's own: never the checkout's
    unresolved = {m.token for m in messages if m.kind == "undefined_citation"}
    report.defined = [key for key in defined if key not in unresolved] if resolve else []
    report.cited = cited if resolve else []
    pdf = work / f"{job}.pdf"
    report.pdf_bytes = pdf.stat().st_size if pdf.exists() else 0
