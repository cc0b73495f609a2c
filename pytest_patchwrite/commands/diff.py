"""`patchwrite diff FILE --base REV`: what a change moved against a git revision."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .. import shown
from .common import (
    EXIT_FAILED,
    EXIT_OK,
    SARIF_HELP,
    TIMEOUT_DEFAULT_HELP,
    TRUSTED_HELP,
    add_engine_option,
    seconds,
    timeout_of,
    write_sarif,
)


def register(sub: Any) -> None:
    """Add the `diff` subcommand."""
    parser = sub.add_parser("diff", help="what a change moved against a git revision")
    parser.add_argument("file")
    parser.add_argument("--base", required=True, help="git revision to compare against (e.g. origin/main)")
    parser.add_argument("--max-hunk", type=int, default=None, help="fail hunks longer than this many lines")
    parser.add_argument(
        "--evidence-from",
        choices=("head", "base"),
        default="head",
        help="whose logs and bibs attest: head (the change's own, with a warning; default) or base (an error)",
    )
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--sarif", metavar="FILE", default=None, help=SARIF_HELP)
    parser.add_argument(
        "--pages",
        metavar="DIR",
        default=None,
        help="draw the pages the change altered, before and after, into DIR (DIR/index.html)",
    )
    parser.add_argument("--pages-max", type=int, default=20, metavar="N", help="draw at most N changed pages (20)")
    parser.add_argument(
        "--pages-size",
        type=int,
        default=1400,
        metavar="PX",
        help="long side of a drawn page in pixels (1400, at most 3000)",
    )
    parser.add_argument("--timeout", type=seconds, default=None,
                        help="seconds for each compile (the working tree's, those of --pages) and for drawing pages "
                        f"({TIMEOUT_DEFAULT_HELP})")  # fmt: skip
    add_engine_option(parser)
    parser.add_argument(
        "--no-compile",
        action="store_true",
        help="do not compile the working tree: no engine record, no undefined-citation rule",
    )
    parser.add_argument("--no-cache", action="store_true", help="compile even when a verdict is cached")
    parser.add_argument("--trusted-input", action="store_true", help=TRUSTED_HELP)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Report what the working tree's manuscript moved against a git revision; return the exit code."""
    from ..flows.prdiff import GitBase, diff_working_tree, format_change
    from ..gates.evidence import EvidenceConfig
    from ..model import display_path
    from ..snapshot.manuscript import load_manuscript
    from ..snapshot.roots import find_root

    root = find_root(Path(args.file))
    base = GitBase.open(root.parent, args.base)
    config = EvidenceConfig()
    manuscript = load_manuscript(root, boundary=config.boundary(root))
    compile = None if args.no_compile else _compile(args, manuscript)
    report, compiled = diff_working_tree(manuscript, base, config, compile, max_hunk=args.max_hunk,
                                         evidence_from=args.evidence_from, engine_missing=_say_missing)  # fmt: skip
    write_sarif(args.sarif, report.result().violations)
    pages = _pages(args, root, base, report.changes)
    if args.json:
        drawn = {"pages": pages.to_json()} if pages is not None else {}
        ran = {"engine": compiled.engine, "ok": compiled.ok, "cached": compiled.cached} if compiled else None
        print(json.dumps({"path": str(root), "base": args.base, **report.result().to_json(Path.cwd()),
                          "compile": ran, **drawn}, indent=2))  # fmt: skip
        return EXIT_OK if report.result().ok else EXIT_FAILED
    cwd = Path.cwd()
    if report.new_manuscript:
        print(shown.line(f"{display_path(root, cwd)}: new in this change (not in {args.base}); every token counts as "
                         "added"))  # fmt: skip
    for change in report.changes:
        print(format_change(change, cwd))
    for failure in report.failures:
        print(failure.format(cwd))
    ok = report.result().ok
    print(f"{shown.line(display_path(root, cwd))}::diff {'ok' if ok else 'FAILED'} "
          f"against {args.base}: {len(report.changes)} token change(s), "
          f"numeric Jaccard {report.numeric_jaccard:.4f}, cite Jaccard {report.cite_jaccard:.4f}")  # fmt: skip
    if pages is not None:
        print(pages_line(pages))
    return EXIT_OK if ok else EXIT_FAILED


def _compile(args: argparse.Namespace, manuscript: Any) -> Any:
    """Return what compiles the working tree (a verdict-cache hit after `check`).

    The diff does not fail because the compile does (that is `check`'s item); a passing compile's undefined
    citations and references on changed lines fail it, as in the pytest `diff` item.
    """
    from ..flows.check import CheckOptions

    options = CheckOptions(engine=args.engine, timeout=timeout_of(args), use_cache=not args.no_cache,
                           trusted=args.trusted_input)  # fmt: skip
    return lambda: options.compile_gate(manuscript.root).compile(manuscript)


def _say_missing(exc: Exception) -> None:
    print(shown.line(f"patchwrite diff: {exc}: diffed without compiling (no engine record, no undefined-citation "
                     "rule; --no-compile says so quietly)"), file=sys.stderr)  # fmt: skip


def _pages(args: argparse.Namespace, root: Path, base: Any, changes: list) -> Any:
    """Return the pages report of `--pages DIR` (None without the option)."""
    if not args.pages:
        return None
    from ..pages.pagesflow import PagesOptions, check_ready, write_pages

    options = PagesOptions(Path(args.pages), max_pages=args.pages_max, side=args.pages_size,
                           timeout=timeout_of(args), engine=args.engine, use_cache=not args.no_cache,
                           trusted=args.trusted_input)  # fmt: skip
    check_ready(options)
    return write_pages(root, base, changes, options)


def pages_line(pages: Any) -> str:
    """Return the one line `--pages` prints: what was drawn, counted and left out, and where."""
    line = (
        f"pages: {len(pages.shown)} changed page(s) drawn, {pages.unchanged} unchanged, "
        f"{pages.same_pixels} same pixels, {len(pages.left_out)} left out -> {pages.directory / 'index.html'}"
    )
    return shown.line(line + (f" ({pages.note})" if pages.note else ""))
