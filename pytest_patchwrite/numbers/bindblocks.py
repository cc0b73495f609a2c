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
from pathlib import Path

from .binder import Bound, Candidate, Occurrence, col_key


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
    """Move a table cell to the log record most cells of its LaTeX row bind to, when an entry of it with evidence
    fits."""
    rows: dict[tuple[Path, int, int], list[int]] = {}
    for i, bound in decided.items():
        cell = occs[i].context.cell
        if cell is not None and bound.best.formula is None and bound.how not in ("kept", "ambiguous"):
            rows.setdefault((occs[i].file, cell[0], cell[1]), []).append(i)
    for members in rows.values():
        if len(members) < 3:
            continue
        keys = Counter(_record(decided[i].best) for i in members)
        top, count = keys.most_common(1)[0]
        if count * 2 <= len(members):
            continue
        for i in members:
            bound = decided[i]
            if _record(bound.best) == top:
                continue
            other = next((c for c in ranked[i] if _record(c) == top and c.evidence), None)
            if other is not None:
                decided[i] = Bound(bound.occurrence, other, [], "context", other.evidence)
