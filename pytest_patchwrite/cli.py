"""The `patchwrite` console script: the parser and the dispatch. Exit codes: 0 pass, 1 checks failed or edit
rejected, 2 usage or input error (one line naming the file and the problem), 3 internal error (`--debug` shows the
traceback).

Each subcommand lives in its own module (`commands/<name>.py`) with a
`register(sub)` that adds its arguments and its `run`; to add one, write that module and list it in `COMMANDS`.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from collections.abc import Sequence
from types import ModuleType

from . import __version__
from .commands.common import EXIT_FAILED, EXIT_INTERNAL, EXIT_USAGE, error_line, one_line
from .errors import EnvironmentFault, PatchwriteError
from .gates.report import EngineMissing

#: the subcommands in the order `--help` lists them, and their modules: each imported only when it runs (or for
#: `--help`), so `patchwrite apply` does not import what only `bind` or `mcp` use
COMMANDS = {
    "number": "pytest_patchwrite.commands.number",
    "apply": "pytest_patchwrite.commands.apply",
    "check": "pytest_patchwrite.commands.check",
    "bind": "pytest_patchwrite.commands.bind",
    "clean": "pytest_patchwrite.commands.clean",
    "inject": "pytest_patchwrite.commands.inject",
    "stress": "pytest_patchwrite.commands.stress",
    "diff": "pytest_patchwrite.commands.diff",
    "propose": "pytest_patchwrite.commands.propose",
    "live-stress": "pytest_patchwrite.commands.live_stress",
    "mcp": "pytest_patchwrite.commands.mcp",
    "rate": "pytest_patchwrite.commands.rate",
    "explain": "pytest_patchwrite.commands.explain",
}
REPORT_HINT = "this is a bug in patchwrite; please report it with the command that triggered it"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        """Exit 2 with our one usage line, `patchwrite: error: PLACE: problem` (argparse says `argument X: ...`)."""
        place, _, problem = message.removeprefix("argument ").partition(": ")
        if not message.startswith("argument ") or not problem:
            command = self.prog.removeprefix("patchwrite").strip()
            place, problem = (command, message) if command else ("", message)
        self.exit(EXIT_USAGE, f"patchwrite: error: {f'{place}: ' if place else ''}{problem}\n")


def command_modules(argv: Sequence[str] | None = None) -> list[ModuleType]:
    """Return the modules of the subcommands a parser for `argv` needs: the one it names, else every one."""
    named = [arg for arg in argv or () if not arg.startswith("-")][:1]
    names = named if named and named[0] in COMMANDS else list(COMMANDS)
    return [importlib.import_module(COMMANDS[name]) for name in names]


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """Return the argument parser of the subcommand `argv` names (of every subcommand when it names none)."""
    parser = _Parser(prog="patchwrite", description="Bounded, gated edits of LaTeX manuscripts.")
    parser.add_argument("--debug", action="store_true", help="show the traceback of an internal error")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for module in command_modules(argv):
        module.register(sub)
    for command in sub.choices.values():  # `patchwrite apply --debug ...` as well as `patchwrite --debug apply ...`
        command.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    return parser


def _input_errors() -> tuple[type[Exception], ...]:
    """Return the exceptions that are bad input or a missing tool (exit 2); a model's own error only once a command
    imported the proposers (nothing else raises it)."""
    proposers = sys.modules.get("pytest_patchwrite.proposers.base")
    return (PatchwriteError, EngineMissing) + ((proposers.ProposerError,) if proposers is not None else ())


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line and return its exit code (0 pass, 1 rejected/failed, 2 input error, 3 internal error)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except EnvironmentFault as exc:
        print(f"patchwrite: environment error: {error_line(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except _input_errors() as exc:
        print(f"patchwrite: error: {error_line(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # the reader went away (`patchwrite number x | head`); nothing left to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_FAILED
    except Exception as exc:  # noqa: BLE001 - the one place that turns a bug into exit 3
        if args.debug:
            traceback.print_exc()
        else:
            print(f"patchwrite: internal error: {type(exc).__name__}: {one_line(str(exc))}", file=sys.stderr)
            print(f"patchwrite: {REPORT_HINT}; --debug shows the traceback", file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
