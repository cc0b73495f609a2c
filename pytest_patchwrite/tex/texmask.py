"""The lexical layer of the LaTeX scanner: comments and verbatim masked out, command arguments and ranges.

`latex.py` builds the scanner on it (cite keys, numbers, conditionals, definitions); the other readers of LaTeX
(placeholders, root and engine detection, the HEAD rules, the autoraters' sections) use it directly. Results per
text are remembered by content (`mask`, `_per_text`), bounded by their total size.
"""

from __future__ import annotations

import bisect
import re
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

from .texgroups import match_group as _match_group

VERBATIM_ENVS = ("verbatim", "verbatim*", "Verbatim", "lstlisting", "minted", "comment", "alltt", "filecontents",
                 "filecontents*", "BVerbatim", "LVerbatim", "CCSXML")  # fmt: skip
_BEGIN_VERB = re.compile(r"\\begin\{(" + "|".join(re.escape(e) for e in VERBATIM_ENVS) + r")\}")
_VERB = re.compile(r"\\verb\*?([^A-Za-z\s*])")
_SUPPRESS = re.compile(r"patchwrite:\s*ignore(?P<what>(?:\s+(?:number|numbers|cite|cites|placeholder|placeholders))*)")
# a control sequence: a control word (with its star) or a control symbol
_CS = re.compile(r"\\([A-Za-z@]+\*?|.)", re.DOTALL)

# mask() runs on the same texts many times per check (evidence, placeholders, root and engine detection):
# the last results are kept, bounded by their total size
_MASK_CACHE: OrderedDict[str, tuple[str, dict[int, str]]] = OrderedDict()
MASK_CACHE_CHARS = 1 << 26
MASK_CACHE_TEXTS = 256
_mask_cache_chars = 0
_MASK_STOP = re.compile(r"[\\%]")
_NOT_NEWLINE = re.compile(r"[^\n]")


def mask(text: str) -> tuple[str, dict[int, str]]:
    """Return `text` with comments and verbatim content blanked (lines kept), and each line's comment."""
    hit = _MASK_CACHE.get(text)
    if hit is not None:
        _MASK_CACHE.move_to_end(text)
        return hit[0], dict(hit[1])
    masked, comments = _mask(text)
    global _mask_cache_chars
    _MASK_CACHE[text] = (masked, comments)
    _mask_cache_chars += len(text)
    while len(_MASK_CACHE) > 1 and (_mask_cache_chars > MASK_CACHE_CHARS or len(_MASK_CACHE) > MASK_CACHE_TEXTS):
        _mask_cache_chars -= len(_MASK_CACHE.popitem(last=False)[0])
    return masked, dict(comments)


_Result = TypeVar("_Result")


def _per_text(compute: Callable[..., _Result]) -> Callable[..., _Result]:
    """Return `compute` (a pure function of a masked text and small hashable arguments) remembering its last results,
    bounded like the mask cache: the evidence locks, the placeholder rules and the citation commands ask for the same
    ranges of the same texts. Callers treat the result as read-only."""
    cache: OrderedDict[tuple[Any, ...], _Result] = OrderedDict()
    chars = 0

    def remembered(masked: str, *args: Any) -> _Result:
        nonlocal chars
        key = (masked, *args)
        if key in cache:
            cache.move_to_end(key)
            return cache[key]
        result = cache[key] = compute(masked, *args)
        chars += len(masked)
        while len(cache) > 1 and (chars > MASK_CACHE_CHARS or len(cache) > MASK_CACHE_TEXTS):
            chars -= len(cache.popitem(last=False)[0][0])
        return result

    remembered.__doc__ = compute.__doc__
    remembered.__wrapped__ = compute  # type: ignore[attr-defined]
    return remembered


def _mask(text: str) -> tuple[str, dict[int, str]]:
    blanks: list[tuple[int, int]] = []  # ranges to blank, newlines kept
    comments: dict[int, str] = {}
    n = len(text)
    i, line, counted = 0, 1, 0
    while (stop := _MASK_STOP.search(text, i)) is not None:
        j = stop.start()
        if text[j] == "%":
            line += text.count("\n", counted, j)
            counted = j
            end = text.find("\n", j)
            end = n if end == -1 else end
            comments[line] = text[j + 1 : end]
            blanks.append((j, end))
            i = end
            continue
        if m := _BEGIN_VERB.match(text, j):
            close = text.find(f"\\end{{{m.group(1)}}}", m.end())
            blanks.append((m.end(), n if close == -1 else close))
            if close == -1:
                break
            i = close + len(m.group(1)) + 6
            continue
        if m := _VERB.match(text, j):
            close = text.find(m.group(1), m.end())
            newline = text.find("\n", m.end())
            close = close if close != -1 and (newline == -1 or close < newline) else (newline if newline != -1 else n)
            blanks.append((m.end(), close))
            i = close + 1
            continue
        i = j + 2  # an escaped character: `\%` is no comment
    if not blanks:
        return text, comments
    parts: list[str] = []
    done = 0
    for start, end in blanks:
        parts.append(text[done:start])
        piece = text[start:end]
        parts.append(_NOT_NEWLINE.sub(" ", piece) if "\n" in piece else " " * len(piece))
        done = end
    parts.append(text[done:])
    return "".join(parts), comments


def suppressions(comments: dict[int, str]) -> dict[int, set[str]]:
    """Return, per line, the scopes its `% patchwrite: ignore [what]` comment covers (empty: everything)."""
    found: dict[int, set[str]] = {}
    for line, comment in comments.items():
        sup = _SUPPRESS.search(comment)
        if sup:
            found[line] = {w.rstrip("s") for w in sup.group("what").split()}
    return found


def command_args(
    text: str, i: int, limit: int = 4, parens: bool = False, angles: bool = False
) -> list[tuple[str, int, int]]:
    """Return the arguments after a command ending at `i`: ("[", start, end) or ("{", start, end), content bounds.

    `parens`: a leading `(...)` is an argument too (`\\cmidrule(lr){2-3}`); after other commands it is prose.
    `angles`: a leading `<...>` is one too (apacite's `\\cite<e.g.,>[p.~3]{key}`).
    """
    args: list[tuple[str, int, int]] = []
    j = i
    n = len(text)
    mandatory = 0
    while j < n and mandatory < limit:
        k = j
        newlines = 0
        while k < n and text[k] in " \t\n*":
            newlines += text[k] == "\n"
            k += 1
        if newlines > 1 or k >= n:
            break
        if text[k] == "[":
            end = _match_group(text, k, "[", "]")
        elif text[k] == "{":
            end = _match_group(text, k, "{", "}")
            mandatory += 1
        elif text[k] == "(" and parens and args == []:
            end = _match_group(text, k, "(", ")")  # \cmidrule(lr){2-3}
        elif text[k] == "<" and angles and args == []:
            end = _match_group(text, k, "<", ">")
        else:
            break
        if end == -1:
            break
        args.append((text[k], k + 1, end - 1))
        j = end
    return args


def _merge(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Return sorted, disjoint ranges covering the same positions."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(ranges):
        if merged and start <= merged[-1][1]:
            if end > merged[-1][1]:
                merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


def _inside(ranges: list[tuple[int, int]], starts: list[int], pos: int) -> bool:
    i = bisect.bisect_right(starts, pos) - 1
    return i >= 0 and ranges[i][0] <= pos < ranges[i][1]
