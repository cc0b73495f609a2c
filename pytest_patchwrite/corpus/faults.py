"""The paper's eight faults, injected into any manuscript, with their oracle repairs and checks."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ..edit import Edit, line_ending
from ..tex.latex import Citation, _structural_ranges, scan
from ..tex.placeholders import definitions
from ..tex.texconditionals import conditional_spans
from ..tex.texmask import _inside, _merge, mask
from .documents import FAKE_KEY

CONTENT_FAULTS = ("fake_cite", "bad_number", "todo", "swapped_acc")
COMPILE_FAULTS = ("broken_math", "unmatched_brace", "unclosed_env", "undefined_cmd")
FAULTS = CONTENT_FAULTS + COMPILE_FAULTS
UNDEFINED_COMMAND = "\\patchwriteundefined"
TODO_LINE = "TODO: check these results."
ORACLE_COMMENT = "%"

_SECTION = re.compile(r"\\(?:section|chapter)\*?\s*[\[{]")
_CITE = re.compile(r"\\[A-Za-z]*cite[A-Za-z]*\*?")
_NUMERIC_PART = re.compile(r"^[-+]?[\d.,{}]+(?:[eE][-+]?\d+)?")

NOTES = {
    "fake_cite": "Line {line} cites a reference that is not in the bibliography.",
    "bad_number": "A number on line {line} does not match the experimental log.",
    "todo": "Line {line} is a leftover placeholder.",
    "swapped_acc": "The two reported values on line {line} are in each other's places.",
    "broken_math": "Line {line} has a stray math-mode delimiter, so the document does not compile.",
    "unmatched_brace": "Line {line} has an unbalanced brace next to a citation, so the document does not compile.",
    "unclosed_env": "An environment opened on line {line} is never closed, so the document does not compile.",
    "undefined_cmd": "Line {line} uses a command that is not defined, so the document does not compile.",
}


class FaultNotApplicable(ValueError):
    """The manuscript has no place for this fault (no citation to fake, no decimal to corrupt, ...)."""


@dataclass(frozen=True)
class Fault:
    """One injected fault: the broken text, where it is, and how to tell it was repaired."""

    name: str
    head: str
    broken: str
    line: int
    faulty: str
    original: str | None  # the pre-fault line, or None when the fault inserted a line

    @property
    def fault_class(self) -> str:
        """Return `content` (the broken text still compiles) or `compile`."""
        return "content" if self.name in CONTENT_FAULTS else "compile"

    @property
    def note(self) -> str:
        """Return the one-line defect note a proposer gets: what is wrong, not the fix."""
        return NOTES[self.name].format(line=self.line)

    def oracle_edit(self) -> Edit:
        """Return the paper's oracle repair: restore the faulted line, or comment out an inserted one."""
        body = self.original if self.original is not None else ORACLE_COMMENT
        return Edit(self.line, self.line, (body,))

    def fixed(self, text: str) -> bool:
        """Return whether `text` no longer holds the fault (the paper's strict string check)."""
        lines = [line.rstrip("\r") for line in text.split("\n")]
        if self.original is None:
            token = TODO_LINE.split(":")[0] if self.name == "todo" else UNDEFINED_COMMAND
            return token not in text
        return self.original in lines and self.faulty not in lines


def _lines(text: str) -> tuple[list[str], str]:
    """Return the lines without terminators (a final newline leaves a last empty item) and the terminator."""
    return [line.rstrip("\r") for line in text.split("\n")], line_ending(text)


def _join(lines: list[str], eol: str) -> str:
    return eol.join(lines)


def _body_range(masked_lines: list[str]) -> tuple[int, int]:
    begin = next((i for i, line in enumerate(masked_lines) if "\\begin{document}" in line), -1)
    end = next((i for i, line in enumerate(masked_lines) if "\\end{document}" in line), len(masked_lines))
    return begin + 1, end


def _sections(masked_lines: list[str], name: str) -> list[int]:
    """Return the indices of the body's `\\section` lines, last first (where a fault goes, in order)."""
    start, end = _body_range(masked_lines)
    sections = [i for i in range(start, end) if _SECTION.search(masked_lines[i])]
    if not sections:
        hint = ""
        if any("\\input" in line or "\\include" in line for line in masked_lines):
            hint = "; its sections are in \\input files: inject into one of those"
        raise FaultNotApplicable(f"{name}: the manuscript has no \\section to put the fault before{hint}")
    return sections[::-1]


def _decimal_numbers(text: str) -> list[tuple[int, str]]:
    return [(n.line, n.text) for n in scan(text).numbers if (n.decimals > 0 or n.percent) and n.pooled("all")]


class _Sites:
    """Where a fault may go: positions TeX typesets for sure (no argument it never prints, no conditional branch)."""

    def __init__(self, text: str) -> None:
        masked = mask(text)[0]
        self.line_starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]
        unsure = conditional_spans(masked) + definitions(masked)[1]
        self.unsure = _merge(unsure)
        self.unsure_starts = [a for a, _ in self.unsure]
        self.structural = _merge(_structural_ranges(masked)[0])
        self.structural_starts = [a for a, _ in self.structural]

    def typeset(self, line: int, column: int = 0) -> bool:
        """Return whether the character at 1-based `line`, 0-based `column` is typeset whatever the options."""
        pos = self.line_starts[line - 1] + column
        return not _inside(self.unsure, self.unsure_starts, pos)

    def prose_column(self, line: int, token: str, raw: str) -> int:
        """Return the column of `token` on the line where it is prose, not a key, label or URL (-1: none)."""
        at = raw.find(token)
        while at != -1:
            pos = self.line_starts[line - 1] + at
            if not _inside(self.structural, self.structural_starts, pos) and self.typeset(line, at):
                return at
            at = raw.find(token, at + 1)
        return -1


@dataclass(frozen=True)
class _Place:
    """One manuscript text as the injectors see it: its lines, their masked form and where TeX surely typesets."""

    name: str
    text: str
    lines: list[str]
    eol: str
    masked_lines: list[str]
    where: _Sites

    @classmethod
    def of(cls, text: str, name: str) -> _Place:
        """Return the place for injecting fault `name` into `text`."""
        lines, eol = _lines(text)
        return cls(name, text, lines, eol, mask(text)[0].split("\n"), _Sites(text))

    def fault(self, index: int, new_line: str, inserted: bool = False) -> Fault:
        """Return the fault that writes `new_line` over line `index` (0-based), or inserts it there."""
        out = list(self.lines)
        if inserted:
            out.insert(index, new_line)
            return Fault(self.name, self.text, _join(out, self.eol), index + 1, new_line, None)
        original = out[index]
        out[index] = new_line
        return Fault(self.name, self.text, _join(out, self.eol), index + 1, new_line, original)


def _typeset_sections(place: _Place) -> Iterator[int]:
    """Yield the indices of the body's typeset `\\section` lines, last first; raise FaultNotApplicable if none."""
    for section in _sections(place.masked_lines, place.name):
        if place.where.typeset(section + 1):
            yield section


def _todo(place: _Place) -> Iterator[Fault]:
    """A placeholder line before a section."""
    for section in _typeset_sections(place):
        yield place.fault(section, TODO_LINE, inserted=True)


def _undefined_cmd(place: _Place) -> Iterator[Fault]:
    """An undefined command on a line of its own before a section."""
    for section in _typeset_sections(place):
        yield place.fault(section, UNDEFINED_COMMAND, inserted=True)


def _unclosed_env(place: _Place) -> Iterator[Fault]:
    """A `quote` opened on the line before a section (on the section's own line when the body opens with it)."""
    start, _ = _body_range(place.masked_lines)
    for section in _typeset_sections(place):
        target = section - 1 if section - 1 >= start else section  # a file that opens with its \\section
        if place.where.typeset(target + 1):
            yield place.fault(target, "\\begin{quote}" + place.lines[target])


def _typeset_cites(place: _Place) -> Iterator[tuple[int, Citation]]:
    """Yield (line index, citation) for each typeset citation of a key, last first; raise FaultNotApplicable if
    the text cites nothing."""
    cites = [c for c in scan(place.text).citations if c.key != "*" and c.command != "nocite"]
    if not cites:
        raise FaultNotApplicable(f"{place.name}: the manuscript cites nothing")
    for cite in reversed(cites):
        if place.where.typeset(cite.line):
            yield cite.line - 1, cite


def _fake_cite(place: _Place) -> Iterator[Fault]:
    """A cited key replaced by one the bibliography does not hold."""
    for index, cite in _typeset_cites(place):
        line = place.lines[index]
        new_line = re.sub(rf"(?<=[{{,\s]){re.escape(cite.key)}(?=[\s,}}])", FAKE_KEY, line, count=1)
        if new_line != line:
            yield place.fault(index, new_line)


def _unmatched_brace(place: _Place) -> Iterator[Fault]:
    """An opening brace before the last citation command of a line (once per line)."""
    tried: set[int] = set()
    for index, cite in _typeset_cites(place):
        if index in tried:
            continue
        tried.add(index)
        line = place.lines[index]
        commands = [c for c in _CITE.finditer(place.masked_lines[index]) if place.where.typeset(cite.line, c.start())]
        if commands:  # else the key continues a \\cite that opened on an earlier line
            at = commands[-1].start()
            yield place.fault(index, line[:at] + "{" + line[at:])


def _decimals(place: _Place) -> list[tuple[int, str]]:
    """Return (line, token) of the printed decimal numbers; raise FaultNotApplicable if there is none."""
    numbers = _decimal_numbers(place.text)
    if not numbers:
        raise FaultNotApplicable(f"{place.name}: the manuscript prints no decimal number")
    return numbers


def _prose_numbers(place: _Place, numeric_part: bool) -> Iterator[tuple[int, str, int]]:
    """Yield (line index, value, column) of each decimal printed in prose (`numeric_part`: without its unit)."""
    for line_no, token in _decimals(place):
        part = _NUMERIC_PART.match(token)
        value = part.group(0) if part and numeric_part else token
        at = place.where.prose_column(line_no, value, place.lines[line_no - 1])
        if at != -1:
            yield line_no - 1, value, at


def _bad_number(place: _Place) -> Iterator[Fault]:
    """A printed decimal replaced by 99.9 (by 11.1 where it is 99.9)."""
    for index, value, at in _prose_numbers(place, numeric_part=True):
        line = place.lines[index]
        replacement = "11.1" if value == "99.9" else "99.9"
        yield place.fault(index, line[:at] + replacement + line[at + len(value) :])


def _broken_math(place: _Place) -> Iterator[Fault]:
    """A stray `$` before a printed decimal."""
    for index, _, at in _prose_numbers(place, numeric_part=False):
        line = place.lines[index]
        yield place.fault(index, line[:at] + "$" + line[at:])


def _swapped_acc(place: _Place) -> Iterator[Fault]:
    """The first two different decimals of a line in each other's places."""
    by_line: dict[int, list[str]] = {}
    for line_no, token in _decimals(place):
        by_line.setdefault(line_no, []).append(token)
    for line_no, tokens in sorted(by_line.items()):
        values = [(_NUMERIC_PART.match(t) or re.match(".*", t)).group(0) for t in tokens]  # type: ignore[union-attr]
        distinct = list(dict.fromkeys(values))
        if len(distinct) >= 2 and place.where.typeset(line_no):
            yield place.fault(line_no - 1, _swap_first_two(place.lines[line_no - 1], distinct[0], distinct[1]))


# one injector per fault: it yields the fault at every place it can go, the preferred one first
INJECTORS: dict[str, Callable[[_Place], Iterator[Fault]]] = {
    "fake_cite": _fake_cite,
    "bad_number": _bad_number,
    "todo": _todo,
    "swapped_acc": _swapped_acc,
    "broken_math": _broken_math,
    "unmatched_brace": _unmatched_brace,
    "unclosed_env": _unclosed_env,
    "undefined_cmd": _undefined_cmd,
}


def sites(text: str, name: str) -> Iterator[Fault]:
    """Yield the named fault at every place it can go, the preferred one first; raise FaultNotApplicable."""
    if name not in INJECTORS:
        raise FaultNotApplicable(f"unknown fault {name!r}; choose one of {', '.join(FAULTS)}")
    yield from INJECTORS[name](_Place.of(text, name))


def inject(text: str, name: str) -> Fault:
    """Return `text` with the named fault at its preferred place (not yet compiled); raise FaultNotApplicable."""
    for fault in sites(text, name):
        return fault
    raise FaultNotApplicable(f"{name}: no place for it outside conditional branches and unprinted arguments")


def _swap_first_two(line: str, a: str, b: str) -> str:
    first, second = line.find(a), line.find(b, line.find(a) + len(a))
    return line[:first] + b + line[first + len(a) : second] + a + line[second + len(b) :]
