"""Bibliographies: `.bib` files through bibtexparser v2, found as bibtex and biber find them."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import bibtexparser

from .transaction import InputError, read_text


class BibError(InputError):
    """A `.bib` that could not be fully parsed; the message lists each failed block's line."""


@dataclass
class Bibliography:
    """The keys a manuscript's bibliographies define, with where each was defined."""

    keys: dict[str, str] = field(default_factory=dict)
    files: list[Path] = field(default_factory=list)

    def lookup_case(self, key: str) -> str | None:
        """Return a defined key that differs from `key` only in case, or None."""
        lowered = key.lower()
        for defined in self.keys:
            if defined.lower() == lowered and defined != key:
                return defined
        return None


def load_bib(path: Path) -> dict[str, str]:
    """Return {key: "file:line"} for every entry of a `.bib`; raise BibError on blocks it cannot parse."""
    text = read_text(path)
    library = bibtexparser.parse_string(text)
    if library.failed_blocks:
        problems = []
        for block in library.failed_blocks:
            first = str(block.error).splitlines()[0] if getattr(block, "error", None) else "cannot be parsed"
            problems.append(f"{path}:{block.start_line + 1}: {first}")
        raise BibError(path, "bibtexparser could not parse it:\n" + "\n".join(problems))
    return {entry.key: f"{path}:{entry.start_line + 1}" for entry in library.entries}


def resolve_bib(name: str, directory: Path) -> Path | None:
    """Return the file `\\bibliography{name}` reads: beside the manuscript, else from the TeX tree (kpsewhich)."""
    filename = name if name.endswith(".bib") else f"{name}.bib"
    local = directory / filename
    if local.is_file():
        return local
    if shutil.which("kpsewhich"):
        found = subprocess.run(["kpsewhich", filename], capture_output=True, text=True, cwd=directory, timeout=30)
        if found.returncode == 0 and found.stdout.strip():
            return Path(found.stdout.strip())
    return None


def load_bibliography(paths: list[Path]) -> Bibliography:
    """Return the union of the keys of several `.bib` files."""
    bibliography = Bibliography()
    for path in paths:
        for key, where in load_bib(path).items():
            bibliography.keys.setdefault(key, where)
        bibliography.files.append(path)
    return bibliography
