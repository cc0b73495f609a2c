"""A manuscript's reference list: cited keys in order of first citation, resolved to what a judge reads."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import bibtexparser
from pylatexenc.latex2text import (  # type: ignore[import-untyped,unused-ignore]
    LatexNodes2Text,
    MacroTextSpec,
    get_default_latex_context_db,
)

from ..engine import kpse
from ..errors import InputError
from ..files.inputs import read_text
from ..files.paths import Boundary, OutsideTree
from ..gates.evidence import EvidenceConfig
from ..snapshot.bib import resolve_bib
from ..snapshot.manuscript import Manuscript
from ..tex.latex import scan
from ..tex.texmask import mask
from .sections import Reader, flatten

_DOI = re.compile(r"(10\.\d{4,9}/\S+)", re.IGNORECASE)
_DOI_PREFIX = re.compile(r"^(?:doi:\s*|https?://(?:dx\.)?doi\.org/)", re.IGNORECASE)
_ARXIV_DOI = re.compile(r"^10\.48550/arxiv\.(.+)$", re.IGNORECASE)
_ARXIV_NEW = r"\d{4}\.\d{4,5}"
_ARXIV_OLD = r"[a-z][a-z.\-]*(?:\.[A-Z]{2})?/\d{7}"
_ARXIV = re.compile(rf"(?:arxiv[:\s./]*(?:abs/|pdf/)?\s*)?({_ARXIV_NEW}|{_ARXIV_OLD})(?:v\d+)?", re.IGNORECASE)
_ARXIV_IN_TEXT = re.compile(
    rf"arxiv(?:\.org/(?:abs|pdf)/|\s*:\s*|\s+(?:preprint\s+)?(?:arxiv:)?)\s*({_ARXIV_NEW}|{_ARXIV_OLD})(?:v\d+)?",
    re.IGNORECASE,
)  # noqa: E501
_YEAR = re.compile(r"\b(1[5-9]\d\d|20\d\d)\b")
_BIBITEM = re.compile(r"\\bibitem\s*(?:\[[^\]]*\])?\s*\{([^{}]+)\}")
_NEWBLOCK = re.compile(r"\\newblock\b")


@lru_cache(maxsize=1)
def _converter() -> LatexNodes2Text:
    # logos are words of a title ("The TeXbook"); pylatexenc drops macros it does not know
    logos = ("TeX", "LaTeX", "LaTeXe", "BibTeX", "XeTeX", "LuaTeX", "ConTeXt", "AmS", "AMS")
    context = get_default_latex_context_db()
    context.add_context_category(
        "patchwrite-logos",
        macros=[MacroTextSpec(name, name.replace("LaTeXe", "LaTeX2e")) for name in logos],
        prepend=True,
    )
    return LatexNodes2Text(latex_context=context, math_mode="text", strict_latex_spaces=True)


def latex_to_text(value: str) -> str:
    """Return LaTeX markup as plain text (accents decoded by pylatexenc), whitespace collapsed."""
    try:
        text = _converter().latex_to_text(value)
    except Exception:  # pylatexenc is lenient, but a stranger's title must never stop the run
        text = re.sub(r"\\[A-Za-z]+|[{}\\]", "", value)
    return " ".join(text.split())


def normalize_title(title: str) -> str:
    """Return the matching form of a title: LaTeX decoded, NFKD, casefolded, only [a-z0-9] kept."""
    text = unicodedata.normalize("NFKD", latex_to_text(title)).casefold()
    return re.sub(r"[^a-z0-9]", "", text)


def normalize_doi(value: str) -> str | None:
    """Return a DOI without `doi:` or resolver prefixes, casefolded; None when `value` holds none."""
    value = _DOI_PREFIX.sub("", value.strip())
    m = _DOI.search(value)
    return m.group(1).rstrip(".,;}").casefold() if m else None


def normalize_arxiv(value: str) -> str | None:
    """Return an arXiv id without its version suffix (new `2101.00001` or old `math/0309136`); None if absent."""
    m = _ARXIV.fullmatch(value.strip())
    return m.group(1).casefold() if m else None


@dataclass
class Reference:
    """One cited work as a judge sees it, with the identifiers used to match it."""

    num: int
    key: str
    title: str = ""
    authors: list[str] = field(default_factory=list)
    year: str = ""
    venue: str = ""
    doi: str | None = None
    arxiv: str | None = None
    external: str | None = None
    resolved: bool = True
    norm_title: str = ""

    @property
    def id(self) -> str | None:
        """Return the identity key: DOI, else arXiv id, else an external id, else the normalized title."""
        if self.doi:
            return f"doi:{self.doi}"
        if self.arxiv:
            return f"arxiv:{self.arxiv}"
        if self.external:
            return f"ext:{self.external}"
        return f"title:{self.norm_title}" if self.norm_title else None

    def line(self) -> str:
        """Return the numbered line a judge reads: `3. Vaswani et al. (2017) Title. Venue.`"""
        if not self.resolved:
            return f"{self.num}. [{self.key}: not found in the bibliography]"
        who = self.authors[0].split(",")[0].strip() if self.authors else ""
        who = f"{who} et al." if len(self.authors) > 2 else " and ".join(a.split(",")[0].strip() for a in self.authors)
        parts = [p for p in (who, f"({self.year})" if self.year else "") if p]
        head = " ".join(parts)
        tail = ". ".join(p for p in (self.title, self.venue) if p)
        return f"{self.num}. {head + ' ' if head else ''}{tail}.".replace("..", ".")

    def to_json(self) -> dict[str, Any]:
        """Return the `rate refs --json` object of one reference."""
        return {"num": self.num, "key": self.key, "title": self.title, "year": self.year or None,
                "doi": self.doi, "arxiv": self.arxiv, "id": self.id}  # fmt: skip


def _field(fields: dict[str, str], *names: str) -> str:
    for name in names:
        if fields.get(name):
            return str(fields[name])
    return ""


def reference_from_fields(num: int, key: str, fields: dict[str, str]) -> Reference:
    """Return the reference a bib entry's fields describe (fields keyed in lower case)."""
    title = latex_to_text(_field(fields, "title"))
    authors = [latex_to_text(a) for a in re.split(r"\s+and\s+", _field(fields, "author", "editor")) if a.strip()]
    year = _field(fields, "year", "date")[:4]
    venue = latex_to_text(_field(fields, "journal", "journaltitle", "booktitle", "publisher", "institution"))
    doi = normalize_doi(_field(fields, "doi")) if fields.get("doi") else None
    url = _field(fields, "url")
    if doi is None and "doi.org/" in url:
        doi = normalize_doi(url)
    arxiv = None
    if doi and (m := _ARXIV_DOI.match(doi)):
        arxiv, doi = normalize_arxiv(m.group(1)), None
    prefix = _field(fields, "archiveprefix", "eprinttype").casefold()
    if fields.get("eprint") and prefix in ("arxiv", ""):
        arxiv = arxiv or normalize_arxiv(fields["eprint"])
    for text in (url, _field(fields, "journal", "journaltitle"), _field(fields, "note", "howpublished")):
        if arxiv is None and (m := _ARXIV_IN_TEXT.search(text)):
            arxiv = m.group(1).casefold()
    return Reference(num, key, title, authors, year if year.isdigit() else "", venue, doi, arxiv,
                     norm_title=normalize_title(title))  # fmt: skip


def reference_from_bibitem(num: int, key: str, text: str) -> Reference:
    """Return the reference a `\\bibitem` describes: title from `\\newblock` layout or quotes, else the whole text."""
    blocks = [b.strip() for b in _NEWBLOCK.split(text) if b.strip()]
    quoted = re.search(r"``(.+?)''|\"(.+?)\"", text, re.DOTALL)
    if len(blocks) >= 2:
        title_src = blocks[1]
    elif quoted:
        title_src = quoted.group(1) or quoted.group(2)
    else:
        title_src = text
    title = latex_to_text(title_src).strip(" .,")
    plain = latex_to_text(text)
    authors = [latex_to_text(blocks[0]).strip(" .")] if len(blocks) >= 2 else []
    doi = normalize_doi(plain) if re.search(r"10\.\d{4,9}/", plain) else None
    m = _ARXIV_IN_TEXT.search(plain)
    years = _YEAR.findall(plain)
    arxiv = m.group(1).casefold() if m else None
    year = years[-1] if years else ""
    return Reference(num, key, title, authors, year, "", doi, arxiv, norm_title=normalize_title(title))


def _entries(paths: list[Path]) -> dict[str, dict[str, str]]:
    entries: dict[str, dict[str, str]] = {}
    for path in paths:
        try:
            library = bibtexparser.parse_string(read_text(path))
        except InputError:
            raise
        except Exception as exc:  # a stranger's .bib must end in a message naming it, not a traceback
            raise InputError(path, f"cannot be parsed as BibTeX ({type(exc).__name__}: {exc})") from None
        for entry in library.entries:
            fields = {f.key.lower(): str(f.value) for f in entry.fields}
            entries.setdefault(entry.key, fields)
    return entries


def _bibitems(flat: str) -> dict[str, str]:
    masked = mask(flat)[0]
    items: dict[str, str] = {}
    matches = list(_BIBITEM.finditer(masked))
    for i, m in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(masked)
        body = flat[m.end() : end].split("\\end{thebibliography}")[0]
        items.setdefault(m.group(1).strip(), " ".join(body.split()))
    return items


@dataclass
class ReferenceList:
    """A manuscript's references in order of first citation, and the bibliographies they came from."""

    path: Path
    references: list[Reference]
    bib_files: list[Path]
    missing_bibs: list[str]

    @property
    def unresolved(self) -> list[Reference]:
        """Return the cited keys that no bibliography or `\\bibitem` defines."""
        return [r for r in self.references if not r.resolved]

    def unique_works(self) -> int:
        """Return how many distinct works are cited (duplicates folded; unresolved keys count once each)."""
        return len({r.id if r.id else f"key:{r.key}" for r in self.references})

    def to_json(self) -> dict[str, Any]:
        """Return the `rate refs --json` object."""
        return {"references": [r.to_json() for r in self.references]}


def load_references(root: Path | str | Manuscript, reader: Reader | None = None) -> ReferenceList:
    """Return the numbered reference list of the manuscript rooted at `root` (`\\nocite{*}` adds every entry).

    Give the snapshot (a `Manuscript`): its texts are read, not the disk, and its boundary bounds the bibliographies.
    """
    boundary: Boundary | None = None
    if isinstance(root, Manuscript):
        held, boundary = root.texts, root.boundary
        reader, root = held.get, root.root
    root = Path(root)
    flat = flatten(root, reader)
    found = scan(flat, str(root))
    resolved = root.resolve()
    # magic comments (`% !patchwrite bib = ...`) sit at the top of the root, so the flat text carries them
    flat_snapshot = Manuscript(resolved, [resolved], {resolved: flat})
    config = EvidenceConfig().for_manuscript(flat_snapshot)
    paths: list[Path] = []
    missing: list[str] = []
    boundary = boundary or flat_snapshot.boundary  # the caller's snapshot's, else the one the flat one made
    for name, _line in found.bibliographies:
        try:
            path = resolve_bib(name, resolved.parent, boundary, tex_tree=kpse.find)
        except OutsideTree:
            path = None  # named outside the manuscript's tree: listed as missing, never read
        if path is None:
            missing.append(name)
        elif path not in paths:
            paths.append(path)
    paths.extend(p for p in config.bibs if p not in paths and boundary.allowed(p, shared=True) and p.is_file())
    entries = _entries(paths)
    items = _bibitems(flat)
    keys: list[str] = []
    for cite in found.citations:
        if cite.key == "*":
            keys.extend(entries)
            keys.extend(items)
        else:
            keys.append(cite.key)
    references: list[Reference] = []
    for key in dict.fromkeys(keys):
        num = len(references) + 1
        if key in entries:
            references.append(reference_from_fields(num, key, entries[key]))
        elif key in items:
            references.append(reference_from_bibitem(num, key, items[key]))
        else:
            references.append(Reference(num, key, resolved=False))
    return ReferenceList(root, references, paths, missing)


def judge_listing(refs: ReferenceList) -> str:
    """Return the numbered lines a judge reads, one reference a line."""
    return "\n".join(r.line() for r in refs.references)
