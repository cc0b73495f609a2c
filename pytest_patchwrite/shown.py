"""The one escaping of what we print that came from a manuscript (stdout, stderr; JSON escapes itself).

A cite key, a file name or a log message is the pull request's text. Printed as it is,
a newline in it starts a line of its own, and a line that starts with `::` is a GitHub
Actions workflow command (`::stop-commands::TOKEN` silences every later annotation,
`::warning ...` forges one); ANSI escapes move the cursor and recolour the terminal.
`text()` shows every C0 and C1 control character, DEL and ESC as an escape (`\\n`,
`\\x1b`), as well as the Unicode line separators, bidirectional overrides and lone
surrogates (undecodable bytes); `line()` does the same and makes sure the line cannot
start with `::`. `listing()` prints text of several lines (a numbered source, a model's
reply) the same way line by line, but keeps a TAB as a tab: a tab moves no cursor and is no
workflow command, and a proposer's edit must reproduce it. Annotations (`annotation_data`,
`annotation_property`) escape as GitHub's toolkit does, after `text()`. Each other context has
its own function here, after the same escaping of controls: `markdown()` (a step summary),
`sarif()` (a SARIF message's text), `html()` (the pages report). No other module escapes
(tests/test_architecture.py checks it).
"""

from __future__ import annotations

import html as _html
import re

# C0 controls, DEL, C1 controls; line and paragraph separators; bidi embeddings, overrides and isolates;
# lone surrogates (what `surrogateescape` made of undecodable bytes)
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# the same, less TAB (and LF, which ends a listed line)
_UNSAFE_LISTED = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    ch = match.group(0)
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:  # a byte surrogateescape could not decode: show the byte
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def text(value: object) -> str:
    """Return `value` as text that prints as one line with no control character (each shown as an escape)."""
    raw = str(value)
    return _UNSAFE.sub(_escape, raw) if _UNSAFE.search(raw) else raw


def _unled(shown: str) -> str:
    """Return `shown` with a leading `::` (after blanks) shown as `\\x3a:`: never a workflow command."""
    stripped = shown.lstrip()
    if stripped.startswith("::"):
        return shown[: len(shown) - len(stripped)] + "\\x3a" + stripped[1:]
    return shown


def line(value: object) -> str:
    """Return one printed line: `text(value)`, and a leading `::` (after blanks) shown as `\\x3a:`."""
    return _unled(text(value))


def listing(value: object) -> str:
    """Return text of several lines as printed: each line (split at LF) escaped as `line()` does, TABs kept."""
    raw = str(value)
    if not _UNSAFE_LISTED.search(raw) and "::" not in raw:
        return raw
    return "\n".join(_unled(_UNSAFE_LISTED.sub(_escape, part)) for part in raw.split("\n"))


def escaped_in(value: object) -> list[str]:
    """Return the characters `listing(value)` shows as escapes, each once, as it shows them (`['\\x1b', '\\r']`)."""
    found = dict.fromkeys(m.group(0) for m in _UNSAFE_LISTED.finditer(str(value)))
    return [_UNSAFE_LISTED.sub(_escape, ch) for ch in found]


def annotation_data(value: object) -> str:
    """Return `value` as the message of a workflow command (`::error ...::MESSAGE`): `%`, CR and LF escaped."""
    return text(value).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def annotation_property(value: object) -> str:
    """Return `value` as a workflow command property (`file=...`): as data, and `:` and `,` escaped."""
    return annotation_data(value).replace(":", "%3A").replace(",", "%2C")


def markdown(value: object) -> str:
    """Return `value` as Markdown that renders literally: escaped, no autolinked URL, no `@` mention."""
    shown = _MARKDOWN_SPECIAL.sub(r"\\\1", text(" ".join(str(value).split())))
    # a bare URL or `www.` autolinks in GitHub's Markdown: an escaped `:` or `.` splits the text it looks at;
    # a zero-width space after `@` keeps a mention from notifying anyone
    shown = _WWW.sub(r"\1\\.", shown).replace("://", "\\://")
    return shown.replace("@", "@&#8203;")


def sarif(value: object) -> str:
    """Return `value` as the plain text of a SARIF message: controls, separators and bidi overrides shown as escapes
    (lines and TABs kept), and `[` `]` escaped (SARIF reads `[text](n)` as a link to a location)."""
    raw = str(value)
    if _UNSAFE_LISTED.search(raw):
        raw = _UNSAFE_LISTED.sub(_escape, raw)
    return raw.replace("[", "\\[").replace("]", "\\]")


def html(value: object) -> str:
    """Return `value` as HTML text or an attribute value (quoted): `text(value)`, then `&<>"'` as entities."""
    return _html.escape(text(value), quote=True)


# CommonMark's backslash escapes, plus `$` (GitHub renders $...$ as math) and `|` (a GFM table cell's end)
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>|~&$#!])")
_WWW = re.compile(r"(?i)\b(www)\.")
