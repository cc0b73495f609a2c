"""What the MCP tools return that came from a manuscript, escaped as all our output is (`shown.text`) and cut.

A file name a client passes back as `path` is a handle and stays exact (docs/mcp.md); a finding's text (a log
message, a token, a bindings row) is shown, so it is escaped here.
"""

from __future__ import annotations

from typing import Any

from ..shown import text as escaped

MAX_MESSAGE_CHARS = 400

__all__ = ["MAX_MESSAGE_CHARS", "clean", "escaped", "shown_rows"]


def clean(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """Return untrusted text (a log message, a token) escaped as all our output is (`shown.text`), cut at `limit`."""
    shown = escaped(text)
    return shown if len(shown) <= limit else shown[:limit] + f"... ({len(shown) - limit} more characters)"


def shown_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return bindings rows with every text value escaped: they are findings to show, not paths to pass back."""

    def shown(value: Any) -> Any:
        if isinstance(value, str):
            return clean(value, 500)
        if isinstance(value, dict):
            return {k: shown(v) for k, v in value.items()}
        if isinstance(value, list):
            return [shown(v) for v in value]
        return value

    return [shown(row) for row in rows]
