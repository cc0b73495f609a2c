"""The EDIT grammar: parsing one bounded edit and applying it byte-exactly.

A proposer sees the source numbered 1-based and answers with one block:

    ```EDIT N M            EDIT N M              DELETE N M
    replacement lines      replacement lines
    ```                    (to the end of text)

Lines outside a fenced block are commentary and ignored. `EDIT N M` followed (blank lines
allowed) by an opening fence is the fenced form: the fence's content is the body.
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
    "fence_in_body",
)

#: a line number longer than this is past the end of any file (and int() of 4,300 digits raises)
_MAX_DIGITS = 18
# ASCII digits only (\d also matches Arabic-Indic and other digits); a minus sign is read so that
# `EDIT -2 3` is told lines start at 1; leading zeros are allowed (04 is 4)
_INT = re.compile(r"-?[0-9]+")
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


def line_texts(text: str) -> list[str]:
    """Return each line's text without its terminator (LF or CRLF): a lone CR is the line's own character."""
    return [raw[:-2] if raw.endswith("\r\n") else raw.removesuffix("\n") for raw in split_lines(text)]


def number_lines(text: str) -> str:
    """Return the numbered view a proposer sees: right-aligned `N | text` lines."""
    lines = line_texts(text)
    width = len(str(len(lines))) if lines else 1
    return "".join(f"{i:>{width}} | {content}\n" for i, content in enumerate(lines, start=1))


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


def _is_fence(line: str) -> bool:
    return line.lstrip(" \t").startswith("```")


def _fenced(lines: list[str], header: int, opening: int, verb: str, args: str) -> tuple[list[_Block], int]:
    """Return the block whose fence opens at `opening` (and a block per fenced header in its body), and where
    scanning resumes: a ```` ```EDIT ```` line inside a body opens a second edit, never body text."""
    close = _close_after(lines, opening)
    body = None if close is None else lines[opening + 1 : close]
    nested = [_Block(j, "", "", True, []) for j in range(opening + 1, close or len(lines))
              if _is_fence(lines[j]) and _header(lines[j])]  # fmt: skip
    return [_Block(header, verb, args, True, body), *nested], len(lines) if close is None else close + 1


def _rest(lines: list[str], i: int) -> tuple[list[_Block], list[str]]:
    """Return a block per header after line `i` and the lines after `i`, trailing blank lines dropped."""
    rest = lines[i + 1 :]
    while rest and not rest[-1].strip():
        rest.pop()
    return [_Block(j, "", "", False, []) for j in range(i + 1, len(lines)) if _header(lines[j])], rest


def _opening_fence_after(lines: list[str], i: int) -> int | None:
    """Return the index of the first non-blank line after `i` when it opens a fence (```` ```latex ````), else None."""
    j = next((j for j in range(i + 1, len(lines)) if lines[j].strip()), None)
    return j if j is not None and _fence_info(lines[j]) is not None else None


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
                blocks, i = _fenced(lines, i + 1, i + 1, nxt[1], nxt[2])
                found.extend(blocks)
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
            blocks, i = _fenced(lines, i, i, verb, args)
            found.extend(blocks)
        elif verb == "EDIT" and (opening := _opening_fence_after(lines, i)) is not None:
            # EDIT 4 4 / ```latex / body / ``` / a closing remark: the chatty model's usual answer
            blocks, i = _fenced(lines, i, opening, verb, args)
            found.extend(blocks)
        else:
            # a bare body (and whatever follows a bare DELETE) runs to the end, so a header in it is a second edit
            headers, body = _rest(lines, i)
            found.append(_Block(i, verb, args, False, body))
            found.extend(headers)
            break
    return found


def parse_edit(text: str, n_lines: int, max_span: int = DEFAULT_MAX_SPAN) -> Edit:
    """Return the one edit in `text`, checked against a file of `n_lines` lines; raise EditError."""
    # one leading byte-order mark (a Windows editor's) is no part of the reply
    lines = [line.rstrip("\r") for line in text.removeprefix("\ufeff").split("\n")]
    blocks = _blocks(lines)
    if not blocks:
        empty = "" if text.strip() else " (the reply is empty)"
        raise EditError("no_edit", f"no `EDIT N M` or `DELETE N M` line found{empty}")
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
            message = (f"DELETE {start} {end} takes no replacement lines, but text follows it; to replace the "
                       f"lines use EDIT {start} {end}, and put any remark before the header")  # fmt: skip
            raise EditError("bad_range", message)
        return Edit(start, end, (), "DELETE")
    if not any(b.strip() for b in body):
        raise _empty_body(start, end)
    fence = next((k for k, b in enumerate(body) if _is_fence(b)), None)
    if not block.fenced and fence is not None:
        raise EditError("fence_in_body", f"the bare EDIT {start} {end} body holds a fence line (reply line "
                        f"{block.index + 2 + fence}), which would be written into the file; put the replacement "
                        f"right after the header inside one fence (```EDIT {start} {end} ... ```) and any remark "
                        "outside it")  # fmt: skip
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
