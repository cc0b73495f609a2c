"""Deciding each number's binding on evidence: bound, ambiguous with distinct alternatives, or unbound.

For every number the candidates are the entries that fit its printed value, less those counter-
evidence rules out (`bindrules`). A candidate has evidence when the context names it (its field
and its row; or its field, when a value of that field's column matches by chance below
`chance.BOUND`; or its row, when a value of that record does), when its table maps onto the
entry's log table as a block (`bindblocks`), or, the only candidate left, when any logged value
matches a number of that printed form by chance below the bound. With no evidence the number stays
unbound; with several candidates of equal evidence it is `ambiguous`, never a pick. A summary entry
wins over per-seed rows unless the number's words name the seed. What stays unbound may be derived
(`derived`).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from decimal import Decimal

from ..tex.texwords import WINDOW
from .bindblocks import TIE, align_blocks, mirrors, settle_rows, strength
from .binder import Bound, Candidate, EntryIndex, Occurrence, col_key, factor_of, transforms
from .bindnames import EntryNames, Naming
from .bindrules import (
    NAMES,
    Tables,
    counter_evidence,
    drop_repeated_values,
    entry_configs,
    forget,
    monotone_columns,
    names_seed,
    per_seed,
    setting_words,
    spells_field,
)
from .chance import BOUND, column
from .derived import derive
from .derivedgroups import derive_groups
from .derivedtable import derive_columns
from .logentries import Entry, LogData

#: prune a prose number's candidates that no rule could back (False: evaluate every fit; the tests compare both)
PRUNE = True

#: an entry fitting a printed value, with its words (`bindnames.EntryNames.of`): field, row, weighted
Fit = tuple[Entry, Decimal, tuple[str, ...], tuple[str, ...], dict[str, float]]


@dataclass
class Rules:
    """What the logs say once for every number: the log tables and their identifier columns; each entry's words and
    the entries fitting each printed value, read once."""

    tables: Tables
    monotone: set[tuple[str, str]]
    names: EntryNames = field(default_factory=EntryNames)
    fits: dict[tuple[object, int], list[Fit]] = field(default_factory=dict)
    evaluated: int = 0  # fits weighed against counter-evidence and made candidates: the work `candidates` did

    @classmethod
    def of(cls, datas: list[LogData]) -> Rules:
        """Return the rules' view of the logs."""
        return cls(Tables(datas), monotone_columns(datas))

    def fitting(self, index: EntryIndex, printed: Decimal, power: int) -> list[Fit]:
        """Return `index.fitting(printed, power)` with each entry's words, read once per printed form (`0.99` stands
        a hundred times)."""
        key = (printed.as_tuple(), power)  # 0.99 and 0.990 are equal but fit different entries
        found = self.fits.get(key)
        if found is None:
            found = self.fits[key] = [(e, v, *self.names.of(e)) for e, v in index.fitting(printed, power)]
        return found


def candidates(occ: Occurrence, index: EntryIndex, rules: Rules) -> tuple[list[Candidate], bool]:
    """Return the candidates of one occurrence that no counter-evidence rules out, best named first, and whether any
    entry fitted its value at all.

    A prose number's candidate that its context names neither by field nor by row (both below `NAMES`) can have no
    evidence (`evidence`: no block, no axis outside a table) and a prose number's candidates serve nothing but
    `decide`; such a candidate counts only towards `_by_value`'s "the only candidate", so past two of them the rest
    are not weighed (`PRUNE`): a `0` or `1` fits thousands of logged values and its context names few of them.
    """
    found: dict[tuple[str, str, str], Candidate] = {}
    fitted = False
    names = Naming(occ.context.words)  # each name word against the context once, not once per fitting entry
    prune, unnamed = PRUNE and occ.context.cell is None, 0
    configs = occ.context.configs
    for transform, tentative in transforms(occ):
        power = factor_of(transform)
        assert power is not None
        for entry, value, fields, row, words in rules.fitting(index, occ.number.value, power):
            fitted = True
            by_field, by_row = names.naming(fields), names.naming(row)
            if configs and configs & entry_configs(entry, occ.file):
                by_row = max(by_row, 1.0)  # the model size the context names is the entry's
            named = by_field >= NAMES or by_row >= NAMES
            if prune and unnamed >= 2 and not named:
                continue
            rules.evaluated += 1
            if counter_evidence(occ, entry, rules.monotone) or rules.tables.wrong_place(occ, entry):
                continue
            cand = Candidate(entry, transform, value, names.score(words), tentative)
            cand.by_field, cand.by_row = by_field, by_row
            if cand.key not in found:
                found[cand.key] = cand
                unnamed += not named
    return rank(list(found.values())), fitted


def rank(cands: list[Candidate]) -> list[Candidate]:
    """Return candidates best first: evidence strength, then small columns, then the order of the logs."""
    return sorted(cands, key=lambda c: (-strength(c), c.tentative, c.entry.rows, c.entry.kind != "leaf"))


def _column_rows(cand: Candidate, rules: Rules) -> int:
    log = str(cand.entry.log)
    if cand.entry.kind == "line":
        return len(rules.tables.lines.get((log, cand.entry.column), ())) + rules.tables.dropped.get(log, 0) or 1
    if cand.entry.kind == "leaf":  # `ours.f1` and `baseline.f1` are one field of two records
        return max(len(rules.tables.fields.get((log, col_key(cand.entry)), ())), cand.entry.rows, 1)
    return max(cand.entry.rows, 1)


def evidence(occ: Occurrence, cand: Candidate, rules: Rules) -> str:
    """Return what a candidate's binding would rest on (`name`, `block`), '' when on nothing but its value."""
    printed = occ.number.value
    named_field, named_row = cand.by_field >= NAMES, cand.by_row >= NAMES
    if printed == 0 and not rules.names.near(occ.context.near).naming(rules.names.of(cand.entry)[0]):
        return ""  # logs hold zeros everywhere (counts of nothing): a zero's own words must name its field
    if occ.context.axis:  # a setting axis binds only to the field its header names
        return "name" if named_field else ""
    if named_field and named_row:
        return "name"
    rows = _column_rows(cand, rules)
    if named_field and column(printed, rows) < BOUND:
        return "name"
    if named_field and rows == 1 and spells_field(occ.context.near, cand.entry):
        return "name"  # a field of two or more specific words that holds one value: its name names the entry
    if named_field and rows == 1 and rules.tables.names_alone(occ.context.near, cand.entry):
        return "name"  # a one-valued field named by a word no other field of the logs holds
    record = len(rules.tables.by_row.get((str(cand.entry.log), cand.entry.row), ())) or 1
    if named_row and cand.entry.kind != "line" and column(printed, record) < BOUND:
        return "name"
    if cand.block:
        return "block"
    return ""


def _distinct(cands: list[Candidate], order: dict[str, int]) -> list[tuple[Candidate, float]]:
    """Return the candidates (best first) less repeats, each with its strength: the same entry under another
    transform, and a mirror (the same field holding the same value in another log: `summary.json` and
    `eval_after_summary.json` both hold `rlm_rolling_accuracy = 0.917`, a CSV row's `f1 = 0.4293` and
    `test_metrics.f1 = 0.4293`: either is what the number reports, so the stronger stands for both, of two as
    strong the one of the log declared first; several records of one log are no mirror of one entry)."""
    seen: set[tuple[str, str]] = set()
    out: list[tuple[Candidate, float]] = []
    logs: list[set[str]] = []  # the logs of each kept candidate's mirrors: one entry per log, or no mirror
    for c in cands:
        log = str(c.entry.log)
        if (log, c.entry.at) in seen:
            continue
        seen.add((log, c.entry.at))
        twin = next((k for k, (kept, _) in enumerate(out) if log not in logs[k] and mirrors(c, kept)), None)
        if twin is None:
            out.append((c, strength(c)))
            logs.append({log})
            continue
        logs[twin].add(log)
        kept, power = out[twin]
        if order.get(log, 0) < order.get(str(kept.entry.log), 0) and power - strength(c) < TIE:
            out[twin] = (c, power)
    return out


def decide(occ: Occurrence, cands: list[Candidate], index: EntryIndex, rules: Rules) -> Bound | None:
    """Return the binding of one occurrence from its candidates, None when nothing but a likely chance supports one."""
    cands = [c for c in cands if not c.tentative]  # x100 on an unmarked cell that its column did not confirm
    for c in cands:
        c.evidence = evidence(occ, c, rules)
    backed = [c for c in cands if c.evidence]
    if backed and not names_seed(occ.context) and any(not per_seed(c.entry) for c in backed):
        backed = [c for c in backed if not per_seed(c.entry)]  # the summary wins over one seed's row
    elif backed and names_seed(occ.context) and any(per_seed(c.entry) for c in backed):
        backed = [c for c in backed if per_seed(c.entry)]
    if not backed:
        return _by_value(occ, cands, index)
    distinct = _distinct(rank(backed), {str(log.path): n for n, log in enumerate(index.logs)})
    best, top = distinct[0]
    ties = [c for c, power in distinct[1:] if top - power < TIE]
    if ties:
        return Bound(occ, best, ties[:5], "ambiguous", best.evidence)
    return Bound(occ, best, [], "context", best.evidence)


def _by_value(occ: Occurrence, cands: list[Candidate], index: EntryIndex) -> Bound | None:
    """Return the one candidate bound on its value alone, when a chance match of any logged value is unlikely."""
    if len(cands) != 1 or occ.optional or occ.context.axis or setting_words(occ.context):
        return None
    powers = [power for t, _ in transforms(occ) if (power := factor_of(t)) is not None]
    chance = index.chance.of(occ.number.value, powers)
    if chance >= BOUND:
        return None
    cands[0].evidence = "value"
    return Bound(occ, cands[0], [], "unique", f"value p={chance:.2%}")


def bind_fresh(
    occs: list[Occurrence], index: EntryIndex, datas: list[LogData], decided: dict[int, Bound],
    ranked: dict[int, list[Candidate]],
) -> int:  # fmt: skip
    """Decide every occurrence `decided` does not hold yet (in place), with the derived ones last; return how many
    fitted some entry by value but had no evidence for any (coincidences avoided)."""
    try:
        return _bind_fresh(occs, index, datas, decided, ranked)
    finally:
        forget()  # the memos of the entries' words hold this bind's entries


def _bind_fresh(
    occs: list[Occurrence], index: EntryIndex, datas: list[LogData], decided: dict[int, Bound],
    ranked: dict[int, list[Candidate]],
) -> int:  # fmt: skip
    rules = Rules.of(datas)
    fitted: dict[int, bool] = {}
    for i, occ in enumerate(occs):
        if i not in decided:
            ranked[i], fitted[i] = candidates(occ, index, rules)
    align_blocks(occs, ranked)
    for i, occ in enumerate(occs):
        if i not in decided and (bound := decide(occ, ranked[i], index, rules)) is not None:
            decided[i] = bound
    drop_repeated_values(occs, decided)
    settle_rows(occs, decided, ranked)
    for i, cell in derive_groups(occs, decided, index).items():  # a mean (and its spread) over a log's seeds
        decided[i] = Bound(occs[i], cell, [], "derived", "derived")
    for i, cell in derive_columns(occs, decided).items():  # a table column of one formula over bound cells
        decided[i] = Bound(occs[i], cell, [], "derived", "derived")
    beside = Neighbours(occs, decided)
    for i, occ in enumerate(occs):
        if i in decided:
            continue
        found = derive(occ, [decided[j] for j in beside.of(occ)], index)
        if found is not None:
            decided[i] = Bound(occ, found, [], "derived", "derived")
    return sum(1 for i, f in fitted.items() if f and i not in decided)


class Neighbours:
    """The decided numbers that may be operands of a derived one: those of its table row or column, or of its
    sentence within `WINDOW` characters (a sentence of a megabyte does not make every number an operand of every
    other), looked up by place, not by scanning every decision."""

    def __init__(self, occs: list[Occurrence], decided: dict[int, Bound]) -> None:
        self._by: dict[tuple[object, ...], list[int]] = {}
        for j in sorted(decided, key=lambda j: (occs[j].number.start, j)):
            occ = occs[j]
            cell = occ.context.cell
            keys = (
                [(occ.file, occ.context.group)]
                if cell is None
                else [(occ.file, occ.context.group, "row", cell[1]), (occ.file, occ.context.group, "column", cell[2])]
            )
            for key in keys:
                self._by.setdefault(key, []).append(j)
        self._starts = {key: [occs[j].number.start for j in js] for key, js in self._by.items()}

    def of(self, occ: Occurrence) -> list[int]:
        """Return the decided numbers beside `occ`, in order."""
        cell = occ.context.cell
        if cell is not None:
            found = self._by.get((occ.file, occ.context.group, "row", cell[1]), [])
            found = found + self._by.get((occ.file, occ.context.group, "column", cell[2]), [])
            return sorted(set(found))
        key = (occ.file, occ.context.group)
        starts = self._starts.get(key, [])
        low = bisect.bisect_left(starts, occ.number.start - WINDOW)
        high = bisect.bisect_right(starts, occ.number.start + WINDOW)
        return sorted(self._by[key][low:high]) if high > low else []
