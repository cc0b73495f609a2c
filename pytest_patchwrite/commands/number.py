"""`patchwrite number FILE`: the numbered view a proposer sees, printed escaped.

The listing is `N | text` per line, each line through `shown.listing`: a TAB stays a tab, every
other control character, DEL, ESC, a line separator or a bidi override is shown as an escape
(`\\x1b`, `\\r`). The `N | ` prefix starts every printed line with a digit or a blank, so no line
starts with `::` whatever the file holds. An escape cannot be typed back: an EDIT's body is
taken character for character, so `\\x1b` in a reply is four characters, not ESC. A note on stderr
names the lines that hold such characters, so an edit can keep clear of them (or carry the
characters themselves, as the model's proposer view and the MCP server's JSON hold them).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .. import shown
from ..edit import line_texts, number_lines
from ..files.inputs import read_text
from .common import EXIT_OK

#: lines the stderr note names before it says how many more
NOTE_LINES = 10


def register(sub: Any) -> None:
    """Add the `number` subcommand."""
    parser = sub.add_parser("number", help="print FILE numbered as a proposer sees it")
    parser.add_argument("file")
    parser.set_defaults(func=run)


def escaped_note(path: Path, text: str) -> str | None:
    """Return the one-line note naming the lines whose characters `number` prints as escapes, or None."""
    held = [(n, shown.escaped_in(content)) for n, content in enumerate(line_texts(text), start=1)]
    held = [(n, chars) for n, chars in held if chars]
    if not held:
        return None
    named = "; ".join(f"line {n} ({', '.join(chars)})" for n, chars in held[:NOTE_LINES])
    more = f"; and {len(held) - NOTE_LINES} more line(s)" if len(held) > NOTE_LINES else ""
    return shown.line(
        f"patchwrite: note: {path}: characters printed as escapes: {named}{more}; an EDIT body is taken as "
        "written (typing `\\x1b` writes 4 characters), so an edit over these lines replaces them unless its "
        "reply holds the characters themselves (docs/edits.md)"
    )


def run(args: argparse.Namespace) -> int:
    """Print the numbered view of FILE escaped, and a note on stderr when a line holds an escaped character."""
    path = Path(args.file)
    text = read_text(path)
    sys.stdout.write(shown.listing(number_lines(text)))
    note = escaped_note(path, text)
    if note:
        print(note, file=sys.stderr)
    return EXIT_OK
