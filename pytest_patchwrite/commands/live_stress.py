"""`patchwrite live-stress --out DIR`: a model proposes every corpus repair (the paper's live table)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..errors import InputError
from .common import EXIT_OK, csv_choices
from .propose import add_proposer_options, proposer_from


def register(sub: Any) -> None:
    """Add the `live-stress` subcommand."""
    parser = sub.add_parser("live-stress", help="a model proposes every corpus repair (the paper's live table)")
    parser.add_argument("--out", required=True)
    parser.add_argument("--faults", default=None)
    parser.add_argument("--corpus", default=None)
    parser.add_argument("--docs", default=None)
    parser.add_argument("--limit", type=int, default=None, help="run only the first N jobs")
    parser.add_argument("--build", default="surrogate")
    parser.add_argument("--progress", action="store_true")
    add_proposer_options(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run a model over the corpus jobs and write the live table; return the exit code."""
    from ..corpus import FAULTS, select
    from ..corpus.live import LiveOptions, run_live
    from ..corpus.stress import print_progress

    try:
        docs = select(args.corpus, args.docs.split(",") if args.docs else None)
    except ValueError as exc:
        raise InputError("--corpus/--docs", str(exc)) from None
    faults = csv_choices(args.faults, FAULTS, "faults")
    jobs = [(d.id, f) for d in docs for f in faults][: args.limit]
    proposer = proposer_from(args)
    model_path = getattr(proposer, "model_path", None)
    settings = {
        "proposer": args.proposer,
        "model": model_path.name if model_path is not None else getattr(proposer, "model", args.model),
        "grammar": not args.no_grammar if args.proposer == "local" else None,
        "max_tokens": args.max_tokens,
    }
    progress = print_progress if sys.stderr.isatty() or args.progress else None
    summary = run_live(proposer, jobs, Path(args.out), LiveOptions(build=args.build), settings, progress)
    print(json.dumps(summary, indent=2))
    return EXIT_OK
