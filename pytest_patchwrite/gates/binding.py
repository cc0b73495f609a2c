"""Binding a manuscript's numbers against its logs and its bindings file: what `bind` writes, what the lock judges by.

`reconcile` asks the binder for a fresh decision on every number (the file never sways it, so a paper
and its logs always propose the same), pairs each number with the decision the file holds for its place
(`bindmatch.match`: by identity, so moved lines keep their decisions) and checks that decision against the
log as it is now. `ledger.build_ledger` turns that into what `bind` writes; `numberlock.lock_violations`
into what `check` reports.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

from ..errors import InputError
from ..files.inputs import decode, read_held
from ..files.paths import OutsideTree
from ..model import display_path
from ..numbers.binder import (
    BindResult,
    Bound,
    Candidate,
    EntryIndex,
    Occurrence,
    apply,
    holds,
    prefilter,
)
from ..numbers.bindfile import (
    MANUAL,
    FileBinding,
    default_path,
    distinct,
    parse,
)
from ..numbers.bindmatch import Place, match
from ..numbers.bindplan import bind_fresh
from ..numbers.bindswap import SWAPPED, mark_swaps
from ..numbers.derived import describe, formula_values
from ..numbers.explog import NoLogMatch, resolve_logs
from ..numbers.logentries import LogData
from ..numbers.logread import LogSet, read_logs
from ..numeric import Sieve, parse_number
from ..snapshot.manuscript import Manuscript
from ..tex.latex import Scan
from ..tex.magic import magic_comments
from .citelock import declared_at


@dataclass
class Reconciled:
    """One manuscript's numbers against its logs and (optionally) its bindings file.

    `result` holds the binder's decision for every number as a fresh `bind` makes it (the file does not sway it, so
    the same paper and logs always propose the same); `pairs` maps each number the file holds a decision for to
    that decision, `held` the ones whose decision still holds, `mismatched` the ones it no longer does.
    """

    result: BindResult
    occurrences: list[Occurrence] = field(default_factory=list)
    mismatched: list[tuple[Occurrence, FileBinding, list[Decimal], str | None]] = field(default_factory=list)
    stale: list[FileBinding] = field(default_factory=list)
    fresh: set[int] = field(default_factory=set)  # id() of occurrences no binding of the file covered
    base: Path = Path(".")
    cited: dict[tuple[Path, int], list[str]] = field(default_factory=dict)  # (file, sentence) -> keys it cites
    existing: list[FileBinding] = field(default_factory=list)
    pairs: dict[int, int] = field(default_factory=dict)  # occurrence index -> index in `existing`
    held: set[int] = field(default_factory=set)  # occurrence indices whose decision in the file still holds
    decisions: dict[int, Bound] = field(default_factory=dict)  # occurrence index -> the binder's fresh decision
    swapped: dict[int, int] = field(default_factory=dict)  # occurrence index -> the one whose entry its words name
    index: EntryIndex | None = None
    root: Path | None = None  # the root manuscript, as the commands in findings name it

    def file_bindings(self) -> list[FileBinding]:
        """Return what a fresh bindings file would hold: every decided number (an ambiguous one is no decision)."""
        return [to_file_binding(b) for b in self.result.bound if decides(b)]


def decides(bound: Bound | None) -> bool:
    """Return whether the binder's fresh decision binds its number (neither ambiguous nor one of a swap)."""
    return bound is not None and bound.how not in ("ambiguous", SWAPPED)


def _lookup(datas: dict[Path, LogData]):  # type: ignore[no-untyped-def]
    def lookup(log: str, at: str, transform: str) -> Decimal | None:
        data = datas.get(Path(log).resolve())
        entry = data.at(at) if data is not None else None
        if entry is None:
            return None
        try:
            return apply(transform, entry.value)
        except ArithmeticError:
            return None

    return lookup


def binding_values(binding: FileBinding, datas: dict[Path, LogData]) -> list[Decimal]:
    """Return the values a binding's entry takes in the logs now (a derived one: raw and as printed)."""
    if binding.log is None or binding.at is None:
        return []
    lookup = _lookup(datas)
    if binding.transform == "derived" and binding.formula:
        return formula_values(binding.formula, lookup)
    value = lookup(str(binding.log), binding.at, binding.transform)
    return [] if value is None else [value]


def binding_holds(binding: FileBinding, occ: Occurrence, values: list[Decimal]) -> bool:
    """Return whether a decision still holds for the number standing at its place (a manual one: printed alike)."""
    if binding.manual:
        return occ.token == binding.value
    return any(holds(occ.number.value, v) for v in values)


def _wanted(bindings: list[FileBinding]) -> dict[Path, set[str]]:
    want: dict[Path, set[str]] = {}
    for b in bindings:
        if b.log is not None and b.at is not None:
            want.setdefault(b.log.resolve(), set()).add(b.at)
        for operand in (b.formula or {}).get("operands", []):
            want.setdefault(Path(operand["log"]).resolve(), set()).add(str(operand["at"]))
    return want


def read_for_locks(
    manuscript: Manuscript,
    scans: list[Scan],
    logs: list[Path],
    occs: list[Occurrence] | None = None,
    existing: list[FileBinding] | None = None,
    need_pool: bool = True,
) -> LogSet:
    """Return the manuscript's logs read once for both locks: the pool (a big log sieved by every printed number)
    and, given the binder's `occs`, the entries it needs (sieved by `binder.prefilter`, plus what `existing` names)."""
    pool = Sieve.around(n.value for s in scans for n in s.numbers) if need_pool else None
    if occs is None:
        return read_logs(logs, manuscript.data, pool)
    bounds, _ = prefilter(occs)
    entries = Sieve(zip(bounds[::2], bounds[1::2], strict=True))
    return read_logs(logs, manuscript.data, pool, entries, _wanted(existing or []), need_pool)


def declared_logs(manuscript: Manuscript, logs: list[str | Path], config_text: str | None = None) -> list[Path]:
    """Return the declared experimental logs' files; raise InputError at the declaration when one matches no file or
    leads outside the manuscript's tree (a configuration the number locks cannot use: `check` and `bind` exit 2)."""
    try:
        return resolve_logs(list(logs), manuscript.directory, manuscript.boundary)
    except (OutsideTree, NoLogMatch) as exc:
        where, line = declared_at(manuscript, "log", manuscript.root_text if config_text is None else config_text)
        named = display_path(manuscript.directory / exc.name, manuscript.directory)  # as written, not cwd-relative
        why = f"which {exc.why}" if isinstance(exc, OutsideTree) else "but no file matches it"
        raise InputError(
            where,
            f"declares the experimental log {named} (patchwrite_log or `% !patchwrite log`), {why}",
            line=line or None,
        ) from None


def places(occs: list[Occurrence]) -> list[Place]:
    """Return where each number stands (file, identity, line, token), as `bindmatch.match` pairs them."""
    return [Place(o.file, dict(o.context.identity), o.number.line, o.token) for o in occs]


def fresh_decisions(
    occs: list[Occurrence], index: EntryIndex, datas: dict[Path, LogData]
) -> tuple[dict[int, Bound], int]:
    """Return the binder's decision for each number, as a bind without a file makes it (`bindplan.bind_fresh`: the
    file never sways it, so the same paper and logs propose the same), and the coincidences it avoided."""
    decided: dict[int, Bound] = {}
    ranked: dict[int, list[Candidate]] = {}
    coincidental = bind_fresh(occs, index, list(datas.values()), decided, ranked)
    return decided, coincidental


def reconcile(
    scans: list[Scan],
    texts: dict[Path, str],
    datas: dict[Path, LogData],
    occs: list[Occurrence],
    existing: list[FileBinding] | None,
    base: Path,
    root: Path | None = None,
) -> Reconciled:
    """Return the numbers (`occs`, from `binder.occurrences`) of the scanned files against the logs' entries
    (`datas`, by resolved path, from `read_for_locks`) and the file's decisions: which hold, which no longer do."""
    existing = existing or []
    index = EntryIndex(list(datas.values()))
    out = Reconciled(BindResult(), occs, base=base, existing=existing, index=index, root=root)
    out.cited = {(Path(s.file), sentence): keys for s in scans for sentence, keys in s.cited_sentences.items()}
    out.decisions, out.result.coincidental = fresh_decisions(occs, index, datas)
    out.swapped = mark_swaps(occs, out.decisions)  # a swap already in the paper is no decision
    out.pairs = match(existing, places(occs))
    for i, occ in enumerate(occs):
        if i not in out.pairs:
            out.fresh.add(id(occ))
            continue
        binding = existing[out.pairs[i]]
        values = binding_values(binding, datas)
        if binding_holds(binding, occ, values):
            out.held.add(i)
            continue
        data = datas.get(binding.log.resolve()) if binding.log is not None else None
        entry = data.at(binding.at) if data is not None and binding.at and binding.transform != "derived" else None
        out.mismatched.append((occ, binding, values, entry.raw if entry is not None else None))
    for i, occ in enumerate(occs):
        if i in out.decisions:  # an ambiguous one too, a count included: its words name several entries, so it
            out.result.bound.append(out.decisions[i])  # reports a result and needs a decision (tester3 N1)
        elif occ.optional:  # a number the policy does not check, with no evidence for any entry: not reported
            out.result.quiet.append(occ)
        else:
            out.result.unattested.append(occ)
    matched = set(out.pairs.values())
    out.stale = [b for j, b in enumerate(existing) if j not in matched]
    return out


def _plain(value: Decimal) -> str:
    return format(float(value), ".12g")


def to_file_binding(bound: Bound) -> FileBinding:
    """Return the bindings-file row of one decision."""
    occ, best = bound.occurrence, bound.best
    if best.transform == "derived" and best.formula is not None:
        log = Path(best.formula["operands"][0]["log"])  # type: ignore[index]
        at, value = describe(best.formula), _plain(best.value)
    else:
        log, at, value = best.entry.log, best.entry.at, best.entry.raw
    alternatives = [{"log": str(c.entry.log), "at": c.entry.at, "value": c.entry.raw, "transform": c.transform}
                    for c in bound.alternatives]  # fmt: skip
    return FileBinding(occ.file, dict(occ.context.identity), occ.number.line, occ.token, log, at, value,
                       best.transform, best.formula, distinct(alternatives))  # fmt: skip


def manual_binding(occ: Occurrence, reason: str) -> FileBinding:
    """Return the decision that a number is typed by hand, locked to its printed form."""
    return FileBinding(occ.file, dict(occ.context.identity), occ.number.line, occ.token, None, None, occ.token,
                       MANUAL, None, [], reason)  # fmt: skip


def bindings_location(manuscript: Manuscript, root_text: str | None = None) -> Path:
    """Return the bindings file of a manuscript (`% !patchwrite bindings = FILE` in the root, else beside it)."""
    text = manuscript.texts[manuscript.root] if root_text is None else root_text
    return default_path(manuscript.root, magic_comments(text))


def read_bindings(path: Path, manuscript: Manuscript) -> tuple[str | None, list[FileBinding] | None]:
    """Return the bindings file's text and bindings, (None, None) when there is none; raise InputError if bad."""
    boundary = manuscript.boundary
    real = boundary.allowed(path, shared=True)
    if real is None:
        raise InputError(path, boundary.why_refused(path, shared=True))
    if not os.path.lexists(real):
        return None, None
    text = decode(read_held(real, "bindings", manuscript.data), real)  # one read per check, like the logs
    bindings = parse(text, path, manuscript.root)
    for number, binding in enumerate(bindings, start=1):
        for what, named in (("file", binding.file), ("log", binding.log)):
            if named is None:  # a number typed by hand names no log
                continue
            try:  # never stat'ed as evidence, never printed as a place
                boundary.require(named, str(named), shared=True)
            except OutsideTree as exc:
                raise InputError(path, f"binding {number} names a {what} outside the manuscript's tree ({exc.why}); "
                                       "rewrite it with `patchwrite bind`") from None  # fmt: skip
    return text, bindings


def allowed_numbers(items: list[str]) -> set[Decimal]:
    """Return the values of a configuration's allowed numbers."""
    return {value for item in items if (value := parse_number(str(item).rstrip("%"))) is not None}
