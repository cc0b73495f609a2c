"""The EDIT grammar: parsing one bounded edit and applying it byte-exactly.

A proposer sees the source numbered 1-based and answers with one block:

    ```EDIT N M            EDIT N M              DELETE N M
    replacement lines      replacement lines
    ```                    (to the end of text)

Lines outside a fenced block are commentary and ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DEFAULT_MAX_SPAN = 40

#: Every reason a candidate can be rejected before any gate runs.
REASONS = (
    "no_edit",
    "multiple_edits",
    "bad_range",
    "past_eof",
    "span_too_long",
    "empty_replacement",
    "unclosed_fence",
)

_HEADER = re.compile(r"^[ \t]*(?P<fence>`{3,})?[ \t]*(?P<verb>EDIT|DELETE)(?P<args>(?:[ \t].*)?)$")
_FENCE_OPEN = re.compile(r"^[ \t]*`{3,}[\w-]*[ \t]*$")
_FENCE_CLOSE = re.compile(r"^[ \t]*`{3,}[ \t]*$")
_INT = re.compile(r"^[+-]?\d+$")


class EditError(ValueError):
    """A candidate that breaks the grammar; `reason` is one of `REASONS`."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message

    def __str__(self) -> str:
        return f"{self.reason}: {self.message}"


@dataclass(frozen=True)
class Edit:
    """Replace lines `start`..`end` (1-based, inclusive) by `body`; DELETE has no body."""

    start: int
    end: int
    body: tuple[str, ...] = ()
    verb: str = "EDIT"

    @property
    def span(self) -> int:
        """Return the number of lines the edit replaces."""
        return self.end - self.start + 1

    def render(self) -> str:
        """Return the edit in fenced form (DELETE as one line)."""
        if self.verb == "DELETE":
            return f"DELETE {self.start} {self.end}\n"
        return f"```EDIT {self.start} {self.end}\n" + "".join(f"{b}\n" for b in self.body) + "```\n"


def split_lines(text: str) -> list[str]:
    """Return the lines of `text`, each with its own terminator ('\\n', '\\r\\n' or '' at EOF)."""
    return re.findall(r"[^\n]*\n|[^\n]+$", text)


def count_lines(text: str) -> int:
    """Return the number of lines an editor would show (a final newline adds none)."""
    return len(split_lines(text))


def number_lines(text: str) -> str:
    """Return the numbered view a proposer sees: right-aligned `N | text` lines."""
    lines = split_lines(text)
    width = len(str(len(lines))) if lines else 1
    out = []
    for i, raw in enumerate(lines, start=1):
        content = raw.rstrip("\n").rstrip("\r")
        out.append(f"{i:>{width}} | {content}\n")
    return "".join(out)


def _parse_range(verb: str, args: str, n_lines: int, max_span: int) -> tuple[int, int]:
    parts = args.split()
    if len(parts) != 2 or not all(_INT.match(p) for p in parts):
        raise EditError("bad_range", f"{verb} needs two integer line numbers, got {args.strip()!r}")
    start, end = int(parts[0]), int(parts[1])
    if start < 1:
        raise EditError("bad_range", f"{verb} {start} {end}: lines are numbered from 1")
    if start > end:
        raise EditError("bad_range", f"{verb} {start} {end}: first line is after the last")
    if end > n_lines:
        raise EditError("past_eof", f"{verb} {start} {end}: the file has {n_lines} lines")
    if end - start + 1 > max_span:
        raise EditError(
            "span_too_long",
            f"{verb} {start} {end} spans {end - start + 1} lines; at most {max_span} are allowed",
        )
    return start, end


@dataclass(frozen=True)
class _Block:
    index: int
    verb: str
    args: str
    fenced: bool
    body: list[str] | None  # None: a fence that never closes


def _blocks(lines: list[str]) -> list[_Block]:
    """Return the edit blocks of a reply; lines inside a fenced body are body, never headers."""
    found: list[_Block] = []
    i = 0
    while i < len(lines):
        match = _HEADER.match(lines[i])
        if not match:
            i += 1
            continue
        verb, args = match.group("verb"), match.group("args")
        fenced = match.group("fence") is not None or (i > 0 and bool(_FENCE_OPEN.match(lines[i - 1])))
        if match.group("fence") and re.search(r"`{3,}[ \t]*$", args):
            # a fence closed on the header line: ```DELETE 3 4```
            found.append(_Block(i, verb, re.sub(r"`{3,}[ \t]*$", "", args), True, []))
            i += 1
        elif fenced:
            close = next((j for j in range(i + 1, len(lines)) if _FENCE_CLOSE.match(lines[j])), None)
            found.append(_Block(i, verb, args, True, None if close is None else lines[i + 1 : close]))
            i = len(lines) if close is None else close + 1
        elif verb == "DELETE":
            found.append(_Block(i, verb, args, False, []))
            i += 1
        else:
            body = lines[i + 1 :]
            while body and not body[-1].strip():
                body.pop()
            found.append(_Block(i, verb, args, False, body))
            # a bare body runs to the end, so a header inside it is a second edit
            found.extend(_Block(j, "", "", False, []) for j in range(i + 1, len(lines)) if _HEADER.match(lines[j]))
            break
    return found


def parse_edit(text: str, n_lines: int, max_span: int = DEFAULT_MAX_SPAN) -> Edit:
    """Return the one edit in `text`, checked against a file of `n_lines` lines; raise EditError."""
    lines = [line.rstrip("\r") for line in text.split("\n")]
    blocks = _blocks(lines)
    if not blocks:
        raise EditError("no_edit", "no `EDIT N M` or `DELETE N M` line found")
    if len(blocks) > 1:
        where = ", ".join(str(b.index + 1) for b in blocks)
        raise EditError("multiple_edits", f"found {len(blocks)} edit headers (lines {where}); give exactly one")
    block = blocks[0]
    verb = block.verb
    start, end = _parse_range(verb, block.args, n_lines, max_span)
    if block.body is None:
        raise EditError("unclosed_fence", f"the fence opened by `{verb} {start} {end}` never closes")
    body = block.body
    if verb == "DELETE":
        if any(b.strip() for b in body):
            raise EditError("bad_range", f"DELETE {start} {end} takes no replacement lines; use EDIT {start} {end}")
        return Edit(start, end, (), "DELETE")
    if not any(b.strip() for b in body):
        raise EditError(
            "empty_replacement",
            f"EDIT {start} {end} has an empty body; to remove the lines write `DELETE {start} {end}`",
        )
    return Edit(start, end, tuple(body), "EDIT")


def line_ending(text: str) -> str:
    """Return the file's line terminator: CRLF if any line uses it, else LF."""
    return "\r\n" if "\r\n" in text else "\n"


def apply_edit(text: str, edit: Edit) -> str:
    """Return `text` with the edit applied; bytes outside the interval are kept as they were."""
    lines = split_lines(text)
    if edit.start < 1 or edit.end < edit.start:
        raise EditError("bad_range", f"{edit.verb} {edit.start} {edit.end}: not a line interval")
    if edit.end > len(lines):
        raise EditError("past_eof", f"{edit.verb} {edit.start} {edit.end}: the file has {len(lines)} lines")
    eol = line_ending(text)
    last = lines[edit.end - 1]
    last_eol = "\r\n" if last.endswith("\r\n") else "\n" if last.endswith("\n") else ""
    before, after = lines[: edit.start - 1], lines[edit.end :]
    if edit.verb == "DELETE":
        if not last_eol and not after and before:
            # the removed tail had no final newline; the new last line keeps that property
            prev = before[-1]
            before[-1] = prev[:-2] if prev.endswith("\r\n") else prev[:-1]
        return "".join(before + after)
    new = [f"{b}{eol}" for b in edit.body[:-1]] + [f"{edit.body[-1]}{last_eol}"]
    return "".join(before + new + after)
