"""The citation commands of a manuscript (part of the one LaTeX scanner, `latex.py`): the known ones of the
citation packages, plus every macro its own definitions make a wrapper of one; and those definitions (`defined`:
the macros and environments a masked text defines, which the placeholder rules read too).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TypeVar

from .texmask import _CS, _per_text, command_args, mask

# the citation commands of natbib, biblatex, ACL (acl.sty, acl_natbib), apacite, harvard, chicago and jurabib whose
# first mandatory argument holds the keys; a macro the manuscript defines as a wrapper of one is one too
# (`cite_commands`). Shared with `rate refs`, which never compiles.
CITE_COMMANDS = frozenset(
    """cite Cite citep citet citealp citealt citeauthor citeyear citeyearpar citenum citetext Citep Citet Citealp
    Citealt Citeauthor citefullauthor Citefullauthor parencite Parencite textcite Textcite autocite Autocite footcite
    Footcite footcitetext Footcitetext smartcite Smartcite supercite cites Cites parencites Parencites textcites
    Textcites autocites Autocites footcites Footcites smartcites Smartcites supercites fullcite footfullcite citetitle
    citeurl citedate nocite notecite Notecite pnotecite Pnotecite fnotecite Fnotecite
    shortcite newcite citeposs Citeposs shortciteA shortciteN shortciteNP shortciteANP shortciteauthor
    shortciteauthorNP citeA citeN citeNP citeANP citeauthorNP citeyearNP fullciteA fullciteN fullciteNP fullciteANP
    fullciteauthor fullciteauthorNP citeasnoun Citeasnoun possessivecite Possessivecite citeaffixed citename
    citenotitle footcitetitle""".split()
)  # fmt: skip
# biblatex's multi-citations take several {keys} groups, each with its own [pre][post]
_MULTI_CITES = re.compile(r"[A-Za-z]*cites$", re.IGNORECASE)

_COMMAND_DEFINER = re.compile(
    r"\\(?P<cmd>(?:new|renew|provide)commandx?|DeclareRobustCommand|(?:new|renew|provide)robustcmd"
    r"|(?:New|Renew|Provide|Declare)(?:Expandable)?DocumentCommand|[gex]?def)(?![A-Za-z@])\*?"
)
_ENV_DEFINER = re.compile(
    r"\\(?P<cmd>(?:new|renew)environmentx?|(?:New|Renew|Provide|Declare)DocumentEnvironment)(?![A-Za-z@])\*?"
)
_CS_NAME = re.compile(r"\s*(\\(?:[A-Za-z@]+|.))")
_MACRO_NAME = re.compile(r"\\[A-Za-z@]+")
_Key = TypeVar("_Key")
_LET = re.compile(r"\\(?:let|global\s*\\let)\s*(\\[A-Za-z@]+)\s*=?\s*\\([A-Za-z@]+)(?![A-Za-z@])")


@dataclass(frozen=True)
class Defined:
    """One macro (`\\name`) or environment (`name`) definition of a masked text: its span and its body's text."""

    name: str
    environment: bool
    start: int
    end: int
    body: str


@_per_text
def defined(masked: str) -> list[Defined]:
    """Return the macro definitions, then the environment definitions, of a masked text (name, span, body)."""
    found: list[Defined] = []
    for m in _COMMAND_DEFINER.finditer(masked):
        cmd, pos = m.group("cmd"), m.end()
        if masked.startswith("{", pos) or masked[pos : pos + 1].isspace() and masked[pos:].lstrip().startswith("{"):
            named = command_args(masked, pos, limit=1)
            if not named or named[0][0] != "{":
                continue
            name, pos = masked[named[0][1] : named[0][2]].strip(), named[0][2] + 1
        else:
            cs = _CS_NAME.match(masked, pos)
            if cs is None:
                continue
            name, pos = cs.group(1), cs.end()
        if cmd.endswith("def"):
            brace = masked.find("{", pos)  # the parameter text (#1#2, delimiters) runs up to the body
            args = command_args(masked, brace, limit=1) if brace != -1 else []
        else:
            args = [a for a in command_args(masked, pos, limit=2) if a[0] == "{"]
            args = args[1:] if "DocumentCommand" in cmd else args[:1]  # \NewDocumentCommand{\x}{spec}{body}
        if not args:
            continue
        _, start, end = args[0]
        found.append(Defined(name, False, m.start(), end, masked[start:end]))
    for m in _ENV_DEFINER.finditer(masked):
        args = [a for a in command_args(masked, m.end(), limit=4) if a[0] == "{"]
        skip = 2 if "DocumentEnvironment" in m.group("cmd") else 1  # the name, and a spec
        if len(args) < skip + 2:
            continue
        name = masked[args[0][1] : args[0][2]].strip()
        parts = args[skip : skip + 2]
        found.append(Defined(name, True, m.start(), parts[-1][2], " ".join(masked[s:e] for _, s, e in parts)))
    return found


def cite_commands(texts: Iterable[str], known: frozenset[str] = CITE_COMMANDS) -> frozenset[str]:
    """Return the citation commands of a manuscript: `known` plus every macro its texts define as a wrapper of one.

    A wrapper hands its argument to a citation command (`\\newcommand{\\citeA}[1]{\\cite{#1}}`) or is one under
    another name (`\\def\\shortcite{\\cite}`, `\\let\\mycite\\cite`); a macro citing a fixed key is no wrapper.
    """
    bodies: list[tuple[str, str]] = []
    lets: list[tuple[str, str]] = []
    for text in texts:
        masked = mask(text)[0]
        if "\\" not in masked:
            continue
        macros = [d for d in defined(masked) if not d.environment and _MACRO_NAME.fullmatch(d.name)]
        bodies.extend((d.name[1:], d.body) for d in macros)
        lets.extend((m.group(1)[1:], m.group(2)) for m in _LET.finditer(masked))
    commands = set(known)
    changed = True
    while changed:
        changed = False
        for name, target in lets:
            if name not in commands and target in commands:
                commands.add(name)
                changed = True
        for name, body in bodies:
            if name not in commands and _wraps_citation(body, commands):
                commands.add(name)
                changed = True
    return frozenset(commands)


def _wraps_citation(body: str, commands: set[str]) -> bool:
    """Return whether a definition's body passes its use's argument to a citation command."""
    for m in _CS.finditer(body):
        if m.group(1).rstrip("*") not in commands:
            continue
        keys = [body[s:e] for kind, s, e in command_args(body, m.end(), limit=1, angles=True) if kind == "{"]
        if not keys or "#" in keys[0]:
            return True
    return False


def macro_spans(masked: str) -> tuple[list[tuple[int, int, str]], list[int]]:
    """Return the macro definitions of a masked text as (start, end, name), in order, and their starts."""
    spans = sorted((d.start, d.end, d.name) for d in defined(masked) if not d.environment) if "\\" in masked else []
    return spans, [start for start, _, _ in spans]


def defining_macros(masked: str, positions: list[int]) -> list[str]:
    """Return, for each position of a masked text, the macro whose definition holds it ("" for none)."""
    spans, starts = macro_spans(masked)
    out = []
    for pos in positions:
        k = bisect.bisect_right(starts, pos) - 1
        out.append(spans[k][2] if k >= 0 and pos < spans[k][1] else "")
    return out


def first_use(masked_texts: Iterable[tuple[_Key, str]], name: str) -> tuple[_Key, int] | None:
    """Return (key, offset) of the first place a macro is used outside every definition (`\\llmfried` in a sentence
    of the Results, defined in the preamble), in the order of `masked_texts`; None when nothing uses it."""
    pattern = re.compile(re.escape(name) + r"(?![A-Za-z@])")
    for key, masked in masked_texts:
        if name not in masked:
            continue
        spans, starts = macro_spans(masked)
        for m in pattern.finditer(masked):
            inside = bisect.bisect_right(starts, m.start()) - 1
            if inside < 0 or m.start() >= spans[inside][1]:
                return key, m.start()
    return None
