"""A LaTeX table mapped as a block onto one log table: the cells of one row from one record, of one column from one
field (or transposed: a LaTeX column per record).

A cell has block evidence when another cell of its LaTeX row fits an entry of the same log record
and another cell of its LaTeX column fits an entry of the same log field (under the same
transform), in either orientation. An x100 reading of a cell not marked as a percentage stands
only when its whole LaTeX column aligns with one log column in [0, 1]. Once decided, a cell that
went to another record than most cells of its LaTeX row moves to that record, when an entry of it
with evidence fits.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from pathlib import Path

from .binder import Bound, Candidate, Occurrence, col_key

#: evidence strengths closer than this are a tie
TIE = 0.05
#: what block evidence adds to a candidate's strength
BLOCK = 0.6


def strength(cand: Candidate) -> float:
    """Return how strongly the context and the table's block speak for a candidate."""
    return round(cand.by_field + cand.by_row + (BLOCK if cand.block else 0.0), 4)


def mirrors(a: Candidate, b: Candidate) -> bool:
    """Return whether two candidates are one value logged twice: other logs, the same field name and transform,
    and values equal at the coarser of their two written precisions (0.3392 and 0.3391959798994975)."""
    if a.entry.log == b.entry.log or a.transform != b.transform or col_key(a.entry).lower() != col_key(b.entry).lower():
        return False
    x, y = a.entry.value, b.entry.value
    exponent = max(x.as_tuple().exponent, y.as_tuple().exponent)  # type: ignore[type-var]
    if not isinstance(exponent, int):
        return x == y
    quantum = Decimal((0, (1,), exponent))
    try:
        return x.quantize(quantum, ROUND_HALF_EVEN) == y.quantize(quantum, ROUND_HALF_EVEN)
    except InvalidOperation:
        return False


def _field(c: Candidate) -> object:
    return (str(c.entry.log), col_key(c.entry), c.transform)


def _record(c: Candidate) -> object:
    return (str(c.entry.log), c.entry.row)


def _votes(cells: list[int], ranked: dict[int, list[Candidate]], key: Callable[[Candidate], object]) -> Counter:
    votes: Counter = Counter()
    for i in cells:
        votes.update({key(c) for c in ranked[i]})
    return votes


def align_blocks(occs: list[Occurrence], ranked: dict[int, list[Candidate]]) -> None:
    """Mark the table cells whose candidates map rows and columns of one log table consistently; settle x100."""
    tables: dict[tuple[Path, int], list[int]] = {}
    for i, occ in enumerate(occs):
        if occ.context.cell is not None and ranked.get(i):
            tables.setdefault((occ.file, occ.context.cell[0]), []).append(i)
    for members in tables.values():
        by_col: dict[int, list[int]] = {}
        by_row: dict[int, list[int]] = {}
        for i in members:
            _, row, column = occs[i].context.cell  # type: ignore[misc]
            by_col.setdefault(column, []).append(i)
            by_row.setdefault(row, []).append(i)
        col_fields = {c: _votes(cells, ranked, _field) for c, cells in by_col.items()}
        col_records = {c: _votes(cells, ranked, _record) for c, cells in by_col.items()}
        row_fields = {r: _votes(cells, ranked, _field) for r, cells in by_row.items()}
        row_records = {r: _votes(cells, ranked, _record) for r, cells in by_row.items()}
        for i in members:
            _, row, column = occs[i].context.cell  # type: ignore[misc]
            n_col = len(by_col[column])
            kept = []
            for cand in ranked[i]:
                field, record = _field(cand), _record(cand)
                if cand.tentative and (
                    n_col < 2 or col_fields[column][field] < n_col or not 0 <= cand.entry.value <= 1
                ):
                    continue  # x100 without a percent mark needs the whole column in [0, 1] to align
                cand.tentative = False
                straight = col_fields[column][field] >= 2 and row_records[row][record] >= 2
                transposed = col_records[column][record] >= 2 and row_fields[row][field] >= 2
                cand.block = (straight or transposed) and not occs[i].context.axis
                kept.append(cand)
            ranked[i] = kept


def settle_rows(occs: list[Occurrence], decided: dict[int, Bound], ranked: dict[int, list[Candidate]]) -> None:
    """Map each LaTeX row onto the log record most of its cells bind to: move a cell bound elsewhere to that record
    when an entry of it with evidence fits, settle an ambiguous cell whose alternatives hold exactly one entry of it,
    and bind an undecided cell to the entry of it whose field its header names (the row's mapping is the evidence)."""
    from .bindrules import NAMES

    rows: dict[tuple[Path, int, int], list[int]] = {}
    for i, occ in enumerate(occs):
        if occ.context.cell is not None and (i in decided or ranked.get(i)):
            rows.setdefault((occ.file, occ.context.cell[0], occ.context.cell[1]), []).append(i)
    for members in rows.values():
        firm = [i for i in members if i in decided and _firm(decided[i])]
        if len(firm) < 2:
            continue
        keys = Counter(_record(decided[i].best) for i in firm)
        top, count = keys.most_common(1)[0]
        if count < 2 or count * 2 <= len(firm):
            continue
        for i in members:
            bound = decided.get(i)
            if bound is not None and bound.how == "ambiguous":
                tied = [c for c in ranked.get(i, []) if c.evidence and strength(bound.best) - strength(c) < TIE]
                mine = [c for c in _distinct_keys(tied) if _record(c) == top]
                if len(mine) == 1:
                    decided[i] = Bound(bound.occurrence, mine[0], [], "context", mine[0].evidence or "block")
                continue
            if bound is None:
                named = [c for c in ranked.get(i, []) if _record(c) == top and not c.tentative and c.by_field >= NAMES]
                if len(named) == 1 and not occs[i].context.axis:
                    named[0].evidence = "block"
                    decided[i] = Bound(occs[i], named[0], [], "context", "block")
                continue
            if not _firm(bound) or _record(bound.best) == top or len(members) < 3:
                continue
            other = next((c for c in ranked[i] if _record(c) == top and c.evidence), None)
            if other is not None:
                decided[i] = Bound(bound.occurrence, other, [], "context", other.evidence)


def _firm(bound: Bound) -> bool:
    """Return whether a decision maps its cell onto a record: one entry, not derived, not kept from the file."""
    return bound.best.formula is None and bound.how not in ("kept", "ambiguous", "derived")


def _distinct_keys(cands: list[Candidate]) -> list[Candidate]:
    seen: set[tuple[str, str]] = set()
    out = []
    for c in cands:
        if (str(c.entry.log), c.entry.at) not in seen:
            seen.add((str(c.entry.log), c.entry.at))
            out.append(c)
    return out
