"""The cite lock: which keys a manuscript may cite, and the cited keys no bibliography defines.

The keys come from the bibliographies the sources declare, the configuration's (`patchwrite_bib`,
`% !patchwrite bib`), the ones bibtex or biber used in the snapshot's compile (its stage two, also one named
through a macro) and the `\\bibitem`s. The cited keys are the static scan's (`latex.scan`, every citation command
it knows and the manuscript's own wrappers) plus, after a compile, the keys the engine cited (the job's `.aux` and
`.bcf`): a command out of the scanner's sight cites too.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..engine import kpse
from ..files.paths import OutsideTree
from ..model import ERROR, WARNING, Violation, display_path
from ..snapshot.bib import Bibliography, load_bibliography, resolve_bib
from ..snapshot.manuscript import Manuscript
from ..tex.latex import Scan, key_lines, key_places
from ..tex.magic import magic_line
from ..tex.texinputs import bib_backend


def declared_at(manuscript: Manuscript, key: str, config_text: str) -> tuple[str, int]:
    """Return (file, line) of the root's `% !patchwrite key = ...` comment in the text the configuration was read
    from (HEAD's root when a HEAD judges; line 0: declared by configuration)."""
    return str(manuscript.root), magic_line(config_text, f"patchwrite.{key}") or 0


def name_list(paths: list[Path]) -> str:
    """Return the files' names, comma-separated, or `none`."""
    return ", ".join(p.name for p in paths) or "none"


def engine_bibliographies(manuscript: Manuscript) -> list[Path]:
    """Return the real paths of the bibliographies the snapshot's compile used (its record), inside the repository
    or the TeX tree; [] before a compile.

    A class may name its bibliography through a macro (ReScience C: `\\addbibresource{\\articleBIBLIOGRAPHY}`,
    the macro set in `metadata.tex`); the engine's record (`\\bibdata`, the `.bcf`) has the name it resolved.
    """
    record = manuscript.record
    if record is None:
        return []
    if record.resolved is None:
        boundary = manuscript.boundary
        found: list[Path] = []
        for name in record.bibliographies:
            try:
                path = resolve_bib(name, manuscript.directory, boundary, tex_tree=kpse.find)
            except OutsideTree:
                continue  # the source's reading reports it where it is declared, if it is
            if path is not None and path not in found:
                found.append(path)
        record.resolved = found
    return list(record.resolved)


def bibliography_of(
    manuscript: Manuscript, scans: list[Scan], declared_bibs: list[Path], config_text: str
) -> tuple[Bibliography, list[Violation]]:
    """Return (the keys the manuscript may cite, the problems of its bibliographies): what the sources declare,
    the configuration's `declared_bibs` (`patchwrite_bib`, `% !patchwrite bib`), the bibliographies the compile
    used (stage two) and the `\\bibitem`s."""
    problems: list[Violation] = []
    paths: list[Path] = []
    boundary = manuscript.boundary
    for s in scans:
        for name, line in s.bibliographies:
            try:
                found = resolve_bib(name, manuscript.directory, boundary, tex_tree=kpse.find)
            except OutsideTree as exc:
                problems.append(Violation("outside_tree", s.file, line, name, exc.why))
                continue
            if found is None:
                message = "is declared but not found beside the manuscript nor by kpsewhich"
                problems.append(Violation("missing_bib", s.file, line, name, message))
            elif found not in paths:
                paths.append(found)
    for declared in declared_bibs:
        if boundary.allowed(declared, shared=True) is None:
            where, line = declared_at(manuscript, "bib", config_text)
            why = boundary.why_refused(declared, shared=True)
            problems.append(Violation("outside_tree", where, line, str(declared), why))
        elif not declared.is_file():
            where, line = declared_at(manuscript, "bib", config_text)
            problems.append(
                Violation("missing_bib", where, line, display_path(declared, manuscript.directory), _missing(declared))
            )
        elif declared not in paths:
            paths.append(declared)
    # stage two: the bibliographies bibtex or biber used, also one named through a macro; they add to what the
    # source and the configuration declare, never replace it
    engine_bibs = engine_bibliographies(manuscript)
    paths.extend(path for path in engine_bibs if path not in paths)
    problems.extend(_unread(manuscript, declared_bibs, config_text, engine_bibs))
    bibliography = load_bibliography(paths, manuscript.data)
    bibliography.refused = [f"{display_path(v.file, manuscript.directory)}:{v.line}" for v in problems
                            if v.kind == "outside_tree"]  # fmt: skip
    problems.extend(Violation("bib_error", file, line, "", message) for file, line, message in bibliography.problems)
    for file, line, key in bibliography.duplicates:
        message = "is defined twice; bibtex and biber warn and keep the first entry"
        problems.append(Violation("duplicate_entry", file, line, key, message, WARNING))
    for s in scans:
        for key, line in s.bibitems:
            bibliography.keys.setdefault(key, f"{s.file}:{line}")
    return bibliography, problems


def _missing(declared: Path) -> str:
    """Return why a declared bibliography cannot be read, with the name bibtex would have tried."""
    message = "is declared as a bibliography (patchwrite_bib, `% !patchwrite bib`) but no such file exists"
    if declared.suffix != ".bib" and declared.with_name(declared.name + ".bib").is_file():
        message += f"; did you mean {declared.name}.bib?"
    return message


def _unread(manuscript: Manuscript, declared_bibs: list[Path], config_text: str, used: list[Path]) -> list[Violation]:
    """Return a warning per declared bibliography (`patchwrite_bib`, `% !patchwrite bib`) the passing compile's
    bibtex or biber never read: its keys still count, but no citation of the document was resolved from them."""
    record = manuscript.record
    if record is None or not record.passed:
        return []
    boundary = manuscript.boundary
    out: list[Violation] = []
    for declared in declared_bibs:
        real = boundary.allowed(declared, shared=True)  # one outside is reported as such (`_bibliography`)
        if real is not None and real.is_file() and real not in used:
            where, line = declared_at(manuscript, "bib", config_text)
            tool = "bibtex or biber" if record.bibliographies else "no bibliography tool (none ran)"
            message = (f"is declared as a bibliography but the compile's {tool} never read it: its keys count for "
                       "the cite lock, none of them was typeset")  # fmt: skip
            out.append(Violation("unread_bib", where, line, str(declared), message, WARNING))
    return out


def _undefined(key: str, file: str, line: int, bibliography: Bibliography, backend: str, note: str = "") -> Violation:
    """Return the violation of a cited key the bibliography does not define (`case_mismatch` under bibtex)."""
    other = bibliography.lookup_case(key)
    if other and backend == "bibtex":
        message = f"differs only in case from {other}: bibtex resolves it, biber would not"
        return Violation("case_mismatch", file, line, key, message + note, WARNING)
    if other:
        message = f"is not defined; {other} differs only in case (biber does not resolve it)"
    elif not bibliography.files and not bibliography.keys and bibliography.refused:
        where = ", ".join(bibliography.refused)
        message = f"is cited but the only bibliography declared is refused (outside_tree at {where}): no key is defined"
    elif not bibliography.files and not bibliography.keys:
        message = "is cited but no bibliography is declared (\\bibliography, \\addbibresource, patchwrite_bib)"
    else:
        message = f"is not defined (bib: {name_list(bibliography.files)}; {len(bibliography.keys)} keys defined)"
    return Violation("unknown_cite", file, line, key, message + note, ERROR)


def _recorded_cites(
    manuscript: Manuscript, scans: list[Scan], bibliography: Bibliography, backend: str
) -> list[Violation]:
    """Return the violations of the keys the compile cited (its `.aux`/`.bcf`) that no citation command of the
    source's scan cites and no bibliography defines: a `\\shortcite` defined out of sight, a class macro.

    Each is located at every line of the tree where the key stands as an argument, else at the root (line 0);
    the static scan's keys are its own (one violation per key and line).
    """
    record = manuscript.record
    if record is None or not record.cited:
        return []
    # as TeX reads a key: a `%` comment's line end and the next line's blanks are no part of it
    static = {as_read(cite.key) for s in scans for cite in s.citations}
    # keys the job defined itself (REVTeX's footnotes in `<job>Notes.bib`, a class's own `\bibcite`) resolve only
    # what the scan does not read from the source: a key typed in a `\cite` needs a bibliography or a `\bibitem`
    own = set(record.defined or ())
    revtex = bool(_REVTEX.search(manuscript.texts[manuscript.root]))
    out: list[Violation] = []
    for key in record.cited:
        if as_read(key) in static or key in bibliography.keys or key in own:
            continue
        places = [(s.file, line, command) for path, s in zip(manuscript.files, scans, strict=True)
                  for line, command in key_places(manuscript.texts[path], key)
                  if not s.is_suppressed(line, "cite")]  # fmt: skip
        if not places and not any(key_lines(text, key) for text in manuscript.texts.values()):
            places = [(str(manuscript.root), 0, "")]  # written nowhere in the tree (a macro builds it): at the root
        for file, line, command in places:
            note = "; the compile cited it (its .aux), " + _cited_through(key, command, revtex)
            out.append(_undefined(key, file, line, bibliography, backend, note))
    return out


_REVTEX = re.compile(r"\\documentclass\s*(?:\[[^\]]*\])?\s*\{\s*revtex")
_FOOTNOTE_KEY = re.compile(r"Note\d+")


def _cited_through(key: str, command: str, revtex: bool) -> str:
    """Return what produced a key only the compile's record cites: a REVTeX footnote, the command whose argument it
    is (`key_places`), or a command the scan does not know."""
    if revtex and _FOOTNOTE_KEY.fullmatch(key):
        return ("as a REVTeX footnote (the class writes each footnote to the job's own Notes.bib, which bibtex did "
                "not read)")  # fmt: skip
    if command:
        return f"through \\{command}, a command the scan does not read as a citation"
    return "through a command the scan does not know"


def not_citing(manuscript: Manuscript, scans: list[Scan]) -> set[str]:
    """Return the commands the scan reads as citations whose keys the passing compile never cited: no citation of
    this document (`\\citename` under acl2012.sty formats a name inside a label). Without the record of a passing
    compile that wrote its `.aux`/`.bcf`, none: the scan's rule stands."""
    record = manuscript.record
    if record is None or not record.passed or not record.cites_recorded or record.cited is None:
        return set()
    recorded = {as_read(key) for key in record.cited}
    commands = {cite.command for s in scans for cite in s.citations if cite.key != "*"}
    reaching = {cite.command for s in scans for cite in s.citations if as_read(cite.key) in recorded}
    return commands - reaching


def as_read(key: str) -> str:
    """Return a cite key as TeX reads it, for comparing: a `%` comment's line end and the blanks after are no part."""
    return re.sub(r"\s+", "", key)


def cite_violations(
    manuscript: Manuscript, scans: list[Scan], bibliography: Bibliography
) -> tuple[list[Violation], list[Violation]]:
    """Return (every cite violation, those of them only the compile's record shows): the cited keys that
    `bibliography` does not define, each at its line (`case_mismatch` a warning under bibtex)."""
    backend = bib_backend(manuscript.texts[manuscript.root])
    out: list[Violation] = []
    ignored = not_citing(manuscript, scans)
    for s in scans:
        for cite in s.citations:
            if cite.key == "*" or cite.key in bibliography.keys or s.is_suppressed(cite.line, "cite"):
                continue
            if cite.command in ignored:
                continue
            out.append(_undefined(cite.key, cite.file, cite.line, bibliography, backend))
    recorded = _recorded_cites(manuscript, scans, bibliography, backend)
    return out + recorded, recorded
