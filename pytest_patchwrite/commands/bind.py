"""`patchwrite bind ROOT [--update] [--manual SPEC --reason TEXT] [--json] [--check] [--suggest]`: the ledger.

With an existing file, `bind` keeps every decision that still holds, proposes bindings for new numbers and
reports each kept decision that no longer holds as a conflict (the file keeps it); `--update` accepts the
paper and logs as they stand and lists each change. Exit codes: 0 after writing (unattested and ambiguous
numbers are warnings), 1 on a conflict (and with `--check` when `bind` would change the file or meet a
conflict), 2 bad input.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
from pathlib import Path
from typing import Any

from .. import shown
from ..deadline import DEFAULT_TIMEOUT, OutOfTime, within
from ..errors import InputError
from ..files.paths import repository_top
from ..flows.bind import BindOutcome, bind_root, outcome_json, write_bindings
from ..gates.evidence import EvidenceConfig
from ..gates.numberlock import listed, lock_violations, swapped
from ..model import display_path, relative_name
from ..numbers.binder import EntryIndex
from ..numbers.bindplan import Rules, candidates
from ..numbers.bindswap import SWAPPED
from ..numbers.logread import load_entries
from ..snapshot.manuscript import load_manuscript
from ..snapshot.roots import find_root
from ..tex.latex import scan
from ..tex.texconditionals import false_conditionals
from ..tex.texnumbers import document_language
from .common import TIMEOUT_DEFAULT_HELP, TRUSTED_HELP, seconds, timeout_of


def register(sub: Any) -> None:
    """Add the `bind` subcommand."""
    parser = sub.add_parser("bind", help="bind every empirical number to its log entry (writes <root>.bindings.json)")
    parser.add_argument("file")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when bind would change the file "
                        "or meet a conflict")  # fmt: skip
    parser.add_argument(
        "--update",
        action="store_true",
        help="accept the paper and logs as they stand: a decision "
        "that no longer holds is rebound, one whose number is gone dropped; each change is listed",
    )
    parser.add_argument(
        "--manual",
        action="append",
        default=[],
        metavar="FILE:LINE:TOKEN|unattested",
        help="record the number as typed by hand (locked to its printed form); `unattested`: every "
        "number left without a decision (repeatable; needs --reason)",
    )
    parser.add_argument(
        "--reason",
        default=None,
        metavar="TEXT",
        help="why the --manual numbers are typed by hand: setting, cited, not_logged or your own words",
    )
    parser.add_argument("--suggest", action="store_true", help="list the work tree's files attesting most numbers")
    parser.add_argument("--json", action="store_true", help="print the outcome as JSON (the file is written as "
                        "without it)")  # fmt: skip
    parser.add_argument("--trusted-input", action="store_true", help=TRUSTED_HELP)
    parser.add_argument("--timeout", type=seconds, default=None, help="seconds before the binder is stopped, "
                        f"nothing written ({TIMEOUT_DEFAULT_HELP}, as check's)")  # fmt: skip
    parser.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    """Bind (or check, or suggest logs for) the manuscript of FILE; return the exit code."""
    root = find_root(Path(args.file))
    if args.suggest:
        return suggest(root, as_json=args.json, trusted=args.trusted_input)
    if args.reason is not None and not args.manual:
        raise InputError("--reason", "goes with --manual FILE:LINE:TOKEN or --manual unattested")
    return run(root, check=args.check, as_json=args.json, trusted=args.trusted_input, update=args.update,
               manual=tuple(args.manual), reason=args.reason, timeout=timeout_of(args))  # fmt: skip


#: result and config files `--suggest` looks at (a TeX engine's own .log is no result)
SUGGEST_SUFFIXES = (".json", ".jsonl", ".csv", ".tsv", ".yaml", ".yml", ".toml")
MAX_SUGGEST_FILES = 400
MAX_SUGGEST_BYTES = 64 * 1024 * 1024


def _print(outcome: BindOutcome, verb: str) -> None:
    rec, ledger = outcome.reconciled, outcome.ledger
    assert ledger is not None
    base, cwd = outcome.root.parent, Path.cwd()
    conflicting = {id(rec.occurrences[i]) for i in ledger.conflicts}
    update = f"patchwrite bind {shlex.quote(display_path(outcome.root, cwd))} --update"  # as pasted where `bind` ran
    # the lock's findings once, each conflict's looked up by its place (not the lock rerun per conflict)
    found = {(v.file, v.line, v.token): v for v in (lock_violations(rec) if conflicting else [])
             if v.kind == "binding_mismatch"}  # fmt: skip
    for occ, *_ in rec.mismatched:  # conflicts first: a decision a person reviewed no longer holds
        if id(occ) in conflicting:
            message = found[str(occ.file), occ.number.line, occ.token].shown_message(cwd)
            print(shown.line(f"{display_path(occ.file, cwd)}:{occ.number.line}: conflict: binding_mismatch "
                             f"{occ.token} {message}; the file keeps the reviewed decision"))  # fmt: skip
    for change in ledger.changes:
        print(shown.line(change))
    for i in ledger.undecided:
        occ = rec.occurrences[i]
        where = f"{display_path(occ.file, cwd)}:{occ.number.line}"
        bound = rec.decisions.get(i)
        if bound is not None and bound.how == "ambiguous":
            names = listed(
                [f"{relative_name(c.entry.log, base)} {c.entry.at}" for c in [bound.best, *bound.alternatives]]
            )
            print(shown.line(f"{where}: warning: ambiguous_binding {occ.token} not bound: fits {names} alike"))
        elif bound is not None and bound.how == SWAPPED:
            print(shown.line(f"{where}: warning: unattested_number {occ.token} {swapped(rec, occ, advice=False)}"))
        else:
            print(shown.line(f"{where}: warning: unattested_number {occ.token} has no decision (no entry binds it)"))
    for b in ledger.stale:
        print(shown.line(f"{display_path(b.file, cwd)}:{b.line}: warning: stale_binding {b.token} no longer stands "
                         f"there; kept until `{update}`"))  # fmt: skip
    numbers, decided = len(ledger.covered) + len(ledger.undecided), len(ledger.covered)
    manual = sum(rec_row.manual for rec_row in ledger.rows)
    print(shown.line(f"{display_path(outcome.path, cwd)}: {verb}: {decided} of {numbers} number(s) decided "
                     f"({manual} typed by hand, {ledger.proposed} newly bound); {numbers - decided} without a "
                     f"decision; {len(ledger.conflicts)} conflict(s)"))  # fmt: skip
    if ledger.conflicts:
        print(shown.line(f"the bindings file keeps each reviewed decision; `{update}` accepts the changes"))


def run(
    root: Path,
    *,
    check: bool = False,
    as_json: bool = False,
    trusted: bool = False,
    update: bool = False,
    manual: tuple[str, ...] = (),
    reason: str | None = None,
    timeout: float | None = DEFAULT_TIMEOUT,
) -> int:
    """Bind one manuscript; write the file unless `check`; return the exit code (1 on a conflict).

    The binder reads only (the file is written after it), so past `timeout` seconds it is stopped anywhere, as
    the MCP server's `bindings` tool stops it, and nothing is written: a paper dense with numbers is bad input
    here (exit 2), never an unbounded run.
    """
    try:
        with within(timeout):
            outcome = bind_root(root, EvidenceConfig(trusted=trusted), update=update, manual=manual, reason=reason)
    except OutOfTime as exc:
        why = (f"the binder did not finish within {exc.seconds:g} s and was stopped, nothing written (a manuscript "
               "this large or this dense with numbers); raise --timeout")  # fmt: skip
        raise InputError(root, why) from None
    if check:
        verb = "would change" if outcome.changed else ("conflict" if outcome.conflicts else "up to date")
    else:
        verb = "written" if outcome.changed else "unchanged"
        if outcome.changed:
            write_bindings(outcome.path, outcome.new_text)
    if as_json:
        print(json.dumps(outcome_json(outcome), indent=2))
    else:
        _print(outcome, verb)
    return 1 if outcome.conflicts or (check and outcome.changed) else 0


def _work_tree_files(top: Path) -> list[Path]:
    listed = subprocess.run(["git", "ls-files", "-z", "-co", "--exclude-standard"], cwd=top, capture_output=True,
                            timeout=60)  # fmt: skip
    if listed.returncode != 0:
        raise InputError(top, "cannot list the git work tree's files (git ls-files failed)")
    names = [n for n in listed.stdout.decode("utf-8", "surrogateescape").split("\0") if n]
    out = []
    for name in sorted(names):
        path = top / name
        if path.suffix.lower() not in SUGGEST_SUFFIXES or any(p.startswith(".") for p in Path(name).parts):
            continue
        try:
            if not path.is_file() or path.is_symlink() or path.stat().st_size > MAX_SUGGEST_BYTES:
                continue
        except OSError:
            continue
        out.append(path)
        if len(out) >= MAX_SUGGEST_FILES:
            break
    return out


def suggest(root: Path, as_json: bool = False, trusted: bool = False) -> int:
    """Print the work tree's result and config files that would attest most numbers, with the magic comment."""
    from ..numbers.binder import occurrences, prefilter
    from ..numeric import Sieve

    config = EvidenceConfig(trusted=trusted)
    manuscript = load_manuscript(root, boundary=config.boundary(root))
    config = config.for_manuscript(manuscript)
    top = repository_top(manuscript.directory)
    if top is None:
        raise InputError(root, "is not in a git work tree; --suggest looks only at the repository's own files")
    false_ifs = false_conditionals(manuscript.texts.values())
    language = document_language(manuscript.texts[p] for p in manuscript.files)
    scans = [scan(manuscript.texts[p], str(p), false_ifs, None, language) for p in manuscript.files]
    occs = occurrences(scans, manuscript.texts, "decimals" if config.numbers == "off" else config.numbers, set())
    bounds, _ = prefilter(occs)
    sieve = Sieve(zip(bounds[::2], bounds[1::2], strict=True))  # only what could fit a number is kept
    rows = []
    for path in _work_tree_files(top):
        try:
            data = load_entries(path, sieve)
        except InputError:
            continue  # not a log we can read: not a suggestion either
        index = EntryIndex([data])
        rules = Rules.of([data])
        attested = sum(1 for occ in occs if candidates(occ, index, rules)[0])
        if attested:
            rows.append((attested, path))
    rows.sort(key=lambda r: (-r[0], str(r[1])))
    chosen, covered = [], 0
    for attested, path in rows[:5]:
        chosen.append(path)
        covered = max(covered, attested)
    names = [relative_name(p, manuscript.directory) for p in chosen]
    if as_json:
        files = [{"file": relative_name(p, manuscript.directory), "numbers": n} for n, p in rows[:20]]
        comment = f"% !patchwrite log = {', '.join(names)}" if names else None
        print(json.dumps({"numbers": len(occs), "files": files, "magic_comment": comment}, indent=2))
        return 0
    if not rows:
        print(shown.line(f"{display_path(manuscript.root, Path.cwd())}: no result or config file in {top} attests "
                         f"any of its {len(occs)} number(s)"))  # fmt: skip
        return 0
    for attested, path in rows[:20]:
        print(shown.line(f"{attested:5d} of {len(occs)}  {relative_name(path, manuscript.directory)}"))
    print("paste at the top of the root file:")
    print(shown.line(f"% !patchwrite log = {', '.join(names)}"))
    return 0
