"""Placeholders as the reader sees them: TODO-like markers that reach the page, not those a definition holds.

Built on latex.py's masking and argument reading. The source rules: text inside
macro and environment definitions prints nothing where it stands; a *use* of a
user macro whose definition prints a placeholder does; `\\iffalse` branches and
`\\todo` under `\\usepackage[disable]{todonotes}` print nothing. When the compile
produced a PDF, every candidate is confirmed against the PDF's text (`confirm`).
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from dataclasses import dataclass

from .latex import _structural_ranges
from .texcites import defined
from .texconditionals import dead_branches
from .texmask import _inside, _merge, command_args, mask

PLACEHOLDER = re.compile(r"(?<![\w\\])(?:TODO|FIXME|XXX|TBD)(?!\w)|\?\?|\\todo\b|\[[Cc]itation needed\]")
_TODONOTES = re.compile(r"\\usepackage\s*\[(?P<options>[^\]]*)\]\s*\{[^}]*\btodonotes\b")
_WORD_STOP = re.compile(r"[\\{}$%\n]")
TODO_MACRO = "\\todo"
_PRINTED = re.compile(r"\\[A-Za-z@]+\*?|\\.|[{}\[\]\s]|%.*")  # what is left after removing these is printed


@dataclass(frozen=True)
class Definition:
    """A macro (`\\name`) or environment (`name`) defined in the source, and the placeholder its body prints."""

    name: str
    environment: bool
    body: str
    prints: str | None


@dataclass(frozen=True)
class Candidate:
    """A placeholder in the source, and `probe`: the text the reader would see (None: nothing to check)."""

    token: str
    file: str
    line: int
    probe: str | None


def definitions(masked: str) -> tuple[list[Definition], list[tuple[int, int]]]:
    """Return the definitions of a masked text, in order, and the ranges they cover (name and body)."""
    found = defined(masked)
    return [_definition(d.name, d.environment, d.body) for d in found], [(d.start, d.end) for d in found]


def _definition(name: str, environment: bool, body: str) -> Definition:
    hit = PLACEHOLDER.search(body)
    return Definition(name, environment, body, hit.group(0) if hit else None)


def todonotes_disabled(root_text: str) -> bool:
    """Return whether the root loads todonotes with `disable` (every `\\todo` then prints nothing)."""
    preamble = mask(root_text)[0].split("\\begin{document}", 1)[0]
    return any("disable" in [o.strip() for o in m.group("options").split(",")] for m in _TODONOTES.finditer(preamble))


def placeholder_macros(defs: list[Definition], todo_prints: bool) -> dict[str, Definition | None]:
    """Return the macros (`\\name`) and environments (`name`) whose use prints a placeholder.

    The last definition of a name counts (`\\renewcommand{\\fixme}[1]{}` for a
    camera-ready disables it); a macro that uses another one that prints a
    placeholder prints one too. `\\todo` prints one unless disabled or redefined.
    """
    final = {d.name: d for d in defs}
    found: dict[str, Definition | None] = {}
    if TODO_MACRO in final:  # the author's own \todo: a note unless it prints nothing
        if _PRINTED.sub("", final.pop(TODO_MACRO).body):
            found[TODO_MACRO] = None
    elif todo_prints:
        found[TODO_MACRO] = None
    changed = True
    while changed:
        changed = False
        for name, d in final.items():
            if name in found:
                continue
            if (d.prints and d.prints != TODO_MACRO) or any(_uses(d.body, other) for other in found):
                found[name] = d
                changed = True
    return found


def _uses(text: str, name: str) -> bool:
    if name.startswith("\\"):
        return re.search(re.escape(name) + r"(?![A-Za-z@])", text) is not None
    return f"\\begin{{{name}}}" in text


def find(
    files: list[tuple[str, str]],
    root_text: str,
    false_ifs: frozenset[str] = frozenset(),
    cites: frozenset[str] | None = None,
) -> list[Candidate]:
    """Return the placeholders of a manuscript's files (file name, text) that a reader of the source would see.

    `false_ifs`: the conditionals known to be false (`texconditionals.false_conditionals`); `cites`: the
    manuscript's citation commands (`texcites.cite_commands`), whose arguments print no placeholder. The ranges are
    those `latex.scan` used for the same texts (computed once).
    """
    masked = [(file, mask(text)[0]) for file, text in files]
    defs: list[Definition] = []
    hidden: dict[str, list[tuple[int, int]]] = {}
    for file, text in masked:
        found, bodies = definitions(text)
        defs.extend(found)
        hidden[file] = bodies + dead_branches(text, false_ifs)
    macros = placeholder_macros(defs, not todonotes_disabled(root_text))
    out: list[Candidate] = []
    for file, text in masked:
        structural = _structural_ranges(text, cites) if cites is not None else _structural_ranges(text)
        skip = _merge(hidden[file] + structural[0])
        starts = [s for s, _ in skip]
        lines = [0] + [m.end() for m in re.finditer("\n", text)]

        hits: list[tuple[int, str, str | None]] = []
        for m in PLACEHOLDER.finditer(text):
            if m.group(0) != TODO_MACRO and not _inside(skip, starts, m.start()):
                hits.append((m.start(), m.group(0), m.group(0) + " " + _words(text, m.end())))
        for name, d in macros.items():
            pattern = re.escape(name) + r"(?![A-Za-z@])" if name.startswith("\\") else re.escape(f"\\begin{{{name}}}")
            for m in re.finditer(pattern, text):
                if not _inside(skip, starts, m.start()):
                    hits.append((m.start(), name, _probe(text, m.end(), d)))
        for pos, token, probe in sorted(hits):
            out.append(Candidate(token, file, bisect.bisect_right(lines, pos), probe))
    return out


def _words(text: str, start: int, count: int = 4) -> str:
    """Return up to `count` words of plain prose from `start`, stopping at the next command, brace or math."""
    stop = _WORD_STOP.search(text, start)
    return " ".join(text[start : stop.start() if stop else len(text)].split()[:count])


def _probe(text: str, end: int, definition: Definition | None) -> str | None:
    """Return what a macro use shows: its argument's first words, else the placeholder its definition prints."""
    args = [a for a in command_args(text, end, limit=1) if a[0] == "{"]
    if args and (words := _words(text, args[0][1])):
        return words
    if definition is not None and definition.prints and definition.prints != TODO_MACRO:
        return definition.prints
    return None


def _normal(text: str) -> str:
    """Return `text` as letters, digits and `?` only: PDF text breaks lines, hyphenates and splits ligatures."""
    return "".join(ch for ch in unicodedata.normalize("NFKC", text) if ch.isalnum() or ch == "?")


def seen_in(probes: list[str | None], pdf_text: str) -> list[bool]:
    """Return, per probe, whether a PDF's text holds what the placeholder shows (True when nothing to check)."""
    page = _normal(pdf_text)
    return [probe is None or _normal(probe) in page for probe in probes]
