"""`patchwrite stress --out DIR`: the paper's oracle stress test (Table 2)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..errors import InputError
from .common import EXIT_OK, add_cluster_option, add_engine_option, csv_choices, seconds, timeout_of


def register(sub: Any) -> None:
    """Add the `stress` subcommand."""
    parser = sub.add_parser("stress", help="rerun the paper's oracle stress test (Table 2)")
    parser.add_argument("--out", required=True, help="directory for summary.json, slices.json and jobs.jsonl")
    parser.add_argument("-j", "--jobs", type=int, default=None, help="worker processes (default: all cores)")
    add_cluster_option(parser)
    add_engine_option(parser)
    parser.add_argument("--faults", default=None, help="comma-separated subset of the eight faults")
    parser.add_argument("--conditions", default=None, help="comma-separated subset of the conditions")
    parser.add_argument("--corpus", default=None, help="en, zh or en,zh (default: all 24 manuscripts)")
    parser.add_argument("--docs", default=None, help="comma-separated manuscript ids")
    parser.add_argument("--build", default="surrogate", help="surrogate (the paper's, pdflatex) or ctex (xelatex)")
    parser.add_argument("--timeout", type=seconds, default=None)
    parser.add_argument("--detection", action="store_true",
                        help="also check each content fault with the pool rule and with bindings (summary.json "
                        "`detection`; 4 more compiles per manuscript)")  # fmt: skip
    parser.add_argument("--progress", action="store_true", help="print progress even when stderr is not a terminal")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the oracle stress test and write summary.json, slices.json and jobs.jsonl; return the exit code."""
    from ..corpus import BUILDS, FAULTS, select
    from ..corpus.stress import CONDITIONS, StressOptions, format_table, print_progress, run_stress
    from ..flows.batch import cluster_address

    if args.build not in BUILDS:
        raise InputError("--build", f"unknown build {args.build}; use {' or '.join(BUILDS)}")
    try:
        docs = select(args.corpus, args.docs.split(",") if args.docs else None)
    except ValueError as exc:
        raise InputError("--corpus/--docs", str(exc)) from None
    options = StressOptions(
        faults=csv_choices(args.faults, FAULTS, "faults"),
        conditions=csv_choices(args.conditions, CONDITIONS, "conditions"),
        build=args.build,
        engine=args.engine,
        timeout=timeout_of(args),
        detection=args.detection,
    )
    progress = print_progress if sys.stderr.isatty() or args.progress else None
    cluster = cluster_address(args.cluster)
    summary = run_stress([d.id for d in docs], options, Path(args.out), args.jobs, progress, cluster)
    print(format_table(summary))
    written = f"{args.out}/summary.json, slices.json, jobs.jsonl"
    print(f"{summary['n_jobs']} jobs in {summary['wall_seconds']:.1f} s; wrote {written}")
    return EXIT_OK
