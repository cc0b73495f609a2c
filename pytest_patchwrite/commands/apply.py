"""`patchwrite apply FILE [EDIT]`: one bounded edit, committed only when every gate passes."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .. import shown
from ..edit import DEFAULT_MAX_SPAN
from ..errors import EnvironmentFault
from ..files.inputs import read_bytes, read_stream
from ..flows.transaction import try_patch
from .common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, TRUSTED_HELP, add_engine_option, gates_for, one_line, seconds


def register(sub: Any) -> None:
    """Add the `apply` subcommand."""
    parser = sub.add_parser("apply", help="apply one EDIT/DELETE to FILE if every gate passes")
    parser.add_argument("file")
    parser.add_argument("edit", nargs="?", default="-", help="file holding the edit, or - for stdin (default)")
    parser.add_argument("--max-span", type=int, default=DEFAULT_MAX_SPAN)
    parser.add_argument("--no-compile-gate", action="store_true")
    parser.add_argument("--no-evidence-gate", action="store_true")
    add_engine_option(parser)
    parser.add_argument("--timeout", type=seconds, default=None)
    parser.add_argument("--json", action="store_true", help="print the result as one JSON object")
    parser.add_argument(
        "--replace-read-only", action="store_true", help="commit to a read-only FILE (it stays read-only)"
    )
    parser.add_argument("--trusted-input", action="store_true", help=TRUSTED_HELP)
    parser.set_defaults(func=run)


def read_edit(source: str) -> str:
    """Return the edit text read from the file `source` or from stdin (`-`).

    An empty or blank reply is a candidate like any other: the parser rejects it as `no_edit` (exit 1), as it
    rejects a reply that holds no header; only a file that cannot be read as a reply is an input error.
    """
    if source == "-":
        data = read_stream(sys.stdin.buffer, "<stdin>", "edit")
    else:
        data = read_bytes(Path(source), "edit")
    # undecodable bytes become lone surrogates: the parser rejects them in a body (invalid_text), with the line
    return data.decode("utf-8", "surrogateescape")


def run(args: argparse.Namespace) -> int:
    """Apply one edit to FILE behind the gates; return the exit code."""
    path = Path(args.file)
    edit_text = read_edit(args.edit)
    gates = gates_for(args, path)
    try:
        result = try_patch(path, edit_text, gates, max_span=args.max_span, replace_read_only=args.replace_read_only)
    except EnvironmentFault as exc:
        if not args.json:
            raise
        print(json.dumps(fault_json(exc), indent=2))
        print(f"patchwrite: environment error: {one_line(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        print(json.dumps(result.to_json(Path.cwd()), indent=2))
        return EXIT_OK if result.accepted else EXIT_FAILED
    if result.accepted:
        lo, hi = result.span or (0, 0)
        verb = result.edit.verb if result.edit else "EDIT"
        print(shown.line(f"{path}: accepted {verb} {lo} {hi} ({result.seconds:.2f} s)"))
        for violation in result.violations:  # warnings of the gates that passed: a decision the edit left stale
            print(violation.format(Path.cwd()))
    else:
        print(shown.line(f"{path}: rejected at {result.stage} ({result.reason})"))
        printed: set[str] = set()
        for violation in result.violations:
            token = f" {violation.token}" if violation.token else ""  # an .aux key located at the root has one
            bare = shown.line(f"{path}: {violation.kind}{token}: {violation.shown_message(Path.cwd())}")
            text = violation.format(Path.cwd()) if violation.line else bare
            if text not in printed:  # one `timeout` of the three evidence items is one line, not three alike
                printed.add(text)
                print(text)
    for check, why in result.skipped.items():
        print(shown.line(f"{path}: {check} not checked: {why}"))
    return EXIT_OK if result.accepted else EXIT_FAILED


def fault_json(exc: EnvironmentFault) -> dict[str, object]:
    """Return the `apply --json` object of a transaction an environment fault stopped (no verdict)."""
    return {"accepted": False, "stage": exc.stage, "reason": exc.reason, "span": None, "violations": [],
            "skipped": {}, "error": exc.to_json()}  # fmt: skip
