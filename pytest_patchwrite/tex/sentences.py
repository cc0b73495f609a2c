"""Where sentences of a LaTeX text end: which numbers and citations share one (part of the scanner).

Only `latex.scan()` calls this, on masked text. A sentence ends at `.`, `?` or `!` before a space,
unless the word before the point is an abbreviation (`et al.`, `e.g.`, `Fig.`) or a lowercase word
follows (a single capital is no initial: `on dataset X. We` ends a sentence). `Fig.~3` and
`et al.\\ ` never end one (TeX's own inter-word marks), nor does a decimal point. A blank line,
`\\\\` (so each table row is its own unit), `\\par`, `\\item`, sectioning, `\\caption`,
`\\begin`/`\\end` end one too, and a `\\footnote{...}` is a sentence of its own.
"""

from __future__ import annotations

import bisect
import re

from .texgroups import match_group

ABBREVIATIONS = frozenset(
    """al e.g i.e cf vs etc approx resp viz ca fig figs eq eqs sec secs tab tabs ref refs no nos ch chap thm
    lem def prop cor alg app appx pp p vol ed eds dr mr mrs ms prof st jr sr inc ltd co corp""".split()
)
_BREAK = re.compile(
    r"\n[ \t]*\n|\\\\"
    r"|\\(?:par|item|section|subsection|subsubsection|paragraph|subparagraph|chapter|part|caption|footnote|begin|end"
    r"|bibitem|hline|toprule|midrule|bottomrule)(?![A-Za-z@])"
    # the word before a point is matched with it, from the word's start only (no search back per point)
    r"|(?:(?<![A-Za-z.])(?P<word>[A-Za-z]++(?:\.[A-Za-z]++)*+))?(?<!\\)(?P<point>[.?!])(?=[)\]}'\"$]*(?:\s|$))"
)
_NEXT = re.compile(r"[)\]}'\"$]*\s*(\S?)")
_GROUP_AFTER = re.compile(r"\s*(?:\[[^\]]*\]\s*)?\{")


def boundaries(masked: str) -> list[int]:
    """Return the sorted positions where a sentence of the masked text ends."""
    found: list[int] = []
    for m in _BREAK.finditer(masked):
        point = m.group("point")
        if m.group(0) == "\\footnote" and (group := _GROUP_AFTER.match(masked, m.end())):
            if (end := match_group(masked, group.end() - 1, "{", "}")) != -1:
                found.append(end - 1)  # the text after the footnote is not the footnote's sentence
        if point == ".":
            word = m.group("word")
            if word and word.lower() in ABBREVIATIONS:
                continue  # et al., e.g., Fig.
            following = _NEXT.match(masked, m.end())
            if following and following.group(1).islower():
                continue  # an abbreviation we do not know, mid-sentence
        found.append(m.start("point") if point else m.start())
    return sorted(found)


def sentence_of(ends: list[int], pos: int) -> int:
    """Return the index of the sentence holding `pos`, given the `boundaries` of its text."""
    return bisect.bisect_right(ends, pos)
