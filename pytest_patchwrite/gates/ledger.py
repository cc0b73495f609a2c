"""The ledger `bind` writes: the file's reviewed decisions kept, new numbers proposed, nothing changed without --update.

With an existing file, each decision that still holds is kept byte for byte (its line hint too); a number the file
has no decision for gets the binder's fresh one (an ambiguous or unattested number gets none); a decision that no
longer holds (a swap, a changed number, a rerun log) is a conflict: the file keeps it and `bind` exits 1. `--update`
accepts the paper and logs as they stand: conflicts take the fresh decision, line hints follow the text, decisions
whose number is gone are dropped, and each change is listed. `--manual` records numbers as typed by hand.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError
from ..model import display_path, relative_name
from ..numbers.binder import Occurrence
from ..numbers.bindfile import FileBinding, distinct
from ..snapshot.manuscript import Manuscript
from .binding import Reconciled, decides, manual_binding, to_file_binding

UNATTESTED = "unattested"


@dataclass
class Ledger:
    """What `bind` writes and why: the rows, the kept conflicts, the changes `--update` (or `--manual`) made."""

    rows: list[FileBinding] = field(default_factory=list)
    conflicts: list[int] = field(default_factory=list)  # occurrence indices whose kept decision no longer holds
    changes: list[str] = field(default_factory=list)  # `file:line: old -> new: decision -> decision`
    stale: list[FileBinding] = field(default_factory=list)  # decisions whose number is gone (kept without --update)
    manual: int = 0  # numbers recorded by hand in this run
    proposed: int = 0  # numbers the file had no decision for that got one
    covered: set[int] = field(default_factory=set)  # occurrence indices the rows hold a decision for
    undecided: list[int] = field(default_factory=list)  # the ones `check` reports without a decision (not `quiet`)


def decision_name(b: FileBinding | None, base: Path) -> str:
    """Return a decision as a change line names it: `results.json ours.acc`, `typed by hand (setting)`."""
    if b is None:
        return "no decision"
    if b.manual:
        names = [f"{relative_name(Path(a['log']), base)} {a['at']}" for a in b.alternatives]
        fits = f", fitting {', '.join(names)} alike" if names else ""  # an ambiguous number the author typed
        return f"typed by hand ({b.reason}{fits})" if b.reason else f"typed by hand{fits}"
    assert b.log is not None
    suffix = " (derived)" if b.transform == "derived" else ""
    return f"{relative_name(b.log, base)} {b.at}{suffix}"


def _same_decision(a: FileBinding, b: FileBinding) -> bool:
    return (a.log, a.at, a.transform, a.formula, a.value, a.reason) == (b.log, b.at, b.transform, b.formula, b.value,
                                                                         b.reason)  # fmt: skip


def change_line(old: FileBinding | None, new: FileBinding | None, occ: Occurrence | None, base: Path) -> str:
    """Return `results.tex:3: 91.4\\% -> 68.2\\%: results.json ours.clean_acc -> baseline.clean_acc`."""
    where = occ.file if occ is not None else (old.file if old is not None else Path("?"))
    line = occ.number.line if occ is not None else (old.line if old is not None else 0)
    before = old.token if old is not None else None
    after = occ.token if occ is not None else "(gone)"
    tokens = after if before in (None, after) else f"{before} -> {after}"
    was, now = decision_name(old, base), decision_name(new, base)
    if occ is None:
        now = "dropped"
    decisions = was if was == now else f"{was} -> {now}"
    if old is not None and new is not None and was == now and old.value != new.value:
        decisions = f"{was}: {old.value} -> {new.value}"
    return f"{display_path(where, Path.cwd())}:{line}: {tokens}: {decisions}"


def _refreshed(b: FileBinding, occ: Occurrence) -> FileBinding:
    """Return a held decision with its place (identity, line, token) as the text stands now."""
    return FileBinding(occ.file, dict(occ.context.identity), occ.number.line, occ.token, b.log, b.at, b.value,
                       b.transform, b.formula, list(b.alternatives), b.reason)  # fmt: skip


def _fresh(rec: Reconciled, i: int) -> FileBinding | None:
    bound = rec.decisions.get(i)
    return to_file_binding(bound) if bound is not None and decides(bound) else None


def _by_hand(rec: Reconciled, i: int, reason: str) -> FileBinding:
    """Return the manual decision of a number without one; an ambiguous number's row keeps the entries it fits
    alike (`alternatives`), so the file's diff shows what the author typed by hand instead of choosing."""
    by_hand = manual_binding(rec.occurrences[i], reason)
    bound = rec.decisions.get(i)
    if bound is not None and bound.how == "ambiguous":
        by_hand.alternatives = distinct(
            [
                {"log": str(c.entry.log), "at": c.entry.at, "value": c.entry.raw, "transform": c.transform}
                for c in (bound.best, *bound.alternatives)
            ]
        )
    return by_hand


def build_ledger(rec: Reconciled, update: bool, manual: dict[int, str], unattested_reason: str) -> Ledger:
    """Return the rows `bind` writes (see the module's doc); `manual`: occurrence index -> reason;
    `unattested_reason`, when `manual` holds -1, records every number left without a decision by hand."""
    out = Ledger()
    base = rec.base
    decided: dict[int, FileBinding] = {}
    rebound: list[tuple[int, FileBinding, FileBinding | None, Occurrence]] = []  # conflicts `--update` accepted
    for i, occ in enumerate(rec.occurrences):
        old = rec.existing[rec.pairs[i]] if i in rec.pairs else None
        if i in manual:
            by_hand = _by_hand(rec, i, manual[i])
            if old is None or not _same_decision(old, by_hand):
                out.changes.append(change_line(old, by_hand, occ, base))
                out.manual += 1
            elif old is not None:
                by_hand = _refreshed(old, occ) if update else old
            decided[i] = by_hand
        elif old is not None and i in rec.held:
            decided[i] = _refreshed(old, occ) if update else old
        elif old is not None:  # a reviewed decision that no longer holds
            if not update:
                out.conflicts.append(i)
                decided[i] = old
                continue
            accepted = manual_binding(occ, old.reason or "") if old.manual else _fresh(rec, i)
            rebound.append((len(out.changes), old, accepted, occ))
            out.changes.append(change_line(old, accepted, occ, base))
            if accepted is not None:
                decided[i] = accepted
        elif (proposal := _fresh(rec, i)) is not None:
            decided[i] = proposal
            out.proposed += 1
    quiet = {id(occ) for occ in rec.result.quiet}  # optional numbers without evidence: `check` never reports them
    undecided = [i for i, occ in enumerate(rec.occurrences) if i not in decided and id(occ) not in quiet]
    if -1 in manual:  # exactly what `check` lists without a decision (an ambiguous count too): all reviewed
        for i in undecided:
            decided[i] = _by_hand(rec, i, unattested_reason)
            out.changes.append(change_line(None, decided[i], rec.occurrences[i], base))
            out.manual += 1
        undecided = []
    _name_swaps(out.changes, rebound)
    out.rows = [decided[i] for i in sorted(decided)]
    out.covered, out.undecided = set(decided), undecided
    if update:
        out.changes += [change_line(b, None, None, base) for b in rec.stale]
    else:
        out.stale = list(rec.stale)
        out.rows += out.stale
    return out


def _name_swaps(changes: list[str], rebound: list[tuple[int, FileBinding, FileBinding | None, Occurrence]]) -> None:
    """Mark each accepted change that takes the entry another accepted change gave up, and gives up the one that
    change takes (a swap of two numbers): `(swapped with results.tex:28)`, so `--update` never accepts one quietly."""

    def entry(b: FileBinding | None) -> tuple[object, ...] | None:
        return None if b is None or b.manual else (b.log, b.at, b.transform)

    gave_up: dict[tuple[object, ...] | None, tuple[int, FileBinding, FileBinding | None, Occurrence]] = {}
    # ^ entry -> the accepted change that gave it up (one per entry: a swap pairs two)
    for record in rebound:
        gave_up.setdefault(entry(record[1]), record)
    for k, old, new, occ in rebound:
        other = gave_up.get(entry(new)) if entry(new) is not None else None
        if other is not None and other[3] is not occ and entry(other[2]) == entry(old):
            changes[k] += f" (swapped with {display_path(other[3].file, Path.cwd())}:{other[3].number.line})"


def _parse_spec(spec: str) -> tuple[str, int, str]:
    parts = spec.rsplit(":", 2)
    if len(parts) != 3 or not parts[1].strip().isdigit() or not parts[2].strip():
        raise InputError("--manual", f"{spec!r}: expected FILE:LINE:TOKEN (as `check` prints a number's place) or "
                         "`unattested`")  # fmt: skip
    return parts[0], int(parts[1]), parts[2].strip()


def _bare(token: str) -> str:
    return token.replace("\\%", "").replace("%", "").replace("$", "").strip()


def _manuscript_file(name: str, manuscript: Manuscript) -> Path:
    """Return the file of the manuscript `name` stands for (from the working directory, else from the paper's
    directory, as `check` prints places); raise InputError when there is none or the manuscript does not read it."""
    candidates = [Path(name), manuscript.directory / name]
    found = [p for p in candidates if os.path.lexists(p)]
    if not found:
        raise InputError(name, f"no such file (neither from here nor from the paper's directory "
                         f"{display_path(str(manuscript.directory), Path.cwd())})")  # fmt: skip
    read = {p.resolve(): p for p in manuscript.texts}
    for path in found:
        if path.resolve() in read:
            return path.resolve()
    what = "a directory" if found[0].is_dir() else "not a file the manuscript reads"
    raise InputError(name, f"is {what} (the root {manuscript.root.name} does not \\input it); give a place as "
                     "`check` prints it")  # fmt: skip


def manual_targets(
    rec: Reconciled, specs: tuple[str, ...], reason: str | None, manuscript: Manuscript
) -> dict[int, str]:
    """Return occurrence index -> reason for each `--manual FILE:LINE:TOKEN` (-1 for `unattested`); raise InputError
    naming the place when no empirical number stands there."""
    if not specs:
        return {}
    if not reason or not reason.strip() or "\n" in reason:
        raise InputError("--reason", "is needed with --manual: one line, such as setting, cited, not_logged or the "
                         "author's own words")  # fmt: skip
    out: dict[int, str] = {}
    for spec in specs:
        if spec.strip() == UNATTESTED:
            out[-1] = reason.strip()
            continue
        name, line, token = _parse_spec(spec)
        path = _manuscript_file(name, manuscript)
        lines = manuscript.texts[path].count("\n") + (not manuscript.texts[path].endswith("\n"))
        if not 1 <= line <= lines:
            raise InputError(name, f"line {line} is past the end (the file has {lines} lines)" if line else
                             "line 0: lines count from 1", line=line)  # fmt: skip
        here = [(i, o) for i, o in enumerate(rec.occurrences) if o.number.line == line and o.file.resolve() == path]
        hits = [i for i, o in here if o.token == token or _bare(o.token) == _bare(token)]
        if not hits:
            there = [o.token for _, o in here]
            listed = f"the empirical numbers there: {', '.join(there)}" if there else "no empirical number stands there"
            raise InputError(name, f"holds no empirical number {token} on this line ({listed})", line=line)
        for i in hits:
            out[i] = reason.strip()
    return out
