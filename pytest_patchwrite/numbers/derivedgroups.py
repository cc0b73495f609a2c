"""Aggregates over seeds: the rows of a log table that differ only in their seed are one run repeated, and a paper
reports their mean and spread (`16.8 \\pm 3.4 s (mean \\pm s.d., five seeds)`).

A seed group is the rows of one log table (CSV rows, the records of a JSON list or JSON Lines log) that hold a
`seed` column, carry the same row label and the same value in every other integer column (`K`, `d_c`, `n_kv`: the
settings), and hold distinct seeds; its measured columns are those holding a non-integer value. A number binds to
an aggregate of one group's column only on evidence: its words name the aggregate (`mean`, `average`) and the
repetition (`seeds`, `runs`), and the chance that some group's aggregate fits a number of its printed form by luck
stays below `chance.BOUND`, counted over every group and measured column of the logs. A mean printed with its
spread (`x \\pm y`) binds as a pair: the mean of one group's column and its standard deviation (the sample's or the
population's, whichever prints) must both fit, the chance being the candidates times the chance of each. Exactly
one group and column must fit; the formula lists the group's entries, so the lock recomputes it from the logs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from .binder import Bound, Candidate, EntryIndex, Occurrence, holds, name_words
from .chance import BOUND, choices
from .derived import AGGREGATES, aggregate, derived_candidate
from .derivedtable import open_cell
from .logentries import Entry

#: the words that name a repetition over seeds
REPEATS = frozenset("seed seeds runs repeats repetitions replicates trials".split())
#: the spreads a `\pm` may print: the sample's and the population's standard deviation
SPREADS = ("std", "pstd")
_INTEGER = re.compile(r"-?\d+")
_PM = ("\\pm", "\\mp")


@dataclass(frozen=True)
class Group:
    """One measured column of one seed group: its entries, one a row, in the log's order."""

    log: str
    column: str
    entries: tuple[Entry, ...]

    def values(self) -> list[Decimal]:
        return [e.value for e in self.entries]

    def formula(self, op: str) -> dict[str, object]:
        rows = ", ".join(e.row for e in self.entries)
        operands = [{"log": e.log, "at": e.at, "transform": "identity"} for e in self.entries]
        return {"op": op, "column": f"{self.column} over the seeds of {rows}", "operands": operands}


def seed_groups(index: EntryIndex) -> list[Group]:
    """Return every measured column of every seed group of the logs (logs a filter cut are left out: a group must
    be whole)."""
    out: list[Group] = []
    for log in index.logs:
        if log.dropped:
            continue
        rows: dict[str, dict[str, Entry]] = {}
        for e in log.entries:
            if e.kind == "cell" or e.kind == "leaf" and e.column.count("[*]") == 1 and e.column.startswith("[*]"):
                rows.setdefault(e.row, {})[e.column] = e
        out.extend(_groups(str(log.path), rows))
    return out


def _groups(log: str, rows: dict[str, dict[str, Entry]]) -> list[Group]:
    columns = {c for row in rows.values() for c in row}
    seeds = [c for c in columns if "seed" in name_words(c)]
    if len(seeds) != 1:
        return []  # no seed, or several: which one repeats the run is not said
    seed = seeds[0]
    settings = sorted(c for c in columns if c != seed and all(_INTEGER.fullmatch(r[c].raw) for r in rows.values()
                                                              if c in r))  # fmt: skip
    measured = sorted(columns - set(settings) - {seed})
    by_key: dict[tuple[object, ...], list[dict[str, Entry]]] = {}
    for row in rows.values():
        if seed in row:
            label = next(iter(row.values())).label
            key = (label, tuple((c, row[c].raw) for c in settings if c in row))
            by_key.setdefault(key, []).append(row)
    out = []
    for members in by_key.values():
        if len(members) < 2 or len({Decimal(m[seed].raw) for m in members}) != len(members):
            continue  # one run, or a seed twice: not one run repeated
        for column in measured:
            if all(column in m and m[column].value.is_finite() for m in members):
                out.append(Group(log, column, tuple(m[column] for m in members)))
    return out


def _named(occ: Occurrence, words: frozenset[str]) -> bool:
    near = set(occ.context.near) | {w for w, weight in occ.context.words.items() if weight >= 0.3}
    return bool(near & words)


def pm_pairs(occs: Sequence[Occurrence]) -> dict[int, int]:
    """Return the numbers printed as `x \\pm y`: the index of each x's y."""
    order = sorted(range(len(occs)), key=lambda i: (str(occs[i].file), occs[i].number.start))
    out = {}
    for i, j in zip(order, order[1:], strict=False):
        a, b = occs[i], occs[j]
        if a.file == b.file and a.anchor[1].startswith(_PM) and b.anchor[0].endswith(_PM):
            out[i] = j
    return out


def derive_groups(occs: Sequence[Occurrence], decided: dict[int, Bound], index: EntryIndex) -> dict[int, Candidate]:
    """Return the seed-group aggregates of the numbers `decided` leaves open, by occurrence index."""
    wanted = [i for i, occ in enumerate(occs) if open_cell(decided.get(i)) and _named(occ, AGGREGATES["mean"])
              and _named(occ, REPEATS)]  # fmt: skip
    if not wanted:
        return {}
    groups = seed_groups(index)
    if not groups:
        return {}
    means = [(g, aggregate("mean", g.values())) for g in groups]
    pairs = pm_pairs(occs)
    spreads = set(pairs.values())
    out: dict[int, Candidate] = {}
    for i in wanted:
        if i in spreads or i in out:
            continue  # the `y` of `x \pm y` is a spread, never a mean
        occ = occs[i]
        j = pairs.get(i)
        if j is not None and not open_cell(decided.get(j)):
            continue  # `x \pm y` binds as a pair or not at all
        spread = occs[j] if j is not None else None
        fits: list[tuple[Group, Decimal, tuple[str, Decimal] | None]] = []
        for g, mean in means:
            if mean is None or not holds(occ.number.value, mean):
                continue
            if spread is None:
                fits.append((g, mean, None))
                continue
            for op in SPREADS:
                value = aggregate(op, g.values())
                if value is not None and holds(spread.number.value, value):
                    fits.append((g, mean, (op, value)))
                    break
        chance = len(groups) / choices(occ.number.value)
        if spread is not None:
            chance *= len(SPREADS) / choices(spread.number.value)
        if len(fits) != 1 or chance >= BOUND:
            continue
        g, mean, sd = fits[0]
        out[i] = derived_candidate(g.entries[0], mean, g.formula("mean"))
        if sd is not None and j is not None:
            out[j] = derived_candidate(g.entries[0], sd[1], g.formula(sd[0]))
    return out
