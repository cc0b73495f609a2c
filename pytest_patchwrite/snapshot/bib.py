"""Bibliographies: `.bib` files through bibtexparser v2, found as bibtex and biber find them.

A pure reader: a name not beside the manuscript is looked up in the TeX tree by the function the caller hands
over (`kpse.find`, which runs kpsewhich in the sandbox), so reading a manuscript starts no process here.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import bibtexparser
from bibtexparser.model import DuplicateBlockKeyBlock, DuplicateFieldKeyBlock

from ..errors import InputError
from ..files import envfaults
from ..files.inputs import decode, read_held
from ..files.paths import Boundary, OutsideTree


@dataclass
class Bibliography:
    """The keys a manuscript's bibliographies define, where each was defined, what failed to parse, what repeats."""

    keys: dict[str, str] = field(default_factory=dict)
    files: list[Path] = field(default_factory=list)
    problems: list[tuple[str, int, str]] = field(default_factory=list)
    duplicates: list[tuple[str, int, str]] = field(default_factory=list)
    #: where a declared bibliography was refused (`file:line`, outside the tree): a cite then says so
    refused: list[str] = field(default_factory=list)

    def lookup_case(self, key: str) -> str | None:
        """Return a defined key that differs from `key` only in case, or None."""
        lowered = key.lower()
        for defined in self.keys:
            if defined.lower() == lowered and defined != key:
                return defined
        return None


BibKeys = tuple[dict[str, str], list[tuple[str, int, str]], list[tuple[str, int, str]]]
#: the TeX tree lookup `resolve_bib` is handed: (file name, trusted) -> the path kpsewhich finds, or None
TexTree = Callable[[str, bool], str | None]


#: parsed `.bib` files kept per process, keyed by name and content hash: the same bytes are parsed once
_PARSED: OrderedDict[tuple[str, bytes], BibKeys] = OrderedDict()
_CACHED_BIBS = 8


def load_bib(path: Path, held: dict[Path, bytes] | None = None) -> BibKeys:
    """Return what `parse_bib_text` finds in one `.bib` (treat it as read-only): parsed once per content, its bytes read
    once per check (`held`: the snapshot's store of bytes already read, see `inputs.read_held`)."""
    data = read_held(path, "bib", held)
    key = (str(path), hashlib.sha256(data).digest())
    if key in _PARSED:
        _PARSED.move_to_end(key)
        return _PARSED[key]
    try:
        parsed = parse_bib_text(path, decode(data, path))
    except MemoryError:
        raise envfaults.out_of_memory(str(path), "this bibliography") from None
    except RecursionError:
        raise InputError(path, f"({envfaults.shown_size(str(path))}) is nested too deeply to be parsed") from None
    _PARSED[key] = parsed
    while len(_PARSED) > _CACHED_BIBS:
        _PARSED.popitem(last=False)
    return parsed


def entry_fields(text: str) -> dict[str, tuple[int, dict[str, str]]]:
    """Return {key: (line, {field: value})} of a `.bib`'s entries (the first of a repeated key), values with their
    whitespace runs made one space: what a citation of the key points at."""
    with _quiet(logging.getLogger("bibtexparser")):
        library = bibtexparser.parse_string(text, parse_stack=[])
    out: dict[str, tuple[int, dict[str, str]]] = {}
    for entry in library.entries:
        fields = {f.key.lower(): " ".join(str(f.value).split()) for f in entry.fields}
        out.setdefault(entry.key, ((entry.start_line or 0) + 1, {"@type": entry.entry_type.lower(), **fields}))
    return out


def parse_bib_text(path: Path, text: str) -> BibKeys:
    """Return ({key: "file:line"}, [(file, line, problem)], [(file, line, repeated key)]) for one `.bib`'s text, read
    as the `.bib` at `path` (a base revision's, say).

    Blocks bibtexparser cannot parse are problems, located at their line; the
    entries it did parse still count. A repeated `@string` is nothing (bibtex
    lets the later one win); a repeated entry key is listed apart: bibtex and
    biber warn, keep the first and build the paper.
    """
    # keys and failed blocks come from the splitter; the default middlewares (string interpolation,
    # brace removal) only rewrite field values, which the locks never read, and cost 40% of the time
    with _quiet(logging.getLogger("bibtexparser")):  # its own lines on stderr; the detail goes into the problem
        library = bibtexparser.parse_string(text, parse_stack=[])
    keys = {entry.key: f"{path}:{(entry.start_line or 0) + 1}" for entry in library.entries}
    problems: list[tuple[str, int, str]] = []
    duplicates: list[tuple[str, int, str]] = []
    for block in library.failed_blocks:
        line = (block.start_line or 0) + 1
        raw = (block.raw or "").lstrip().lower()
        if isinstance(block, DuplicateBlockKeyBlock):
            if not raw.startswith("@string"):
                duplicates.append((str(path), line, block.key))
            continue
        if isinstance(block, DuplicateFieldKeyBlock):
            # bibtex keeps the entry (and warns); bibtexparser parked it as `ignore_error_block`
            key = getattr(block.ignore_error_block, "key", None)
            if key:
                keys.setdefault(key, f"{path}:{line}")
            continue
        problems.append((str(path), line, _failure(getattr(block, "error", None), text, line)))
    return keys, problems, duplicates


def _failure(error: object, text: str, line: int) -> str:
    """Return what bibtexparser found wrong with a block that starts at `line`, as one line."""
    reason = getattr(error, "abort_reason", None) or str(error or "")
    lines = [item.strip() for item in str(reason).splitlines() if item.strip()]
    if not lines:
        return f"cannot be parsed ({type(error).__name__})"
    end = getattr(error, "end_index", None)
    stopped = text[:end].rstrip().count("\n") + 1 if isinstance(end, int) else 0
    where = f" (parsing stopped at line {stopped})" if stopped > line else ""
    return f"cannot be parsed: {lines[0]}{where}"


@contextmanager
def _quiet(logger: logging.Logger) -> Iterator[None]:
    """Keep `logger`'s warnings off stderr for the duration (Python's last-resort handler prints them raw)."""
    previous = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        logger.setLevel(previous)


def resolve_bib(name: str, directory: Path, boundary: Boundary | None = None, *, tex_tree: TexTree) -> Path | None:
    """Return the file `\\bibliography{name}` reads: beside the manuscript, else from the TeX tree (`tex_tree`,
    given the file name and whether the boundary is trusted: `kpse.find`).

    Raise OutsideTree when the name leads outside the manuscript's repository, names
    a variable or `~` (kpathsea would expand them), or could be read as an option.
    """
    boundary = boundary or Boundary.for_directory(directory)
    name = name.strip()
    if not boundary.trusted and (not name or name[0] in "-&" or any(c in name for c in "$~\\\0\n")):
        raise OutsideTree(name, "names a variable, `~` or an option, which kpathsea would expand; it is not read")
    if "\0" in name or not name:
        return None  # no file has such a name (and a NUL would stop os.stat and subprocess)
    filename = name if name.endswith(".bib") else f"{name}.bib"
    local = directory / filename
    if os.path.lexists(local):
        return boundary.require(local, name, shared=True) if local.is_file() else None
    if "/" in filename:
        return None
    found = tex_tree(filename, boundary.trusted)
    if not found:
        return None
    path = Path(found)
    if boundary.allowed(path, shared=True, tex_tree=True) is None:
        raise OutsideTree(name, boundary.why_refused(path, shared=True))
    return path


def load_bibliography(paths: list[Path], held: dict[Path, bytes] | None = None) -> Bibliography:
    """Return the union of the keys of several `.bib` files (`held`: as in `load_bib`)."""
    bibliography = Bibliography()
    for path in paths:
        keys, problems, duplicates = load_bib(path, held)
        for key, where in keys.items():
            bibliography.keys.setdefault(key, where)
        bibliography.problems.extend(problems)
        bibliography.duplicates.extend(duplicates)
        bibliography.files.append(path)
    return bibliography
