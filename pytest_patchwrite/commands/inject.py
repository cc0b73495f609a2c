"""`patchwrite inject FILE --fault NAME`: one of the paper's eight faults, verified to break the document."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .. import shown
from ..errors import InputError
from ..files.inputs import read_text
from ..model import display_path
from .common import EXIT_OK, add_engine_option, seconds, timeout_of, write_output


def register(sub: Any) -> None:
    """Add the `inject` subcommand."""
    parser = sub.add_parser("inject", help="inject one of the paper's eight faults into FILE")
    parser.add_argument("file")
    parser.add_argument("--fault", required=True, help="fake_cite, bad_number, todo, swapped_acc, broken_math, "
                        "unmatched_brace, unclosed_env or undefined_cmd")  # fmt: skip
    parser.add_argument(
        "-o",
        "--output",
        default="-",
        help="where to write the broken text of the file holding the fault (default: stdout)",
    )
    parser.add_argument(
        "--out-tree",
        default=None,
        metavar="DIR",
        help="write the faulted manuscript as a copy of its whole directory into DIR (new or empty)",
    )
    add_engine_option(parser)
    parser.add_argument("--timeout", type=seconds, default=None, help="seconds per verification compile")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Inject one of the eight faults into FILE's manuscript (a site in FILE, else in any file it reads); return the
    exit code."""
    from ..corpus import FaultNotApplicable
    from ..corpus.verify import inject_verified, refuse_used_tree, write_tree
    from ..flows.check import CheckOptions

    path = Path(args.file)
    read_text(path)
    if args.out_tree:
        refuse_used_tree(Path(args.out_tree))  # before the compiles, not after
    options = CheckOptions(engine=args.engine, timeout=timeout_of(args))
    try:
        verified = inject_verified(path, args.fault, options)
    except FaultNotApplicable as exc:
        raise InputError(path, str(exc)) from None
    fault, site = verified.fault, verified.path or path
    written = []
    if args.out_tree:
        written.append(str(write_tree(verified, Path(args.out_tree))))
    if args.output != "-":
        write_output(args.output, fault.broken, "the broken text")
        written.append(args.output)
    elif not args.out_tree:
        # stdout may be a CI log: the text is printed escaped, and `-o FILE` writes its exact bytes
        sys.stdout.write(shown.listing(fault.broken))
        escaped = shown.escaped_in(fault.broken)
        if escaped:
            print(f"patchwrite: note: the text holds characters printed as escapes ({', '.join(escaped)}); "
                  "-o FILE writes it as it is", file=sys.stderr)  # fmt: skip
    where = display_path(str(site), Path.cwd())
    print(shown.line(f"{where}:{fault.line}: {fault.name} ({fault.fault_class}): {fault.note}"), file=sys.stderr)
    for skipped in verified.rejected:
        print(shown.line(f"  skipped a site that does not break the document: {skipped}"), file=sys.stderr)
    print(f"  verified: {verified.outcome}", file=sys.stderr)
    for out in written:
        print(shown.line(f"  written to {out}"), file=sys.stderr)
    return EXIT_OK
