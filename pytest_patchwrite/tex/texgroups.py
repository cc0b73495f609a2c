"""Where a TeX group closes: `{...}`, and `[...]`, `(...)`, `<...>` with braces nested in them.

Part of the one LaTeX scanner (latex.py and the modules it reads numbers and sentences with).
Every question is answered from one linear pass over the text per kind of group, remembered for
the last text asked about, so a hostile file of unclosed groups costs one pass, not one per group.
"""

from __future__ import annotations

import bisect
import re
from array import array


def match_group(text: str, i: int, open_ch: str, close_ch: str) -> int:
    """Return the index just past the group opening at `i`, or -1 when it never closes.

    `{` and `}` nest inside every kind of group; a backslash escapes the character after it.
    """
    backslashes = 0
    while backslashes < i and text[i - 1 - backslashes] == "\\":
        backslashes += 1
    if backslashes % 2:
        return _scan_group(text, i, open_ch, close_ch)  # escaped for the pass (`\\{`), an opener if asked here
    opens, closes = _group_pairs(text, open_ch, close_ch)
    at = bisect.bisect_left(opens, i)
    return closes[at] + 1 if at < len(opens) and opens[at] == i else -1


def _scan_group(text: str, i: int, open_ch: str, close_ch: str) -> int:
    depth = 0
    j = i
    n = len(text)
    while j < n:
        ch = text[j]
        if ch == "\\":
            j += 2
            continue
        if ch == open_ch or (ch == "{" and open_ch != "{"):
            depth += 1
        elif ch == close_ch or (ch == "}" and close_ch != "}"):
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    return -1


# per kind of group: the last text paired, the openers that close (sorted) and where each closes
_PAIRS: dict[str, tuple[str, array, array]] = {}


def _group_pairs(text: str, open_ch: str, close_ch: str) -> tuple[array, array]:
    """Return (openers, their closers) of one kind of group in `text`: a group closes where its depth returns to 0."""
    hit = _PAIRS.get(open_ch + close_ch)
    if hit is not None and hit[0] is text:
        return hit[1], hit[2]
    marks = "{}" + (open_ch + close_ch if open_ch != "{" else "")
    token = re.compile(r"\\.|[" + re.escape(marks) + "]", re.DOTALL)
    stack: list[int] = []
    pairs: list[tuple[int, int]] = []
    for m in token.finditer(text):
        ch = m.group(0)
        if len(ch) == 2:
            continue  # an escaped character
        if ch == open_ch or ch == "{":
            stack.append(m.start())
        elif stack:
            pairs.append((stack.pop(), m.start()))
    pairs.sort()
    opens, closes = array("q", (a for a, _ in pairs)), array("q", (b for _, b in pairs))
    _PAIRS[open_ch + close_ch] = (text, opens, closes)
    return opens, closes
