"""What judges a candidate comes from HEAD: suppression comments and `% !patchwrite` configuration.

An edit may not switch off the check that judges it. When a HEAD exists (`apply`,
`try_patch`, the `diff` item against its base), the candidate is evaluated with
HEAD's configuration and with HEAD's `% patchwrite: ignore` comments, carried over
to the candidate's lines that the edit left untouched; a line the edit wrote is
judged without any suppression. A candidate that adds, removes or changes such a
comment is reported (`suppression_changed`, `config_changed`).
"""

from __future__ import annotations

import difflib
import functools
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from ..model import ERROR, Violation
from ..tex.magic import magic_comments
from ..tex.texmask import mask, suppressions

Opcodes = Sequence[tuple[str, int, int, int, int]]


@functools.lru_cache(maxsize=4)  # a few pairs: the texts they hold stay alive while cached
def line_opcodes(old: str, new: str) -> Opcodes:
    """Return difflib's opcodes turning the lines of `old` into those of `new`.

    Kept for the last pairs: the suppressions carried over, the changed settings and the fixtures' diff of the same
    HEAD and candidate use one diff (a str caches its hash, and an equal pair is usually the same objects).
    """
    return tuple(difflib.SequenceMatcher(a=old.splitlines(), b=new.splitlines(), autojunk=False).get_opcodes())


def unified_lines(old: str, new: str) -> list[str]:
    """Return the lines of a unified diff without context (`difflib.unified_diff(..., n=0)` minus its header)."""
    a, b = old.splitlines(), new.splitlines()
    out: list[str] = []
    for tag, i1, i2, j1, j2 in line_opcodes(old, new):
        if tag == "equal":
            continue
        out.append(f"@@ -{_span(i1, i2)} +{_span(j1, j2)} @@")
        out += [f"-{line}" for line in a[i1:i2]]
        out += [f"+{line}" for line in b[j1:j2]]
    return out


def _span(start: int, stop: int) -> str:
    """Return a hunk's range as unified diffs write it (difflib's `_format_range_unified`)."""
    length = stop - start
    if length == 1:
        return f"{start + 1}"
    return f"{start if not length else start + 1},{length}"


def carried_suppressions(old: str, new: str, opcodes: Opcodes | None = None) -> dict[int, set[str]]:
    """Return HEAD's (`old`) suppressions at the lines of `new` that hold an unchanged HEAD line."""
    head = suppressions(mask(old)[1])
    out: dict[int, set[str]] = {}
    for tag, i1, _i2, j1, j2 in opcodes if opcodes is not None else line_opcodes(old, new):
        if tag == "equal":
            for offset in range(j2 - j1):
                if (i1 + offset + 1) in head:
                    out[j1 + offset + 1] = head[i1 + offset + 1]
    return out


def _settings(text: str) -> dict[int, tuple[str, str]]:
    """Return, per line, the gate setting it holds: ("config_changed", line) or ("suppression_changed", comment)."""
    found: dict[int, tuple[str, str]] = {}
    comments = mask(text)[1]
    for line in suppressions(comments):
        found[line] = ("suppression_changed", "%" + comments[line].rstrip())
    for number, raw in enumerate(text.splitlines(), start=1):
        if "!" in raw and magic_comments(raw):
            found[number] = ("config_changed", raw.strip())
    return found


def settings_changes(
    file: Path | str, old: str, new: str, severity: str = ERROR, opcodes: Opcodes | None = None
) -> list[Violation]:
    """Return one violation per suppression comment or magic configuration line that `new` adds, drops or changes."""
    if old == new:
        return []
    before, after = _settings(old), _settings(new)
    if not before and not after:
        return []
    out: list[Violation] = []
    for tag, i1, i2, j1, j2 in opcodes if opcodes is not None else line_opcodes(old, new):
        if tag == "equal":
            continue
        gone = Counter(before[n] for n in range(i1 + 1, i2 + 1) if n in before)
        came = [(n, after[n]) for n in range(j1 + 1, j2 + 1) if n in after]
        kept = gone & Counter(setting for _, setting in came)
        for n, (kind, token) in came:
            if kept[(kind, token)]:
                kept[(kind, token)] -= 1
                gone[(kind, token)] -= 1
                continue
            out.append(Violation(kind, str(file), n, token, _message("adds", kind, severity), severity))
        anchor = j1 + 1 if j2 > j1 else max(1, j1)
        for (kind, token), count in gone.items():
            for _ in range(count):
                out.append(Violation(kind, str(file), anchor, token, _message("removes", kind, severity), severity))
    return out


def bibitems(text: str, file: Path | str = "") -> list[tuple[str, int]]:
    """Return (key, line) of each `\\bibitem` a text typesets (none without the word: no scan)."""
    if "bibitem" not in text:
        return []
    from ..tex.latex import scan

    return scan(text, str(file)).bibitems


def added_bibitems(old: str, new: str, file: Path | str = "") -> list[tuple[str, int]]:
    """Return (key, line of `new`) for each key a `\\bibitem` of `new` defines that no `\\bibitem` of `old` did."""
    if old == new:
        return []
    before = {key for key, _ in bibitems(old, file)}
    found: dict[str, int] = {}
    for key, line in bibitems(new, file):
        if key not in before:
            found.setdefault(key, line)
    return list(found.items())


def bibitem_changes(file: Path | str, old: str, new: str) -> list[Violation]:
    """Return an `attested_by_change` error per key a `\\bibitem` the candidate added defines: an edit may not
    write the evidence its citations are judged by (a `.bib` entry cannot be edited in; this is the same)."""
    why = ("is defined by a \\bibitem this edit adds; an edit may not write the evidence that judges it: add the "
           "entry by hand (or to the .bib)")  # fmt: skip
    return [Violation("attested_by_change", str(file), line, key, why, ERROR) for key, line in added_bibitems(old, new)]


def _message(verb: str, kind: str, severity: str) -> str:
    what = "a suppression comment" if kind == "suppression_changed" else "a configuration comment"
    if severity == ERROR:
        return f"{verb} {what}; an edit may not change what judges it (HEAD's are used): change it by hand"
    return f"{verb} {what}; this change is judged with the base's suppressions and configuration"
