"""What several subcommands share: exit codes, option types and the gate list built from options."""

from __future__ import annotations

import argparse
from pathlib import Path

from .. import shown
from ..deadline import DEFAULT_TIMEOUT
from ..errors import InputError, PatchwriteError
from ..files.inputs import parse_seconds
from ..model import Gate
from ..snapshot.engines import ENGINES

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3
SARIF_HELP = "also write every violation to FILE as SARIF 2.1.0 (for GitHub code scanning)"
TRUSTED_HELP = (
    "the manuscript's author is trusted: run TeX without the OS sandbox and read files outside its tree "
    "(never for a pull request from a stranger)"
)


def seconds(text: str) -> float:
    """Return a duration option's seconds (an argparse type: a bad value is a usage error)."""
    try:
        return parse_seconds(text)
    except InputError as exc:
        raise argparse.ArgumentTypeError(exc.problem) from None


def add_engine_option(parser: argparse.ArgumentParser) -> None:
    """Add `--engine` (default: the one the manuscript asks for)."""
    parser.add_argument("--engine", choices=ENGINES, default=None)


def add_cluster_option(parser: argparse.ArgumentParser) -> None:
    """Add `--cluster ADDRESS`: run the batch's jobs on a Dask scheduler (the `[cluster]` extra)."""
    parser.add_argument("--cluster", metavar="ADDRESS", default=None, help="run the jobs on the Dask scheduler at "
                        "ADDRESS (tcp://host:8786; default $PATCHWRITE_CLUSTER, else this machine)")  # fmt: skip


def timeout_of(args: argparse.Namespace) -> float:
    """Return a command's `--timeout` seconds, else the one default (`deadline.DEFAULT_TIMEOUT`, as
    `patchwrite_timeout`'s)."""
    return args.timeout or DEFAULT_TIMEOUT


#: how `--timeout`'s help ends
TIMEOUT_DEFAULT_HELP = f"default {DEFAULT_TIMEOUT:g}"


def gates_for(args: argparse.Namespace, path: Path) -> list[Gate]:
    """Return the gates the edit options (`--no-*-gate`, `--engine`, `--timeout`, `--trusted-input`) ask for."""
    from ..gates import default_gates

    return default_gates(
        path,
        compile_gate=not args.no_compile_gate,
        evidence_gate=not args.no_evidence_gate,
        engine=args.engine,
        timeout=args.timeout,
        trusted=getattr(args, "trusted_input", False),
    )


def csv_choices(value: str | None, allowed: tuple[str, ...], what: str) -> tuple[str, ...]:
    """Return the comma-separated subset of `allowed` in `value` (all of them when empty)."""
    if not value:
        return allowed
    chosen = tuple(v.strip() for v in value.split(",") if v.strip())
    unknown = [v for v in chosen if v not in allowed]
    if unknown:
        raise InputError(f"--{what}", f"unknown {what} {', '.join(unknown)}; choose from {', '.join(allowed)}")
    return chosen


def error_line(exc: BaseException) -> str:
    """Return what `patchwrite: error:` prints of an exception: its file shown by the one display rule (relative to
    the working directory when below it, as every face prints paths), one line."""
    if isinstance(exc, PatchwriteError):
        return one_line(exc.format(Path.cwd()))
    return one_line(str(exc))


def one_line(message: str) -> str:
    """Return the first line of `message`, cut at 500 characters (what an error line shows)."""
    first = message.strip().splitlines()[0] if message.strip() else ""
    return shown.line(first if len(first) <= 500 else first[:500] + "...")


def write_output(target: str, text: str, what: str) -> None:
    """Write `text` to the output file `target` exactly (no newline translation), making the directories above it
    as every output path does (`--sarif`, `--pages`, `--out-tree`); an InputError when it cannot be written."""
    path = Path(target)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="")
    except FileExistsError:  # mkdir met a file where a directory should be
        raise InputError(target, f"cannot write {what} there ({path.parent} is not a directory)") from None
    except OSError as exc:
        raise InputError(target, f"cannot write {what} there ({exc.strerror or exc})") from None


def write_sarif(target: str | None, violations: list) -> None:
    """Write `violations` to the SARIF file `target` when one was asked for (`--sarif FILE`)."""
    from .sarif import write_sarif as write

    if target and not write(Path(target), violations):
        raise InputError(target, "cannot write the SARIF file there")
