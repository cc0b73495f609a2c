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
    "invalid_text",
)

#: a line number longer than this is past the end of any file (and int() of 4,300 digits raises)
_MAX_DIGITS = 18
_INT = re.compile(r"[+-]?\d+")
_INFO = re.compile(r"[\w-]*")


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


def _line_number(text: str) -> int:
    """Return a header's line number; one of more than 18 digits counts as 10**18 (past any file's end)."""
    sign = -1 if text.startswith("-") else 1
    digits = text.lstrip("+-").lstrip("0") or "0"
    return sign * (10**_MAX_DIGITS if len(digits) > _MAX_DIGITS else int(digits))


def _shown(text: str) -> str:
    return text if len(text) <= 24 else f"{text[:12]}...({len(text)} digits)"


def check_range(verb: str, start: int, end: int, n_lines: int, max_span: int, shown: str = "") -> None:
    """Raise EditError unless `start..end` is a line interval of a file of `n_lines` lines, at most `max_span` long."""
    where = f"{verb} {shown or f'{start} {end}'}"
    if start < 1:
        raise EditError("bad_range", f"{where}: lines are numbered from 1")
    if start > end:
        raise EditError("bad_range", f"{where}: first line is after the last")
    if end > n_lines:
        raise EditError("past_eof", f"{where}: the file has {n_lines} lines")
    if end - start + 1 > max_span:
        raise EditError("span_too_long", f"{where} spans {end - start + 1} lines; at most {max_span} are allowed")


def _parse_range(verb: str, args: str, n_lines: int, max_span: int) -> tuple[int, int]:
    parts = args.split()
    if len(parts) != 2 or not all(_INT.fullmatch(p) for p in parts):
        raise EditError("bad_range", f"{verb} needs two integer line numbers, got {_shown(args.strip())!r}")
    start, end = _line_number(parts[0]), _line_number(parts[1])
    check_range(verb, start, end, n_lines, max_span, f"{_shown(parts[0])} {_shown(parts[1])}")
    return start, end


def check_body(verb: str, start: int, end: int, body: tuple[str, ...] | list[str]) -> None:
    """Raise EditError when a body cannot be written as UTF-8 (a lone surrogate, e.g. from undecodable bytes)."""
    for number, line in enumerate(body, start=1):
        try:
            line.encode("utf-8")
        except UnicodeEncodeError as exc:
            bad = f"U+{ord(line[exc.start]):04X}"
            problem = f"body line {number} holds {bad}, which is not text (invalid UTF-8 in the reply?)"
            raise EditError("invalid_text", f"{verb} {start} {end}: {problem}") from None


def _empty_body(start: int, end: int) -> EditError:
    message = f"EDIT {start} {end} has an empty body; to remove the lines write `DELETE {start} {end}`"
    return EditError("empty_replacement", message)


def check_edit(edit: Edit, n_lines: int, max_span: int = DEFAULT_MAX_SPAN) -> None:
    """Raise EditError unless `edit` (built through the API, not parsed) is valid for a file of `n_lines` lines."""
    if edit.verb not in ("EDIT", "DELETE"):
        raise EditError("no_edit", f"unknown verb {edit.verb!r}; use EDIT or DELETE")
    if not isinstance(edit.start, int) or not isinstance(edit.end, int) or isinstance(edit.start, bool):
        raise EditError("bad_range", f"{edit.verb} needs two integer line numbers, got {edit.start!r} {edit.end!r}")
    check_range(edit.verb, edit.start, edit.end, n_lines, max_span)
    if edit.verb == "DELETE" and edit.body:
        raise EditError("bad_range", f"DELETE {edit.start} {edit.end} takes no replacement lines")
    if edit.verb == "EDIT" and not any(isinstance(b, str) and b.strip() for b in edit.body):
        raise _empty_body(edit.start, edit.end)
    if not all(isinstance(b, str) for b in edit.body):
        raise EditError("invalid_text", f"EDIT {edit.start} {edit.end}: every body line must be a string")
    check_body(edit.verb, edit.start, edit.end, edit.body)


def _header(line: str) -> tuple[bool, str, str] | None:
    """Return (fenced, verb, args) when `line` is an edit header; string operations only, linear in the line."""
    rest = line.lstrip(" \t")
    fenced = rest.startswith("```")
    if fenced:
        rest = rest.lstrip("`").lstrip(" \t")
    for verb in ("EDIT", "DELETE"):
        if rest.startswith(verb):
            args = rest[len(verb) :]
            if not args or args[0] in " \t":
                return fenced, verb, args
    return None


def _fence_info(line: str) -> str | None:
    """Return the info string of a fence line (```` ```latex ```` -> 'latex', ```` ``` ```` -> ''), else None."""
    rest = line.lstrip(" \t")
    if not rest.startswith("```"):
        return None
    info = rest.lstrip("`").rstrip(" \t")
    return info if _INFO.fullmatch(info) else None


def _closes_on_line(args: str) -> str | None:
    """Return the args before a fence closed on the header line (```` ```DELETE 3 4``` ````), else None."""
    stripped = args.rstrip(" \t")
    bare = stripped.rstrip("`")
    return bare if len(stripped) - len(bare) >= 3 else None


@dataclass(frozen=True)
class _Block:
    index: int
    verb: str
    args: str
    fenced: bool
    body: list[str] | None  # None: a fence that never closes


def _close_after(lines: list[str], i: int) -> int | None:
    return next((j for j in range(i + 1, len(lines)) if _fence_info(lines[j]) == ""), None)


def _blocks(lines: list[str]) -> list[_Block]:
    """Return the edit blocks of a reply.

    A header counts when it stands outside any closed non-edit fence (prose or code a model
    quotes before its answer); lines inside an edit's fenced body are body, never headers.
    """
    found: list[_Block] = []
    i = 0
    while i < len(lines):
        head = _header(lines[i])
        if head is None:
            info = _fence_info(lines[i])
            if info is not None and i + 1 < len(lines) and (nxt := _header(lines[i + 1])) and not nxt[0]:
                # ```latex / EDIT 4 4 / body / ```: a fence opened for the edit
                close = _close_after(lines, i + 1)
                body = None if close is None else lines[i + 2 : close]
                found.append(_Block(i + 1, nxt[1], nxt[2], True, body))
                i = len(lines) if close is None else close + 1
            elif info is not None:
                close = _close_after(lines, i)
                i = i + 1 if close is None else close + 1  # a closed non-edit fence is skipped whole
            else:
                i += 1
            continue
        fenced, verb, args = head
        closed = _closes_on_line(args) if fenced else None
        if closed is not None:
            found.append(_Block(i, verb, closed, True, []))
            i += 1
        elif fenced:
            close = _close_after(lines, i)
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
            found.extend(_Block(j, "", "", False, []) for j in range(i + 1, len(lines)) if _header(lines[j]))
            break
    return found


def parse_edit(text: str, n_lines: int, max_span: int = DEFAULT_MAX_SPAN) -> Edit:
    """Return the one edit in `text`, checked against a file of `n_lines` lines; raise EditError."""
    lines = [line.rstrip("\r") for line in text.split("\n")]
    blocks = _blocks(lines)
    if not blocks:
        raise EditError("no_edit", "no `EDIT N M` or `DELETE N M` line found")
    if len(blocks) > 1:
        where = ", ".join(str(b.index + 1) for b in blocks[:10]) + (", ..." if len(blocks) > 10 else "")
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
        raise _empty_body(start, end)
    check_body(verb, start, end, body)
    return Edit(start, end, tuple(body), "EDIT")


def line_ending(text: str) -> str:
    """Return the file's line terminator: CRLF if any line uses it, else LF."""
    return "\r\n" if "\r\n" in text else "\n"


def apply_edit(text: str, edit: Edit) -> str:
    """Return `text` with the edit applied; bytes outside the interval are kept as they were."""
    lines = split_lines(text)
    check_edit(edit, len(lines), max_span=len(lines) or 1)
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
