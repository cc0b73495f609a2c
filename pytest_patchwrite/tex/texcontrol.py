"""Control words right before a printed number (part of the one LaTeX scanner; `texnumbers.read_number` asks).

TeX ends a control word at the first non-letter, so the digits right after one are printed: `\\pm42{,}930.5`,
`\\relax41.2271`, `\\bf41.2`, `\\string41.2271`, a macro of the paper's own (`\\ours41.2`). Only a name the text
itself spells continues a word (ResNet50, x_1). A control word that takes the digits as a parameter prints none of
them as a number (`\\penalty10000`, `\\romannumeral3`, `\\tfrac12`: one half), and a macro the text defines to print
a minus sign (`\\newcommand{\\m}{-}`) makes the number after it negative.
"""

from __future__ import annotations

import re

from .texcites import defined

# a letter (or _) right before the digits makes them part of a name the text spells (ResNet50, x_1); TeX ends a
# control word at the first non-letter, so digits right after one are printed (`\\pm42{,}930.5`, `\\relax41.2271`,
# `\\bf41.2`, a macro of the paper's own), unless the control word takes them as a parameter (`\\penalty10000`)
_CONTROL_WORD = re.compile(r"\\([A-Za-z@]+)$")
PARAMETER_WORDS = frozenset(
    """penalty widowpenalty clubpenalty interlinepenalty brokenpenalty displaywidowpenalty predisplaypenalty
    postdisplaypenalty floatingpenalty hyphenpenalty exhyphenpenalty binoppenalty relpenalty linepenalty
    doublehyphendemerits finalhyphendemerits adjdemerits tolerance pretolerance hbadness vbadness looseness mag
    romannumeral char chardef mathchardef catcode uccode lccode sfcode mathcode delcode count countdef dimen skip
    toks box copy setbox wd ht dp unhbox unvbox unhcopy unvcopy numexpr dimexpr glueexpr muexpr advance multiply
    divide ifnum ifdim ifcase ifodd endlinechar newlinechar escapechar errorcontextlines showboxdepth showboxbreadth
    fontdimen hyphenchar skewchar holdinginserts outputpenalty maxdeadcycles language setlanguage lefthyphenmin
    righthyphenmin uchyph globaldefs day month year time tracingonline hangafter frac dfrac tfrac cfrac sfrac nicefrac
    binom dbinom tbinom""".split()
)


def in_name(before: str) -> bool:
    """Return whether digits after `before` continue a name the text spells (ResNet50, x_1) rather than follow a
    control word, which TeX ends at the digit (`\\pm42`, `\\relax41.2271`)."""
    last = before[-1:]
    letter = last == "_" or (last.isalnum() and not last.isdecimal())  # what [^\W\d] matches, without a search
    return letter and not _CONTROL_WORD.search(before)


_MINUS_BODY = re.compile(r"\s*(?:\$\s*-\s*\$|\\\(\s*-\s*\\\)|\\ensuremath\s*\{\s*-\s*\}|\\textminus|-|\u2212|\{-\})\s*")


def prints_minus(masked: str, name: str) -> bool:
    """Return whether a macro the text defines prints a minus sign (`\\newcommand{\\m}{-}`, `\\def\\m{$-$}`)."""
    return name in masked and any(d.name == name and _MINUS_BODY.fullmatch(d.body) for d in defined(masked))


def control_word(before: str) -> str:
    """Return the control word that `before` ends with (`relax` of `\\relax`), "" for none."""
    found = _CONTROL_WORD.search(before) if before[-1:].isalpha() or before[-1:] == "@" else None
    return found.group(1) if found else ""
