"""`patchwrite live-stress --out DIR`: a model proposes every corpus repair (the paper's live table)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..errors import InputError
from .common import EXIT_OK, add_cluster_option, csv_choices
from .propose import add_proposer_options, proposer_from, proposer_spec


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
    add_cluster_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run a model over the corpus jobs and write the live table; return the exit code."""
    from ..corpus import FAULTS, select
    from ..corpus.live import LiveOptions, run_live
    from ..corpus.stress import print_progress
    from ..flows.batch import cluster_address

    try:
        docs = select(args.corpus, args.docs.split(",") if args.docs else None)
    except ValueError as exc:
        raise InputError("--corpus/--docs", str(exc)) from None
    faults = csv_choices(args.faults, FAULTS, "faults")
    jobs = [(d.id, f) for d in docs for f in faults][: args.limit]
    cluster = cluster_address(args.cluster)
    if cluster and args.proposer == "local" and args.model:
        raise InputError("--model", "names a file on this machine, which a cluster's workers cannot read; with "
                         "--cluster the local proposer uses the bundled model installed on each worker")  # fmt: skip
    proposer = proposer_from(args)  # built here too: the settings name its model, and a bad option fails early
    model_path = getattr(proposer, "model_path", None)
    settings = {
        "proposer": args.proposer,
        "model": model_path.name if model_path is not None else getattr(proposer, "model", args.model),
        "grammar": not args.no_grammar if args.proposer == "local" else None,
        "max_tokens": args.max_tokens,
    }
    progress = print_progress if sys.stderr.isatty() or args.progress else None
    chosen = proposer_spec(args) if cluster else proposer
    summary = run_live(chosen, jobs, Path(args.out), LiveOptions(build=args.build), settings, progress, cluster)
    print(json.dumps(summary, indent=2))
    return EXIT_OK
