"""`patchwrite mcp [DIR]`: an MCP server over stdio whose only write is a gated, bounded edit."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def register(sub: Any) -> None:
    """Add the `mcp` subcommand."""
    parser = sub.add_parser("mcp", help="an MCP server (stdio) whose only write is a gated, bounded edit")
    parser.add_argument("dir", nargs="?", default=".", help="directory whose files the tools may touch (default .)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Serve DIR's manuscripts to an MCP client over stdio (gated edits only); return the exit code."""
    from ..mcpserver import run as serve

    return serve(Path(args.dir))
