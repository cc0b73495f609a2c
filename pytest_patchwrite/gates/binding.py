"""Binding a manuscript's numbers against its logs and its bindings file: what `bind` writes, what the lock reports.

`reconcile` matches each empirical number to the binding the file holds for it (by file and
anchor words, so moved lines keep their bindings), checks that binding against the log as it is
now, and binds the rest afresh (`binder`, `derived`). `bind` writes the outcome; the lock
(`lock_violations`) reports mismatches, numbers the file does not bind and stale bindings.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING

from ..binder import (
    BindResult,
    Bound,
    Candidate,
    EntryIndex,
    Occurrence,
    apply,
    holds,
    occurrences,
    prefilter,
    prints_as,
)
from ..bindplan import bind_fresh

if TYPE_CHECKING:
    from .evidence import EvidenceConfig
from ..bindfile import FileBinding, default_path, dumps, match, parse, to_json
from ..derived import describe, formula_values
from ..errors import InputError
from ..explog import resolve_logs
from ..inputs import decode, read_held
from ..latex import Scan, scan
from ..logentries import Entry, LogData
from ..logread import LogSet, read_logs
from ..manuscript import Manuscript, load_manuscript, magic_comments
from ..model import WARNING, Violation
from ..numeric import Sieve, parse_number
from ..paths import Boundary, OutsideTree
from ..tempfiles import TEMP_SUFFIX, temp_file_prefix
from ..texconditionals import false_conditionals


@dataclass
class Reconciled:
    """One manuscript's numbers against its logs and (optionally) its bindings file."""

    result: BindResult
    occurrences: list[Occurrence] = field(default_factory=list)
    mismatched: list[tuple[Occurrence, FileBinding, list[Decimal], str | None]] = field(default_factory=list)
    stale: list[FileBinding] = field(default_factory=list)
    fresh: set[int] = field(default_factory=set)  # id() of occurrences no binding of the file covered
    base: Path = Path(".")
    cited: dict[tuple[Path, int], list[str]] = field(default_factory=dict)  # (file, sentence) -> keys it cites

    def file_bindings(self) -> list[FileBinding]:
        """Return what the bindings file should hold now."""
        return [to_file_binding(b) for b in self.result.bound]


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
    lookup = _lookup(datas)
    if binding.transform == "derived" and binding.formula:
        return formula_values(binding.formula, lookup)
    value = lookup(str(binding.log), binding.at, binding.transform)
    return [] if value is None else [value]


def _wanted(bindings: list[FileBinding]) -> dict[Path, set[str]]:
    want: dict[Path, set[str]] = {}
    for b in bindings:
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


def reconcile(
    scans: list[Scan],
    texts: dict[Path, str],
    datas: dict[Path, LogData],
    occs: list[Occurrence],
    existing: list[FileBinding] | None,
    base: Path,
) -> Reconciled:
    """Return the numbers (`occs`, from `binder.occurrences`) of the scanned files bound against the logs' entries
    (`datas`, by resolved path, from `read_for_locks`): the file's bindings that still hold, the rest afresh."""
    existing = existing or []
    index = EntryIndex(list(datas.values()))
    out = Reconciled(BindResult(), occs, base=base)
    out.cited = {(Path(s.file), sentence): keys for s in scans for sentence, keys in s.cited_sentences.items()}
    pairs = match(existing, [(o.file, o.anchor[0], o.anchor[1], o.number.line, o.token) for o in occs])
    decided: dict[int, Bound] = {}
    ranked: dict[int, list[Candidate]] = {}
    for i, occ in enumerate(occs):
        if i in pairs:
            binding = existing[pairs[i]]
            values = binding_values(binding, datas)
            if any(holds(occ.number.value, v) for v in values):
                decided[i] = Bound(occ, _candidate(binding, datas, values), _alternatives(binding), "kept", "kept")
                ranked[i] = [decided[i].best]
                continue
            data = datas.get(binding.log.resolve())
            entry = data.at(binding.at) if data is not None and binding.transform != "derived" else None
            out.mismatched.append((occ, binding, values, entry.raw if entry is not None else None))
        else:
            out.fresh.add(id(occ))
    out.result.coincidental = bind_fresh(occs, index, list(datas.values()), decided, ranked)
    for i, occ in enumerate(occs):
        if i in decided:
            out.result.bound.append(decided[i])
        elif occ.optional:
            out.result.quiet.append(occ)  # a number the policy does not check, without evidence: not reported
        else:
            out.result.unattested.append(occ)
    matched = set(pairs.values())
    out.stale = [b for j, b in enumerate(existing) if j not in matched]
    return out


def _candidate(binding: FileBinding, datas: dict[Path, LogData], values: list[Decimal]) -> Candidate:
    data = datas.get(binding.log.resolve())
    entry = data.at(binding.at) if data is not None else None
    if entry is None:  # a derived binding names its formula, not one entry
        entry = Entry(binding.log, binding.at, binding.value, "", "", "", 1, "derived")
    raw = entry.raw if binding.transform != "derived" else _plain(values[0])
    entry = Entry(entry.log, entry.at, raw, entry.row, entry.column, entry.label, entry.rows, entry.kind)
    return Candidate(entry, binding.transform, values[0], 0.0, False, binding.formula)


def _alternatives(binding: FileBinding) -> list[Candidate]:
    return [Candidate(Entry(Path(a["log"]), a["at"], a["value"], "", "", "", 1), a["transform"], Decimal(0))
            for a in binding.alternatives]  # fmt: skip


def _plain(value: Decimal) -> str:
    return format(float(value), ".12g")


def to_file_binding(bound: Bound) -> FileBinding:
    """Return the bindings-file row of one decision."""
    occ, best = bound.occurrence, bound.best
    if best.transform == "derived" and best.formula is not None:
        log = Path(best.formula["operands"][0]["log"])  # type: ignore[index]
        at, value = describe(best.formula), best.entry.raw if bound.how == "kept" else _plain(best.value)
    else:
        log, at, value = best.entry.log, best.entry.at, best.entry.raw
    alternatives = [{"log": str(c.entry.log), "at": c.entry.at, "value": c.entry.raw, "transform": c.transform}
                    for c in bound.alternatives]  # fmt: skip
    return FileBinding(occ.file, occ.anchor[0], occ.anchor[1], occ.number.line, occ.token, log, at, value,
                       best.transform, best.formula, alternatives)  # fmt: skip


def _entry_name(log: Path, at: str, base: Path) -> str:
    return f"{Path(os.path.relpath(log, base)).as_posix()} {at}"


def lock_violations(rec: Reconciled) -> list[Violation]:
    """Return the lock's findings: binding_mismatch, unbound_number, unattested_number, stale_binding."""
    out: list[Violation] = []
    base = rec.base
    mismatched = {id(occ) for occ, _, _, _ in rec.mismatched}
    for occ, binding, values, raw in rec.mismatched:
        name = _entry_name(binding.log, binding.at, base)
        if not values:
            message = f"is bound to {name}, which the log no longer holds; follow the log or run `patchwrite bind`"
        else:
            shown = raw if raw is not None else _plain(values[0])
            how = "" if binding.transform in ("identity", "percent", "derived") else f" ({binding.transform})"
            message = f"is bound to {name} = {shown}{how}, which prints as {prints_as(values[0], occ.number.value)}"
        out.append(Violation("binding_mismatch", str(occ.file), occ.number.line, occ.token, message))
    for bound in rec.result.bound:
        occ = bound.occurrence
        if id(occ) not in rec.fresh or id(occ) in mismatched:
            continue
        best = _entry_name(bound.best.entry.log, bound.best.entry.at, base)
        if bound.best.transform == "derived" and bound.best.formula is not None:
            best = f"{describe(bound.best.formula)} (derived)"
        if bound.how == "ambiguous":
            names = ", ".join([best, *(_entry_name(c.entry.log, c.entry.at, base) for c in bound.alternatives)])
            message = f"is not in the bindings file and fits several entries alike ({names}); bind it and choose"
            out.append(Violation("unbound_number", str(occ.file), occ.number.line, occ.token, message))
        else:
            message = f"is not in the bindings file; `patchwrite bind` would bind it to {best}"
            out.append(Violation("unbound_number", str(occ.file), occ.number.line, occ.token, message, WARNING))
    ours = {(b.occurrence.file, b.occurrence.number.sentence) for b in rec.result.bound}
    for occ in rec.result.unattested:
        if id(occ) in mismatched:
            continue
        keys = rec.cited.get((occ.file, occ.number.sentence))
        # as the pool rule: a sentence that also prints a bound number reports this paper's results
        if keys and (occ.file, occ.number.sentence) not in ours:
            cited = ", ".join(dict.fromkeys(keys))
            message = f"fits no log entry; its sentence cites {cited}: reported as that work's result, not checked"
            out.append(Violation("cited_number", str(occ.file), occ.number.line, occ.token, message, WARNING))
            continue
        message = "fits no log entry; add it to a log or mark the line `% patchwrite: ignore number`"
        out.append(Violation("unattested_number", str(occ.file), occ.number.line, occ.token, message))
    for binding in rec.stale:
        name = _entry_name(binding.log, binding.at, base)
        message = f"was bound to {name}, but no such number stands there any more; run `patchwrite bind`"
        out.append(Violation("stale_binding", str(binding.file), binding.line, binding.token, message, WARNING))
    out.sort(key=lambda v: (v.file, v.line, v.kind))
    return out


@dataclass
class BindOutcome:
    """What `patchwrite bind` found for one manuscript and the bindings file text it would write."""

    root: Path
    path: Path
    reconciled: Reconciled
    old_text: str | None
    new_text: str

    @property
    def changed(self) -> bool:
        """Return whether writing would change the file."""
        return self.old_text != self.new_text


def bindings_location(manuscript: Manuscript, root_text: str | None = None) -> Path:
    """Return the bindings file of a manuscript (`% !patchwrite bindings = FILE` in the root, else beside it)."""
    text = manuscript.texts[manuscript.root] if root_text is None else root_text
    return default_path(manuscript.root, magic_comments(text))


def read_bindings(path: Path, manuscript: Manuscript) -> tuple[str | None, list[FileBinding] | None]:
    """Return the bindings file's text and bindings, (None, None) when there is none; raise InputError if bad."""
    boundary = manuscript.boundary or Boundary.for_root(manuscript.root)
    real = boundary.allowed(path, shared=True)
    if real is None:
        raise InputError(path, boundary.why_refused(path, shared=True))
    if not os.path.lexists(real):
        return None, None
    text = decode(read_held(real, "log", manuscript.data), real)  # one read per check, like the logs
    bindings = parse(text, path, manuscript.root)
    for number, binding in enumerate(bindings, start=1):
        for what, named in (("file", binding.file), ("log", binding.log)):
            try:  # never stat'ed as evidence, never printed as a place
                boundary.require(named, str(named), shared=True)
            except OutsideTree as exc:
                raise InputError(path, f"binding {number} names a {what} outside the manuscript's tree ({exc.why}); "
                                       "rewrite it with `patchwrite bind`") from None  # fmt: skip
    return text, bindings


def allowed_numbers(items: list[str]) -> set[Decimal]:
    """Return the values of a configuration's allowed numbers."""
    return {value for item in items if (value := parse_number(str(item).rstrip("%"))) is not None}


def bind_root(root: Path | Manuscript, config: EvidenceConfig) -> BindOutcome:
    """Return the bindings of the manuscript rooted at `root` (or of its snapshot) against its declared logs (nothing
    is written)."""
    manuscript = root if isinstance(root, Manuscript) else load_manuscript(root, boundary=config.boundary(root))
    config = config.for_manuscript(manuscript)
    if not config.logs:
        raise InputError(manuscript.root, "declares no experimental log (`% !patchwrite log = FILE`); "
                         "`patchwrite bind --suggest` lists files that would attest its numbers")  # fmt: skip
    try:
        logs = resolve_logs(list(config.logs), manuscript.directory, manuscript.boundary)
    except OutsideTree as exc:
        raise InputError(manuscript.root, f"log {exc.name} {exc.why}") from None
    path = bindings_location(manuscript)
    old_text, existing = read_bindings(path, manuscript)
    false_ifs = false_conditionals(manuscript.texts.values())
    scans = [scan(manuscript.texts[p], str(p), false_ifs) for p in manuscript.files]
    policy = "decimals" if config.numbers == "off" else config.numbers
    occs = occurrences(scans, manuscript.texts, policy, allowed_numbers(config.allow_numbers))
    datas = read_for_locks(manuscript, scans, logs, occs, existing, need_pool=False).datas
    rec = reconcile(scans, manuscript.texts, datas, occs, existing, manuscript.directory)
    new_text = dumps(to_json(rec.file_bindings(), manuscript.root))
    return BindOutcome(manuscript.root, path, rec, old_text, new_text)


def write_bindings(path: Path, text: str) -> None:
    """Replace the bindings file atomically (temp file in its directory, then rename); raise InputError if it cannot."""
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=temp_file_prefix(path), suffix=TEMP_SUFFIX)
    except OSError as exc:
        raise InputError(path.parent, f"cannot hold the bindings file ({exc.strerror})") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException as exc:
        if os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise InputError(path, f"cannot be written ({exc.strerror})") from None
        raise
