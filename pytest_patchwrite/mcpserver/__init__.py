"""`patchwrite mcp [DIR]`: an MCP server whose only way to change a manuscript is a gated, bounded edit.

`workspace` holds what the tools do (no protocol), `project` reads the project's pytest
settings as data, `server` binds the tools to the official `mcp` SDK (the optional extra
`pytest-patchwrite[mcp]`, imported only here).
"""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

from ..errors import InputError

INSTALL_HINT = "pip install 'pytest-patchwrite[mcp]'"


def _require_sdk() -> None:
    """Raise InputError naming the extra to install when the `mcp` SDK 2.x is missing."""
    try:
        version = importlib.metadata.version("mcp")
    except importlib.metadata.PackageNotFoundError:
        raise InputError("patchwrite mcp", f"the MCP SDK is not installed: {INSTALL_HINT}") from None
    major = version.split(".", 1)[0]
    if not major.isdigit() or int(major) != 2:
        raise InputError("patchwrite mcp", f"needs the MCP SDK 2.x, found mcp {version}: {INSTALL_HINT}")


def run(directory: Path | str) -> int:
    """Serve `directory` over stdio until the client disconnects; return the exit code (0)."""
    _require_sdk()
    from .server import serve
    from .workspace import Workspace

    serve(Workspace(Path(directory)))
    return 0
