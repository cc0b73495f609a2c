"""`patchwrite diff FILE --base REV`: what a change moved against a git revision."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from .common import EXIT_FAILED, EXIT_OK, SARIF_HELP, write_sarif


def register(sub: Any) -> None:
    """Add the `diff` subcommand."""
    parser = sub.add_parser("diff", help="what a change moved against a git revision")
    parser.add_argument("file")
    parser.add_argument("--base", required=True, help="git revision to compare against (e.g. origin/main)")
    parser.add_argument("--max-hunk", type=int, default=None, help="fail hunks longer than this many lines")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--sarif", metavar="FILE", default=None, help=SARIF_HELP)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Report what the working tree's manuscript moved against a git revision; return the exit code."""
    from ..gates.evidence import EvidenceConfig
    from ..manuscript import find_root
    from ..prdiff import GitBase, diff_manuscript, format_change

    root = find_root(Path(args.file))
    base = GitBase.open(root.parent, args.base)
    report = diff_manuscript(root, base, EvidenceConfig(), args.max_hunk)
    write_sarif(args.sarif, report.result().violations)
    if args.json:
        print(json.dumps({"path": str(root), "base": args.base, **report.result().to_json(Path.cwd())}, indent=2))
        return EXIT_OK if report.result().ok else EXIT_FAILED
    cwd = Path.cwd()
    if report.new_manuscript:
        print(f"{root}: new in this change (not in {args.base}); every token counts as added")
    for change in report.changes:
        print(format_change(change, cwd))
    for failure in report.failures:
        print(failure.format(cwd))
    ok = report.result().ok
    print(f"{root}::diff {'ok' if ok else 'FAILED'} against {args.base}: {len(report.changes)} token change(s), "
          f"numeric Jaccard {report.numeric_jaccard:.4f}, cite Jaccard {report.cite_jaccard:.4f}")  # fmt: skip
    return EXIT_OK if ok else EXIT_FAILED
