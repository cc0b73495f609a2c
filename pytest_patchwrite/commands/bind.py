"""`patchwrite bind ROOT [--json] [--check] [--suggest]`: write (or check) the manuscript's bindings file.

Exit codes: 0 after writing (or when `--check` finds the file up to date; unattested and
ambiguous numbers are warnings), 1 with `--check` when the file would change, 2 bad input.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
from pathlib import Path
from typing import Any

from .. import shown
from ..binder import EntryIndex
from ..bindplan import Rules, candidates
from ..errors import InputError
from ..gates.binding import BindOutcome, bind_root, write_bindings
from ..gates.evidence import EvidenceConfig
from ..latex import scan
from ..logread import load_entries
from ..manuscript import find_root, load_manuscript
from ..paths import repository_top
from ..texconditionals import false_conditionals
from .common import TRUSTED_HELP


def register(sub: Any) -> None:
    """Add the `bind` subcommand."""
    parser = sub.add_parser("bind", help="bind every empirical number to its log entry (writes <root>.bindings.json)")
    parser.add_argument("file")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when the bindings would change")
    parser.add_argument("--suggest", action="store_true", help="list the work tree's files attesting most numbers")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--trusted-input", action="store_true", help=TRUSTED_HELP)
    parser.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    """Bind (or check, or suggest logs for) the manuscript of FILE; return the exit code."""
    root = find_root(Path(args.file))
    if args.suggest:
        return suggest(root, as_json=args.json, trusted=args.trusted_input)
    return run(root, check=args.check, as_json=args.json, trusted=args.trusted_input)


#: result and config files `--suggest` looks at (a TeX engine's own .log is no result)
SUGGEST_SUFFIXES = (".json", ".jsonl", ".csv", ".tsv", ".yaml", ".yml", ".toml")
MAX_SUGGEST_FILES = 400
MAX_SUGGEST_BYTES = 64 * 1024 * 1024


def _rel(path: Path, base: Path | None = None) -> str:
    relative = os.path.relpath(path, base or Path.cwd())
    return str(path) if relative.startswith("..") and base is None else Path(relative).as_posix()


def outcome_json(outcome: BindOutcome) -> dict[str, Any]:
    """Return the `bind --json` object: bindings, unattested numbers and counts."""
    rec = outcome.reconciled
    base = outcome.root.parent
    bindings = []
    for row in json.loads(outcome.new_text)["bindings"]:
        bindings.append({k: row[k] for k in ("file", "line", "token", "log", "at", "value", "transform",
                                              "formula", "alternatives")})  # fmt: skip
    unattested = [{"file": _rel(o.file, base), "line": o.number.line, "token": o.token} for o in rec.result.unattested]
    return {
        "path": _rel(outcome.path),
        "changed": outcome.changed,
        "bindings": bindings,
        "unattested": sorted(unattested, key=lambda u: (u["file"], u["line"])),
        "counts": {**rec.result.counts(), "stale": len(rec.stale), "coincidental": rec.result.coincidental},
    }


def _print(outcome: BindOutcome, verb: str) -> None:
    rec = outcome.reconciled
    base = outcome.root.parent
    for bound in rec.result.bound:
        if bound.how == "ambiguous":
            occ = bound.occurrence
            names = ", ".join(f"{_rel(c.entry.log, base)} {c.entry.at}" for c in bound.alternatives)
            best = f"{_rel(bound.best.entry.log, base)} {bound.best.entry.at}"
            where = f"{_rel(occ.file)}:{occ.number.line}"
            print(shown.line(f"{where}: warning: ambiguous_binding {occ.token} bound to {best}; as well fits {names}"))
    for occ in rec.result.unattested:
        where = f"{_rel(occ.file)}:{occ.number.line}"
        print(shown.line(f"{where}: warning: unattested_number {occ.token} fits no log entry"))
    c = rec.result.counts()
    print(shown.line(f"{_rel(outcome.path)}: {verb}: {c['bound']} of {c['numbers']} number(s) bound ({c['unique']} "
                     f"uniquely, {c['context']} by context, {c['ambiguous']} ambiguous, {c['derived']} derived, "
                     f"{c['kept']} kept); {c['unattested']} unattested"))  # fmt: skip


def run(root: Path, *, check: bool = False, as_json: bool = False, trusted: bool = False) -> int:
    """Bind one manuscript; write the file unless `check`; return the exit code."""
    outcome = bind_root(root, EvidenceConfig(trusted=trusted))
    if check:
        verb = "would change" if outcome.changed else "up to date"
    else:
        verb = "written" if outcome.changed else "unchanged"
        if outcome.changed:
            write_bindings(outcome.path, outcome.new_text)
    if as_json:
        print(json.dumps(outcome_json(outcome), indent=2))
    else:
        _print(outcome, verb)
    return 1 if check and outcome.changed else 0


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
    from ..binder import occurrences, prefilter
    from ..numeric import Sieve

    config = EvidenceConfig(trusted=trusted)
    manuscript = load_manuscript(root, boundary=config.boundary(root))
    config = config.for_manuscript(manuscript)
    top = repository_top(manuscript.directory)
    if top is None:
        raise InputError(root, "is not in a git work tree; --suggest looks only at the repository's own files")
    false_ifs = false_conditionals(manuscript.texts.values())
    scans = [scan(manuscript.texts[p], str(p), false_ifs) for p in manuscript.files]
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
    names = [_rel(p, manuscript.directory) for p in chosen]
    if as_json:
        files = [{"file": _rel(p, manuscript.directory), "numbers": n} for n, p in rows[:20]]
        comment = f"% !patchwrite log = {', '.join(names)}" if names else None
        print(json.dumps({"numbers": len(occs), "files": files, "magic_comment": comment}, indent=2))
        return 0
    if not rows:
        print(shown.line(f"{_rel(manuscript.root)}: no result or config file in {top} attests any of its "
                         f"{len(occs)} number(s)"))  # fmt: skip
        return 0
    for attested, path in rows[:20]:
        print(shown.line(f"{attested:5d} of {len(occs)}  {_rel(path, manuscript.directory)}"))
    print("paste at the top of the root file:")
    print(shown.line(f"% !patchwrite log = {', '.join(names)}"))
    return 0
