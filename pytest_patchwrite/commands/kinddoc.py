"""`patchwrite explain [KIND]`: the entry of a violation kind, as docs/violations.md shows it."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .. import shown
from ..kinds import ENTRIES, GROUPS, KINDS


def add_explain_parser(sub: Any) -> None:
    """Register `patchwrite explain` on the subcommand parsers."""
    explain = sub.add_parser("explain", help="what triggers a violation kind and how to fix or suppress it")
    explain.add_argument("kind", nargs="?", default=None, help="a violation kind (without it: list every kind)")
    explain.set_defaults(func=cmd_explain)


def cmd_explain(args: argparse.Namespace) -> int:
    """Return 0 after printing the kind's entry (or the list of kinds), 2 for a kind with no entry."""
    if args.kind is None:
        width = max(len(k.name) for k in ENTRIES)
        for k in ENTRIES:
            print(f"{k.name:<{width}}  {k.group:<12} {k.severity}")
        return 0
    entry = KINDS.get(args.kind.strip())
    if entry is None:
        named = shown.line(args.kind[:80])
        print(f"patchwrite: error: no violation kind named '{named}'; the kinds are:", file=sys.stderr)
        print("  " + ", ".join(k.name for k in ENTRIES), file=sys.stderr)
        return 2
    sys.stdout.write(entry.text())
    return 0


def render_markdown() -> str:
    """Return docs/violations.md, rendered from the entries."""
    out = [
        "# Violation kinds",
        "",
        "Every violation names its kind (`file:line: kind token message`; the `kind` field of JSON output, the "
        "`ruleId` of SARIF). `patchwrite explain KIND` prints the entry. This page is generated from "
        "`pytest_patchwrite/kinds.py` (`python -m pytest_patchwrite.commands.kinddoc > docs/violations.md`); "
        "a test fails when they differ.",
        "",
        "Severity: an `error` fails its item; a `warning` is reported and fails only under `--strict` / "
        "`patchwrite_strict`; a `change` is listed by the `diff` item and fails nothing by itself. Suppression "
        "comments are described on [Configuration](configuration.md#suppression-comments).",
        "",
    ]
    for group, title in GROUPS.items():
        out += [f"## {title}", ""]
        for k in (e for e in ENTRIES if e.group == group):
            out += [
                f"### {k.name}",
                "",
                f"Severity: {k.severity}.",
                "",
                f"**What triggers it.** {k.trigger}",
                "",
                f"**How to fix it.** {k.fix}",
                "",
                f"**Suppressing it.** {k.suppress}",
                "",
            ]
    return "\n".join(out)


if __name__ == "__main__":
    sys.stdout.write(render_markdown())
