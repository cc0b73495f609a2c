"""Two bound numbers whose words name each other's entry: a swap already in the paper is no decision.

The binder decides each number on its own: `68.2\\% for ours, compared with the baseline at 91.4\\%` (the log
holding ours = 0.9142, baseline = 0.682) binds 68.2 to the baseline's entry and 91.4 to ours, by value, each
entry named somewhere in the sentence. A fresh `bind` then records the swap as the reviewed truth and every
later check passes it. A pair is *crossed* when both numbers stand in one sentence or table, their entries are
parallel (one field of two records of one log, or two fields of one record), and each number's own words name
the other's entry more strongly than its own (`binder.score`: nearer words weigh more; a cell's row label and
column header are its own words): the paper prints each entry's value where the other is named. Neither is
bound (`how` is `swapped`): `check` lists both as `unattested_number`, saying which place names the entry the
number prints, and `bind` proposes nothing for them. The author fixes the paper, or names the entry beside the
number, or records it by hand (`--manual`).
"""

from __future__ import annotations

from .binder import Bound, Occurrence, col_key, score

SWAPPED = "swapped"
#: how much more strongly a number's words must name the other entry than its own (a score is a sum of weights)
MARGIN = 0.05
#: numbers of one sentence or table compared pairwise at most (a table of thousands of cells is left alone)
MAX_GROUP = 400


def _parallel(a: Bound, b: Bound) -> bool:
    x, y = a.best.entry, b.best.entry
    if x.log != y.log or (x.row, x.column) == (y.row, y.column):
        return False
    return (x.row != y.row and col_key(x) == col_key(y)) or (x.row == y.row and x.column != y.column)


def _decided(b: Bound) -> bool:
    return b.how in ("unique", "context") and b.best.formula is None and b.best.transform != "derived"


def crossed(occs: list[Occurrence], decided: dict[int, Bound]) -> dict[int, int]:
    """Return occurrence index -> the index it is crossed with, for every crossed pair (see the module's doc)."""
    groups: dict[tuple[object, str], list[int]] = {}
    for i in sorted(decided):
        if _decided(decided[i]):
            occ = occs[i]
            groups.setdefault((occ.file, occ.context.group), []).append(i)
    out: dict[int, int] = {}
    for members in groups.values():
        if len(members) > MAX_GROUP:
            continue
        for k, i in enumerate(members):
            for j in members[k + 1 :]:
                a, b = decided[i], decided[j]
                if i in out or j in out or not _parallel(a, b):
                    continue
                x, y = a.best.entry, b.best.entry
                own_a, other_a = score(a.occurrence.context, x), score(a.occurrence.context, y)
                own_b, other_b = score(b.occurrence.context, y), score(b.occurrence.context, x)
                if other_a > own_a + MARGIN and other_b > own_b + MARGIN:
                    out[i], out[j] = j, i
    return out


def mark_swaps(occs: list[Occurrence], decided: dict[int, Bound]) -> dict[int, int]:
    """Mark each crossed pair of `decided` as `swapped` (no decision), in place; return the pairs."""
    pairs = crossed(occs, decided)
    for i in pairs:
        bound = decided[i]
        decided[i] = Bound(bound.occurrence, bound.best, [], SWAPPED, bound.evidence)
    return pairs
