"""`patchwrite clean [DIR]`: remove what killed patchwrite processes left behind."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..errors import InputError
from .common import EXIT_OK


def register(sub: Any) -> None:
    """Add the `clean` subcommand."""
    parser = sub.add_parser("clean", help="remove temp files and sandboxes left by killed patchwrite processes")
    parser.add_argument("dir", nargs="?", default=".", help="directory to sweep, with its subdirectories (default .)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Remove temp files and sandbox directories left by killed patchwrite processes; return the exit code."""
    from ..files.tempfiles import sweep_temp_root, sweep_tree
    from ..gates.verdicts import default_cache_dir

    top = Path(args.dir)
    if not top.is_dir():
        raise InputError(top, "not a directory")
    caches = default_cache_dir().parent  # the verdict cache, the warm states and the font cache
    removed = sweep_tree(top) + sweep_temp_root() + (sweep_tree(caches) if caches.is_dir() else [])
    for path in removed:
        print(f"removed {path}")
    print(f"{len(removed)} stale temp file(s) or sandbox(es) removed")
    return EXIT_OK
