"""`patchwrite number FILE`: the numbered view a proposer sees."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..edit import number_lines
from ..inputs import read_text
from .common import EXIT_OK


def register(sub: Any) -> None:
    """Add the `number` subcommand."""
    parser = sub.add_parser("number", help="print FILE numbered as a proposer sees it")
    parser.add_argument("file")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the numbered view of FILE; return the exit code."""
    sys.stdout.write(number_lines(read_text(Path(args.file))))
    return EXIT_OK
