"""Magic comments: `% !TEX key = value` (TeX editors' convention) and `% !patchwrite key = value` at the top of a
file, the manuscript's own configuration. Text only: no file is read here."""

from __future__ import annotations

import re

_MAGIC = re.compile(r"^\s*%\s*!\s*(?P<scope>TeX|TEX|tex|patchwrite)\s+(?:TS-)?(?P<key>[\w-]+)\s*=\s*(?P<value>.*?)\s*$")


def magic_comments(text: str) -> dict[str, str]:
    """Return `% !TEX key = value` and `% !patchwrite key = value` comments, keyed `tex.key` / `patchwrite.key`.

    Like TeX editors, only the comment lines at the top of the file count.
    """
    found: dict[str, str] = {}
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        if not stripped.startswith("%"):
            break
        match = _MAGIC.match(line)
        if match:
            scope = "patchwrite" if match.group("scope") == "patchwrite" else "tex"
            found.setdefault(f"{scope}.{match.group('key').lower()}", match.group("value"))
    return found


def magic_line(text: str, key: str) -> int | None:
    """Return the line of the first top-of-file magic comment `key` (`tex.root`, `patchwrite.log`), or None."""
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        if not line.lstrip().startswith("%"):
            return None
        if key in magic_comments(line):
            return number
    return None
