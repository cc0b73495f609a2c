"""`patchwrite mcp DIR`: the MCP server (stdio, the official `mcp` SDK 2.x, `MCPServer`) over a `Workspace`.

Tool bodies run in worker threads, one at a time (the workspace lock): the gates keep
per-call and module-level state. A call whose client went away still finishes in its
thread (anyio does not abandon it), so the file ends as it was or as the accepted
candidate; `try_patch` writes atomically either way.
"""

from __future__ import annotations

import functools
import logging
import re
import sys
from collections.abc import Callable
from typing import Annotated, Any

import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

from .. import __version__
from ..errors import PatchwriteError
from ..gates.report import EngineMissing
from .workspace import MAX_READ_LINES, Workspace

log = logging.getLogger("patchwrite.mcp")

INSTRUCTIONS = """PatchWrite keeps a LaTeX manuscript valid while you edit it. The only way to change a file is
apply_edit: one bounded EDIT/DELETE of a line interval, written only if the manuscript still compiles and every
citation and empirical number stays attested by its bibliography and experimental logs. Loop: list_manuscripts,
read_numbered (note the revision), apply_edit with that revision, read the rejection, fix, retry."""

LIST_DESCRIPTION = """List the root LaTeX manuscripts under the served directory, each with the files it reads
(its \\input/\\include files), as paths relative to the served directory. Call this first."""

READ_DESCRIPTION = f"""Read a file of the served directory as numbered lines `N | text` (1-based), the view that
apply_edit's line numbers refer to. Returns `text`, `total_lines`, the `start`..`end` shown (at most
{MAX_READ_LINES} lines per call; `next_start` when more follow) and `revision`, the sha256 of the file's bytes:
pass it to apply_edit so an edit is never applied to lines you have not seen. Logs and .bib files can be read
too (to see which numbers and keys are attested); only manuscript .tex files can be edited."""

APPLY_DESCRIPTION = """Apply one bounded edit to a manuscript .tex file. The file is written only if the result
still compiles and adds no undefined citation, unattested number or placeholder; otherwise nothing changes and the
result says why (`stage`: parse, compile or evidence; `reason`; `violations` with file, line, kind, message).

The edit is ONE block:
```EDIT N M
replacement lines
```
It replaces lines N..M (1-based, inclusive, as read_numbered shows them) by the replacement lines.
Rules: 1 <= N <= M <= total_lines; M - N + 1 <= 40; write the lines without the `N | ` prefix; keep every other
line, number and citation as it is. To remove lines send the single line `DELETE N M` (an EDIT with an empty body
is rejected as empty_replacement). To insert, replace one line by itself plus the new lines.
Example, replacing line 12:
```EDIT 12 12
The encoder uses 12 layers~\\cite{smith2020}.
```
Pass `revision` from read_numbered: if the file changed since, the edit is refused (reason `stale_revision`) and
you must read again. The result carries the new `revision` and `context`, the numbered lines around the change."""

CHECK_DESCRIPTION = """Run every gate on the manuscript that reads `path` (compile with the real TeX engine,
citations, numbers against the experimental logs, placeholders) without changing anything. Returns the
`patchwrite check --json` object: per gate `ok` and located `violations`."""

DIFF_DESCRIPTION = """Report what the manuscript that reads `path` moved against a git revision `base` (e.g. HEAD,
origin/main): every number and cite key removed, added or changed, whether each added one is attested, and the
numeric and citation Jaccard similarity. Read-only."""


class _Open(BaseModel):
    # the fields below are the ones a model relies on; the rest of the object passes through as it is
    model_config = ConfigDict(extra="allow")


class LocatedViolation(_Open):
    """One reason a candidate was rejected, located in the manuscript."""

    kind: str = Field(description="the violation kind, e.g. unknown_cite, math_mode, empty_replacement")
    file: str = Field(description="the file, relative to the served directory")
    line: int = Field(description="the 1-based line (0 when the whole file is meant)")
    token: str = Field(description="the offending token (a cite key, a number, a command), or empty")
    message: str = Field(description="what is wrong and what to do")


class NumberedLines(_Open):
    """A window of numbered lines."""

    start: int
    end: int
    text: str = Field(description="`N | text` lines")


class ReadResult(NumberedLines):
    """The numbered view of a file and its revision."""

    path: str
    revision: str = Field(description="sha256 of the file's bytes: pass it to apply_edit")
    total_lines: int
    next_start: int | None = Field(None, description="the first line not shown, when more follow")


class ApplyResult(_Open):
    """The `apply --json` object, the file's revision after the call and the lines around the change."""

    accepted: bool = Field(description="true: the file now holds the candidate; false: it kept its bytes")
    stage: str | None = Field(description="where it was rejected: parse, compile or evidence (null if accepted)")
    reason: str | None = Field(description="the reason code, e.g. empty_replacement or unknown_cite:fake2024")
    span: list[int] | None = Field(description="[N, M], the lines the edit replaced")
    violations: list[LocatedViolation]
    revision: str = Field(description="sha256 of the file's bytes after the call (the new one when accepted)")
    context: NumberedLines | None = Field(None, description="the numbered lines around the change, as they are now")
    hint: str = Field(description="what to do next")


BINDINGS_DESCRIPTION = """Show the manuscript's bindings file (each empirical number bound to one log entry) as it
is, and what `patchwrite bind` would change: bindings it would add or remove, numbers no log entry attests, and
counts. Read-only: the bindings file is written only by `patchwrite bind`, never by this server."""

PathArg = Annotated[str, Field(description="file path relative to the served directory, e.g. main.tex")]


def _run_tool(workspace: Workspace, fn: Callable[..., dict[str, Any]], *args: Any) -> dict[str, Any]:
    """Return `fn(*args)` under the workspace lock; bad input and internal errors become one-line ToolErrors."""
    with workspace.lock:
        try:
            return fn(*args)
        except PatchwriteError as exc:
            raise ToolError(_one_line(exc.format(workspace.directory))) from None
        except EngineMissing as exc:
            raise ToolError(_one_line(str(exc))) from None
        except Exception as exc:  # noqa: BLE001 - the server keeps serving; the traceback goes to stderr
            log.exception("internal error in %s", getattr(fn, "__name__", "a tool"))
            raise ToolError(
                f"internal error: {type(exc).__name__}: {_one_line(str(exc))}; this is a bug in patchwrite "
                "(the traceback is on the server's stderr); the file was not changed unless the result said accepted"
            ) from None


_PYDANTIC_NOISE = re.compile(r"\s*\[type=[^\]]*\]|\s*For further information visit \S+")


def _error_line(text: str) -> str:
    """Return a tool error's text on one line: the SDK's argument-validation errors span several."""
    lines = [line.strip() for line in _PYDANTIC_NOISE.sub("", text).splitlines() if line.strip()]
    if len(lines) > 1 and "validation error" in lines[0]:
        head = lines[0].split(":", 1)[0]
        pairs = [f"{lines[i]}: {lines[i + 1]}" for i in range(1, len(lines) - 1, 2)]
        return _one_line(f"{head}: invalid arguments: {'; '.join(pairs)}")
    return _one_line(" ".join(lines))


async def one_line_errors(ctx: Any, call_next: Any) -> Any:
    """Middleware: every tool error reaches the client as one line, like our command line's errors."""
    result = await call_next(ctx)
    if isinstance(result, CallToolResult) and result.is_error:
        text = " ".join(block.text for block in result.content if isinstance(block, TextContent))
        result.content = [TextContent(type="text", text=_error_line(text))]
    elif isinstance(result, dict) and result.get("isError") and isinstance(result.get("content"), list):
        # the runner hands middleware the result already shaped for the wire
        text = " ".join(str(b.get("text", "")) for b in result["content"] if isinstance(b, dict))
        result = {**result, "content": [{"type": "text", "text": _error_line(text)}]}
    return result


def build_server(workspace: Workspace) -> MCPServer:
    """Return the MCP server whose tools act on `workspace`."""
    server: MCPServer = MCPServer(
        "patchwrite",
        title="PatchWrite",
        instructions=INSTRUCTIONS,
        version=__version__,
        log_level="WARNING",
        middleware=[one_line_errors],
    )

    async def call(fn: Callable[..., dict[str, Any]], *args: Any) -> dict[str, Any]:
        # not abandoned on cancellation: a client that goes away mid-edit still gets a whole edit or none
        return await anyio.to_thread.run_sync(functools.partial(_run_tool, workspace, fn, *args))

    read_only = ToolAnnotations(
        read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
    )

    async def list_manuscripts() -> dict[str, Any]:
        return await call(workspace.list_manuscripts)

    async def read_numbered(
        path: PathArg,
        start: Annotated[int | None, Field(description="first line to show (default 1)", ge=1)] = None,
        end: Annotated[int | None, Field(description="last line to show (default: the end, bounded)", ge=1)] = None,
    ) -> ReadResult:
        return ReadResult.model_validate(await call(workspace.read_numbered, path, start, end))

    async def apply_edit(
        path: PathArg,
        edit: Annotated[str, Field(description="one ```EDIT N M block (body, closing fence) or a `DELETE N M` line")],
        revision: Annotated[
            str | None, Field(description="the `revision` read_numbered returned; refuses the edit if the file moved")
        ] = None,
    ) -> ApplyResult:
        return ApplyResult.model_validate(await call(workspace.apply_edit, path, edit, revision))

    async def check(path: PathArg) -> dict[str, Any]:
        return await call(workspace.check, path)

    async def diff(
        path: PathArg,
        base: Annotated[str, Field(description="git revision to compare against, e.g. HEAD or origin/main")],
    ) -> dict[str, Any]:
        return await call(workspace.diff, path, base)

    server.add_tool(list_manuscripts, description=LIST_DESCRIPTION, annotations=read_only)
    server.add_tool(read_numbered, description=READ_DESCRIPTION, annotations=read_only)
    writes = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)
    server.add_tool(apply_edit, description=APPLY_DESCRIPTION, annotations=writes)
    server.add_tool(check, description=CHECK_DESCRIPTION, annotations=read_only)

    async def bindings(path: PathArg) -> dict[str, Any]:
        return await call(workspace.bindings, path)

    server.add_tool(diff, description=DIFF_DESCRIPTION, annotations=read_only)
    server.add_tool(bindings, description=BINDINGS_DESCRIPTION, annotations=read_only)
    return server


def serve(workspace: Workspace) -> None:
    """Serve `workspace` over stdio until the client closes the connection."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("patchwrite mcp: %(levelname)s: %(message)s"))
    log.addHandler(handler)
    log.propagate = False
    for item in workspace.settings.ignored:
        log.warning("%s: ignored %s", workspace.settings.source, item)
    build_server(workspace).run("stdio")


def _one_line(message: str) -> str:
    first = message.strip().splitlines()[0] if message.strip() else ""
    return first if len(first) <= 500 else first[:500] + "..."
