"""`patchwrite check FILE...`: every gate on each root manuscript."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .. import shown
from ..errors import EnvironmentFault, InputError
from ..files.inputs import read_text
from ..model import WARNING, display_path, printed_lines, show_paths
from .common import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    SARIF_HELP,
    TIMEOUT_DEFAULT_HELP,
    TRUSTED_HELP,
    add_cluster_option,
    add_engine_option,
    one_line,
    seconds,
    timeout_of,
    write_sarif,
)


def register(sub: Any) -> None:
    """Add the `check` subcommand."""
    parser = sub.add_parser("check", help="run every gate on each root manuscript")
    parser.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="root manuscripts, sections (checked through "
        "their root) or directories (every root manuscript below them)",
    )
    add_engine_option(parser)
    parser.add_argument(
        "--timeout", type=seconds, default=None, help=f"seconds before the engine is killed ({TIMEOUT_DEFAULT_HELP})"
    )
    parser.add_argument("--no-cache", action="store_true", help="compile even when a verdict is cached")
    parser.add_argument("--max-runs", type=int, default=5, help="most engine runs per compile (default 5)")
    parser.add_argument("--strict", action="store_true", help="warnings (e.g. a repeated bib entry) fail too")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--trusted-input", action="store_true", help=TRUSTED_HELP)
    parser.add_argument("--sarif", metavar="FILE", default=None, help=SARIF_HELP)
    parser.add_argument("-j", "--jobs", type=int, default=1, help="check N roots at once (default 1: one by one)")
    add_cluster_option(parser)
    parser.set_defaults(func=run)


def roots_of(names: list[str]) -> list[Path]:
    """Return the root manuscripts the named files stand for, each once (a section stands for its root)."""
    from ..snapshot.roots import find_root
    from ..tex.texinputs import is_root

    roots: dict[Path, Path] = {}  # resolved -> as shown
    for name in names:
        path = Path(name)
        if path.is_dir():
            for found in _roots_in(path):
                roots.setdefault(found.resolve(), found)
            continue
        if path.suffix.lower() == ".bib":
            raise InputError(path, "is a bibliography, not a manuscript: check the root manuscript that cites it "
                             "(a .tex file with \\documentclass)")  # fmt: skip
        root = path
        if not is_root(read_text(path)):
            root = find_root(path)
            if root == path.resolve():
                raise InputError(path, "not a root manuscript (no \\documentclass) and no root nearby \\inputs it")
            root = Path(display_path(root, Path.cwd()))  # relative when below the working directory, as shown
        roots.setdefault(root.resolve(), root)
    return list(roots.values())


def _roots_in(directory: Path) -> list[Path]:
    """Return the root manuscripts below `directory` as `pytest DIR` collects them (dot-directories skipped, links
    to directories not followed, `roots.walked_dirs`); raise InputError when it holds none."""
    from ..errors import NotRegularFile
    from ..snapshot.roots import peek_text, walked_dirs
    from ..tex.texinputs import is_root

    found: list[Path] = []
    for here, dirs, files in os.walk(directory):
        dirs[:] = walked_dirs(here, dirs)
        for name in sorted(f for f in files if f.endswith(".tex")):
            path = Path(here) / name
            try:
                head = peek_text(path)
            except NotRegularFile:
                continue  # a FIFO or device named *.tex is no manuscript
            if is_root(head):
                found.append(path)
    if not found:
        raise InputError(directory, "is a directory holding no root manuscript (a .tex file with \\documentclass)")
    return found


def _checked(roots: list[Path], options: Any, args: argparse.Namespace) -> Iterator[Any]:
    """Yield each root's results (or the error that stopped it) in order: one by one as they come, or from one
    batch when `--jobs` or a cluster asks for it."""
    from ..flows.batch import cluster_address
    from ..flows.check import check_manuscript
    from ..flows.checkbatch import check_many

    cluster = cluster_address(args.cluster)
    if cluster or args.jobs > 1:
        yield from check_many(roots, options, args.jobs, cluster)
        return
    for path in roots:
        try:
            yield check_manuscript(path, options)
        except EnvironmentFault as exc:
            yield exc


def run(args: argparse.Namespace) -> int:
    """Run every gate on each root manuscript; return the exit code."""
    from ..flows.check import CheckOptions

    if args.max_runs < 1:
        raise InputError("--max-runs", f"{args.max_runs}: at least one engine run is needed")
    if args.jobs < 1:
        raise InputError("--jobs", f"{args.jobs}: at least one root is checked at a time")
    options = CheckOptions(
        engine=args.engine,
        timeout=timeout_of(args),
        max_runs=args.max_runs,
        use_cache=not args.no_cache,
        warnings_fail=args.strict,
        trusted=args.trusted_input,
    )
    out, failed, found, rejected = [], False, [], 0
    roots = roots_of(args.files)
    for path, results in zip(roots, _checked(roots, options, args), strict=False):
        try:
            if isinstance(results, BaseException):
                raise results  # where the one-by-one check stopped
        except EnvironmentFault as exc:
            if not args.json:
                raise
            out.append({"path": str(path), "gates": {}, "error": exc.to_json()})
            print(json.dumps({"manuscripts": out}, indent=2))
            print(f"patchwrite: environment error: {one_line(str(exc))}", file=sys.stderr)
            return EXIT_USAGE
        failed |= not all(r.ok for r in results.values())
        found += [v for r in results.values() for v in r.violations]
        rejected += int(results["compile"].details.get("cache_rejected", 0))
        out.append({"path": str(path), "gates": {k: r.to_json(Path.cwd()) for k, r in results.items()}})
        if not args.json:
            for gate, result in results.items():
                warned = sum(v.severity == WARNING for v in result.violations)
                status = ("ok" if result.ok else "FAILED") + (f" ({warned} warning(s))" if warned else "")
                if "skipped" in result.details:
                    status = f"skipped ({result.details['skipped']})"
                extra = ""
                if gate == "compile":
                    cached = ", cached" if result.details.get("cached") else ""
                    extra = f" ({result.details['engine']}, {result.details['seconds']:.2f} s{cached})"
                if result.details.get("pdf_note"):
                    extra = f" (PDF text not read: {result.details['pdf_note']}; the source rules decided)"
                print(shown.line(f"{path}::{gate} {status}{extra}"))
                for line in printed_lines(result.violations, Path.cwd(), "--json"):
                    print(f"  {line}")
                if result.details.get("note"):
                    note = show_paths(str(result.details["note"]), [str(Path(path).absolute())], Path.cwd())
                    print(shown.line(f"  note: {note}"))
    if args.json:
        print(json.dumps({"manuscripts": out, "cache_rejected": rejected}, indent=2))
    elif rejected:
        print(f"cache entries rejected: {rejected} (their HMAC did not verify; ignored)", file=sys.stderr)
    write_sarif(args.sarif, found)
    return EXIT_FAILED if failed else EXIT_OK
