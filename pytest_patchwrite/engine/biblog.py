"""Parsing bibtex and biber logs (`.blg`) into located messages (TeX's own logs: `engine.texlog`)."""

from __future__ import annotations

import re

from .texlog import ERROR, WARNING, LogMessage

_BLG_BIBTEX_ERR = re.compile(r"---line (?P<line>\d+) of file (?P<file>\S+)")
_BLG_AUX_ARG = re.compile(r"\\[A-Za-z@]+\{(?P<arg>[^{}]*)")
_BLG_BIBTEX_MISSING = re.compile(r'Warning--I didn\'t find a database entry for "(?P<key>[^"]+)"')
_BLG_BIBTEX_NODB = re.compile(r"I couldn't open (?:database|style) file (?P<file>\S+)")
_BLG_BIBER = re.compile(r"^\[\d+\] [^>]+> (?P<level>ERROR|WARN) - (?P<msg>.*)$|^(?P<level2>ERROR|WARN) - (?P<msg2>.*)$")
_BLG_BIBER_LOC = re.compile(r"(?P<file>[^\s,]+?\.bib)(?:_\d+\.utf8)?, line (?P<line>\d+)")
_BLG_BIBER_MISSING = re.compile(r"I didn't find a database entry for '(?P<key>[^']+)'")


def parse_blg(text: str) -> list[LogMessage]:
    """Return the errors and missing-entry warnings of a bibtex or biber `.blg` log."""
    messages: list[LogMessage] = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("Repeated entry") and (m := _BLG_BIBTEX_ERR.search(line)):
            # bibtex counts it as an error but keeps the first entry and the paper builds: a warning
            msg = f"{line.split('---line')[0]} (bibtex keeps the first)"
            messages.append(
                LogMessage(WARNING, "duplicate_entry", msg, _basename(m.group("file")), int(m.group("line")))
            )
        elif _BLG_BIBTEX_ERR.search(line) and i and _BLG_BIBTEX_NODB.search(lines[i - 1]):
            continue  # where in the .aux the missing file was named: reported once, as missing_file
        elif m := _BLG_BIBTEX_ERR.search(line):
            # the complaint precedes `---line N of file F` on its line, or stands on the line before when the
            # line starts with `---` (never the `The top-level auxiliary file:` line above it)
            what = lines[i - 1].strip() if i and line.startswith("---") else ""
            msg = (what + " " + line.split("---line")[0]).strip()
            file = _basename(m.group("file"))
            token = _aux_argument(lines, i + 1) if file.endswith(".aux") else ""
            messages.append(LogMessage(ERROR, "bib_syntax", msg, file, int(m.group("line")), token))
        elif m := _BLG_BIBTEX_MISSING.search(line):
            messages.append(LogMessage(WARNING, "undefined_citation", line.strip(), "", 0, m.group("key")))
        elif m := _BLG_BIBTEX_NODB.search(line):
            messages.append(LogMessage(ERROR, "missing_file", line.strip(), "", 0, m.group("file")))
        elif m := _BLG_BIBER.match(line):
            level = m.group("level") or m.group("level2")
            msg = (m.group("msg") or m.group("msg2")).strip()
            if missing := _BLG_BIBER_MISSING.search(msg):
                messages.append(LogMessage(WARNING, "undefined_citation", msg, "", 0, missing.group("key")))
            elif level == "ERROR":
                loc = _BLG_BIBER_LOC.search(msg)
                file, lineno = (_basename(loc.group("file")), int(loc.group("line"))) if loc else ("", 0)
                messages.append(LogMessage(ERROR, "bib_syntax" if loc else "biber_error", msg, file, lineno))
    return messages


def _aux_argument(lines: list[str], start: int) -> str:
    """Return the argument of the `.aux` command bibtex quotes in its ` : ` lines from `start` (`\\citation{key`
    then the rest, or `\\bibstyle` then `{alpha}`): the text to look for in the source, or ''."""
    quoted = []
    for line in lines[start : start + 2]:
        if not line.startswith(" : "):
            break
        quoted.append(line[3:].strip())
    found = _BLG_AUX_ARG.search("".join(quoted))
    return found.group("arg").strip() if found else ""


def _basename(path: str) -> str:
    return re.sub(r"_\d+\.utf8$", "", path.replace("\\", "/").rsplit("/", 1)[-1])
