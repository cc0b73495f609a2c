"""`patchwrite explain [KIND]`: the command's parser and body live with the kinds, in `kinddoc.py`."""

from __future__ import annotations

from typing import Any

from .kinddoc import add_explain_parser


def register(sub: Any) -> None:
    """Add the `explain` subcommand."""
    add_explain_parser(sub)
