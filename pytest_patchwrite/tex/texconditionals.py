"""Which branches of TeX's conditionals a manuscript typesets (part of the one LaTeX scanner, `latex.py`).

`\\iffalse` branches, the `\\else` of `\\iftrue`, and the branches of a `\\newif` flag that nothing in the
manuscript can set true are never typeset: they hold no cite key, number or placeholder.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .texmask import _per_text, mask

_IF = re.compile(r"\\(?:if[A-Za-z@]*|else|fi)(?![A-Za-z@])")
# \iff is an arrow; these take their branches as arguments (ifthen, etoolbox, biblatex) and have no \fi
_NOT_CONDITIONALS = frozenset(
    "\\" + name
    for name in """iff ifthenelse ifblank ifdefempty ifstrequal ifstrempty ifdef ifundef ifcsdef ifcsundef ifdefmacro
    ifdefstring ifdefvoid ifcsvoid ifcsempty ifbool ifboolexpr iftoggle ifnumcomp ifdimcomp ifnumequal ifinlist
    ifentrytype iffieldundef ifnameundef iflistundef ifcitation ifkeyword""".split()
)
_NEWIF = re.compile(r"\\newif\s*\\if([A-Za-z@]+)")


def _conditionals(masked: str) -> list[tuple[str, int, int, int | None, int]]:
    """Return each closed conditional: (its \\if word, start, end of the word, its \\else or None, end of its \\fi)."""
    found: list[tuple[str, int, int, int | None, int]] = []
    stack: list[tuple[str, int, int, int | None]] = []
    for m in _IF.finditer(masked):
        word = m.group(0)
        if word in _NOT_CONDITIONALS or masked[max(0, m.start() - 6) : m.start()] == "\\newif":
            continue  # not a conditional of TeX's; `\newif\ifdraft` declares one
        if word == "\\else":
            if stack and stack[-1][3] is None:
                stack[-1] = (*stack[-1][:3], m.start())
        elif word == "\\fi":
            if stack:
                name, start, end, other = stack.pop()
                found.append((name, start, end, other, m.end()))
        else:
            stack.append((word, m.start(), m.end(), None))
    return found


@_per_text
def dead_branches(masked: str, false_ifs: frozenset[str] = frozenset()) -> list[tuple[int, int]]:
    """Return the ranges TeX never typesets: `\\iffalse` and known-false branches, and `\\iftrue`'s `\\else`.

    `false_ifs`: the `\\if<name>` words known to be false (see `false_conditionals`).
    """
    dead: list[tuple[int, int]] = []
    for word, _, end, other, fi in _conditionals(masked):
        if word == "\\iffalse" or word in false_ifs:
            dead.append((end, other if other is not None else fi - 3))
        elif word == "\\iftrue" and other is not None:
            dead.append((other, fi - 3))
    return dead


def false_conditionals(texts: Iterable[str]) -> frozenset[str]:
    """Return the `\\if<name>` words that `\\newif` declares (false) and nothing in `texts` can set true."""
    masked = [mask(text)[0] for text in texts]
    declared = {m.group(1) for text in masked if "\\newif" in text for m in _NEWIF.finditer(text)}
    found: set[str] = set()
    if any(_BUILT_SETTER.search(text) for text in masked):
        return frozenset()  # a name built from a parameter (`\csname #1true\endcsname`) may set any of them
    for name in declared:
        word = re.escape(name)
        # which branch is typeset depends on anything that could set it true: \drafttrue, \let/\def of \ifdraft,
        # the name built with \csname or \@nameuse, ifthen's \setboolean and etoolbox's \setbool/\booltrue
        setter = re.compile(
            rf"\\{word}true(?![A-Za-z@])|\\(?:let|[gex]?def)\s*\\if{word}(?![A-Za-z@])"
            rf"|\\csname\s*(?:{word}true|if{word})\s*\\endcsname|\\@nameuse\s*\{{\s*{word}true\s*\}}"
            rf"|\\(?:setboolean|setbool|booltrue|global\s*\\booltrue)\s*\{{\s*{word}\s*\}}"
        )
        if not any(setter.search(text) for text in masked):
            found.add(f"\\if{name}")
    return frozenset(found)


_BUILT_SETTER = re.compile(r"\\csname[^\\]*?(?:#\d|\\)[^\n]*?true\s*\\endcsname|\\@nameuse\s*\{[^}]*#\d[^}]*true\}")


def conditional_spans(masked: str) -> list[tuple[int, int]]:
    """Return the ranges of every closed conditional, `\\if...` to `\\fi`: which branch is typeset depends."""
    return [(start, fi) for _, start, _, _, fi in _conditionals(masked)]
