"""`pytest --patchwrite-bind`: rewrite the bindings file of every root manuscript the run would collect.

It is `patchwrite bind --update`: the paper and logs as they stand are accepted, and each change is listed
in the terminal summary.

The controller binds once before any worker starts (under xdist the workers never write), as
syrupy's `--snapshot-update` rewrites snapshots only when asked; nothing else writes the file.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ..errors import InputError, PatchwriteError
from ..flows.bind import bind_root, write_bindings
from ..snapshot.roots import peek_text, walked_dirs
from ..tex.texinputs import is_root
from .settings import SETTINGS

BOUND = pytest.StashKey[list[str]]()
def _roots(config: pytest.Config) -> list[Path]:
    """Return the root manuscripts under the run's arguments (files or directories), sorted."""
    found: set[Path] = set()
    args = [a.split("::", 1)[0] for a in config.args] or [str(config.invocation_params.dir)]
    for arg in args:
        start = Path(config.invocation_params.dir) / arg
        candidates = [start] if start.is_file() else []
        if start.is_dir():
            for directory, subdirs, files in os.walk(start):
                subdirs[:] = walked_dirs(directory, subdirs)
                candidates.extend(Path(directory) / f for f in files if f.endswith(".tex"))
        for path in candidates:
            try:
                head = peek_text(path)
            except InputError:
                continue
            if path.suffix == ".tex" and is_root(head):
                found.add(path.resolve())
    return sorted(found)


def bind_session(config: pytest.Config) -> None:
    """Bind every root manuscript that declares a log; record what was written for the terminal summary."""
    settings = config.stash[SETTINGS]
    evidence = settings.options.evidence_config()
    lines: list[str] = []
    for root in _roots(config):
        try:
            outcome = bind_root(root, evidence, update=True)
        except PatchwriteError as exc:
            if "declares no experimental log" in str(exc):
                continue
            raise pytest.UsageError(f"--patchwrite-bind: {exc}") from None
        if outcome.changed:
            write_bindings(outcome.path, outcome.new_text)
        ledger = outcome.ledger
        assert ledger is not None
        verb = "written" if outcome.changed else "unchanged"
        numbers = len(outcome.reconciled.occurrences)
        lines.append(
            f"{outcome.path.name}: {verb} ({len(ledger.covered)} of {numbers} decided, "
            f"{numbers - len(ledger.covered)} without a decision, {len(ledger.changes)} change(s))"
        )
        lines += [f"  {change}" for change in ledger.changes]
    config.stash[BOUND] = lines
