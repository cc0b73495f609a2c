"""A manuscript as one text (inputs followed in place) and the literature-review sections cut from it."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from ..files.inputs import read_text
from ..files.paths import Boundary
from ..tex.texinputs import input_spans
from ..tex.texmask import command_args, mask

Reader = Callable[[Path], "str | None"]

# section titles that hold the literature review (matched on the casefolded title's words)
REVIEW_TITLES = re.compile(
    r"^(?:\d+(?:\.\d+)*\s+)?(?:introduction|related\s+works?|background(?:\s+and\s+related\s+work)?|prior\s+work|"
    r"previous\s+work|literature\s+review|related\s+literature|background\s+and\s+motivation|"
    r"related\s+work\s+and\s+background)\b"
)
_SECTION = re.compile(r"\\(?:section|chapter)\*?(?=[\s\[{])")
_STOP = re.compile(
    r"\\(?:appendix\b|bibliography\s*\{|printbibliography\b|begin\s*\{thebibliography\}|end\s*\{document\})"
)


def _disk_reader(root: Path) -> Reader:
    """Return a reader of the files under the root's boundary (no dot-files, no links out of the tree)."""
    boundary = Boundary.for_root(root)

    def read(path: Path) -> str | None:
        return read_text(path) if path == root or (boundary.allowed(path) and path.is_file()) else None

    return read


def flatten(root: Path, reader: Reader | None = None, max_depth: int = 20) -> str:
    """Return the root's text with each `\\input`/`\\include` replaced by the file it reads, once each.

    Only files inside the root's directory are read; an input that leaves it, or is missing, stays as written.
    """
    read = reader or _disk_reader(root.resolve())
    top = root.resolve().parent
    text = read(root.resolve())
    if text is None:
        raise InputError(root, "no such file")
    seen = {root.resolve()}

    def expand(source: str, depth: int) -> str:
        if depth > max_depth:
            return source
        out: list[str] = []
        last = 0
        for start, end, name in input_spans(source):
            target = _resolve(top, name, read)
            if target is None or target[0] in seen:
                continue
            seen.add(target[0])
            out.append(source[last:start])
            out.append(expand(target[1], depth + 1))
            last = end
        out.append(source[last:])
        return "".join(out)

    return expand(text, 0)


def _resolve(top: Path, name: str, read: Reader) -> tuple[Path, str] | None:
    name = name.strip()
    for candidate in [name] if name.endswith(".tex") else [f"{name}.tex", name]:
        path = (top / candidate).resolve()
        if not path.is_relative_to(top):
            return None  # a manuscript from a stranger must not read /etc/passwd through \input
        text = read(path)
        if text is not None:
            return path, text
    return None


@dataclass(frozen=True)
class Section:
    """One `\\section` of a flattened manuscript: its title and its LaTeX up to the next section."""

    title: str
    text: str


def sections(flat: str) -> list[Section]:
    """Return every `\\section`/`\\chapter` of a flattened text with its body (comments blanked)."""
    masked = mask(flat)[0]
    stop = _STOP.search(masked)
    end_all = stop.start() if stop else len(masked)
    heads: list[tuple[int, int, str]] = []
    for m in _SECTION.finditer(masked, 0, end_all):
        args = [a for a in command_args(masked, m.end(), limit=1) if a[0] == "{"]
        if args:
            heads.append((m.start(), args[0][2] + 1, " ".join(masked[args[0][1] : args[0][2]].split())))
    found = []
    for i, (start, _body, title) in enumerate(heads):
        end = heads[i + 1][0] if i + 1 < len(heads) else end_all
        found.append(Section(title, masked[start:end].strip()))
    return found


def review_sections(flat: str) -> list[Section]:
    """Return the Introduction and Related Work / Background / Prior Work sections, in order."""
    return [s for s in sections(flat) if REVIEW_TITLES.match(s.title.casefold())]


def review_text(root: Path, reader: Reader | None = None) -> str:
    """Return the literature-review sections of a manuscript as one text; raise InputError when it has none."""
    found = review_sections(flatten(root, reader))
    if not found:
        raise InputError(root, "no Introduction, Related Work, Background or Prior Work \\section to judge")
    return "\n\n".join(s.text for s in found)
