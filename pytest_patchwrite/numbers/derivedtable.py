"""Derived table columns: a column whose header names an operation (`Speedup`, `Gap`, `Gain`, `Rel. impr.`) and
whose cells are one formula over bound cells, the same formula in every row.

A template is one way a column's cells could be computed: the operation of two cells of the row (`col A - col B`),
or of the row's cell against a reference row's cell of one column (`Baseline's Align. - this row's Align.`,
`Full context's Wall / this row's Wall`; a reference row must print the operation's identity in the column, `1.00x`
or `0.000`, or leave it empty). A template binds the column's cells it fits only when it fits at least two of them,
contradicts none whose operands are bound, and the chance that some template fits that many cells by arithmetic
alone stays below `chance.BOUND`: templates tried x the product over the fitted cells of (values a template takes at
a cell / numbers of that cell's printed form). One template must remain; its operands are cells bound on evidence.
"""

from __future__ import annotations

from decimal import Decimal
from itertools import permutations

from ..tex.texwords import words_of
from .binder import Bound, Candidate, Occurrence, holds
from .chance import BOUND, choices
from .derived import compute, derived_candidate, operand_of, rounded

#: the words of a column header that name each operation
HEADER_WORDS = {
    "ratio": frozenset("speedup speed-up ratio times fold x faster slower compression reduction".split()),
    "difference": frozenset("gap delta diff difference change gain drop improvement impr deficit margin".split()),
    "relative_change": frozenset("relative rel change improvement impr gain increase".split()),
    "relative_decrease": frozenset("relative rel drop reduction decrease".split()),
}
#: a speedup's words, and the words of a column of times: a speedup is the ratio of two times
SPEED = frozenset("speedup speed-up faster slower".split())
TIME = frozenset("time times wall seconds second sec latency runtime duration ms hours minutes".split())
#: what a reference row prints in a column of each operation
IDENTITY = {"ratio": Decimal(1), "difference": Decimal(0), "relative_change": Decimal(0),
            "relative_decrease": Decimal(0)}  # fmt: skip

Cell = tuple[int, int]  # (row, column)


class Table:
    """The numbers of one table by cell, and the bound ones among them usable as operands."""

    def __init__(self, members: list[int], occs: list[Occurrence], decided: dict[int, Bound]) -> None:
        self.occs = occs
        self.cells: dict[Cell, list[int]] = {}
        for i in members:
            cell = occs[i].context.cell
            assert cell is not None
            self.cells.setdefault((cell[1], cell[2]), []).append(i)
        self.bound: dict[Cell, Bound] = {}
        for place, numbers in self.cells.items():
            b = decided.get(numbers[0])
            if b is not None and b.how not in ("ambiguous", "derived") and b.best.formula is None and b.evidence:
                self.bound[place] = b
        self.rows = sorted({r for r, _ in self.cells})
        self.columns = sorted({c for _, c in self.cells})

    def header(self, column: int) -> set[str]:
        """Return the words of a column's header."""
        i = next(numbers[0] for (_, c), numbers in sorted(self.cells.items()) if c == column)
        return set(words_of(dict(self.occs[i].context.identity).get("column", "")))

    def prints_identity(self, row: int, column: int, op: str) -> bool:
        """Return whether a reference row prints the operation's identity in the column, or nothing."""
        numbers = self.cells.get((row, column), [])
        return all(self.occs[i].number.value == IDENTITY[op] for i in numbers)


def derive_columns(occs: list[Occurrence], decided: dict[int, Bound]) -> dict[int, Candidate]:
    """Return the derived candidates of table cells `decided` leaves open, by occurrence index."""
    tables: dict[tuple[object, int], list[int]] = {}
    for i, occ in enumerate(occs):
        if occ.context.cell is not None:
            tables.setdefault((occ.file, occ.context.cell[0]), []).append(i)
    out: dict[int, Candidate] = {}
    for members in tables.values():
        if not any(open_cell(decided.get(i)) for i in members):
            continue
        table = Table(members, occs, decided)
        for column in table.columns:
            out.update(_column(table, column, decided))
    return out


def _column(table: Table, column: int, decided: dict[int, Bound]) -> dict[int, Candidate]:
    words = table.header(column)
    ops = [op for op, named in HEADER_WORDS.items() if words & named]
    targets = [(r, numbers[0]) for (r, c), numbers in sorted(table.cells.items())
               if c == column and len(numbers) == 1 and open_cell(decided.get(numbers[0]))]  # fmt: skip
    if not ops or len(targets) < 2:
        return {}
    tried, accepted = 0, []
    for template in _templates(table, column, ops):
        fits, contradicted, probability = _fit(table, template, targets)
        if fits is None:
            continue
        tried += 1
        if not contradicted and len(fits) >= 2:
            accepted.append((fits, probability, template))
    accepted = [(fits, p, template) for fits, p, template in accepted if tried * p < BOUND]
    if len(accepted) > 1 and words & SPEED:  # a speedup is a ratio of times (a throughput's ratio says it too)
        accepted = [a for a in accepted if table.header(a[2][3]) & TIME] or accepted
    if len(accepted) != 1:
        return {}  # none, or several templates fit alike: abstain
    return accepted[0][0]


def open_cell(bound: Bound | None) -> bool:
    """Return whether a cell may be derived: undecided, or `ambiguous` among entries that fit its value alike (the
    column's one formula is evidence that no entry of equal value is)."""
    return bound is None or bound.how == "ambiguous"


def _templates(table: Table, column: int, ops: list[str]) -> list[tuple[str, int, object, int, int]]:
    """Return the templates of a column: (op, power, reference row or None, operand column(s) as (x, y))."""
    percent = any(table.occs[numbers[0]].context.percent for (_, c), numbers in table.cells.items() if c == column)
    powers = [0, 2] if percent else [0]
    others = [c for c in table.columns if c != column]
    out: list[tuple[str, int, object, int, int]] = []
    for op in ops:
        for power in powers if op != "difference" else [0]:
            for x, y in permutations(others, 2):  # two cells of the row
                out.append((op, power, None, x, y))
            for reference in table.rows:  # the row's cell against a reference row's, either way round
                if table.prints_identity(reference, column, op):
                    for c in others:
                        out.extend([(op, power, ("row first", reference), c, c),
                                    (op, power, ("reference first", reference), c, c)])  # fmt: skip
    return out


def _fit(
    table: Table, template: tuple[str, int, object, int, int], targets: list[tuple[int, int]]
) -> tuple[dict[int, Candidate] | None, bool, float]:
    """Return the cells a template fits (None when it has operands at no target), whether it contradicts a cell
    whose operands are bound, and the chance that it fits those cells by arithmetic alone."""
    op, power, reference, x, y = template
    fits: dict[int, Candidate] = {}
    seen, contradicted, probability = False, False, 1.0
    for row, i in targets:
        operands = _operands(table, row, reference, x, y)
        if operands is None:
            continue
        seen = True
        a, b = operands
        printed = table.occs[i].number.value
        values = _values(op, a, b, power)
        hit = next((v for v in values if holds(printed, v)), None)
        if hit is None:
            contradicted = True
            continue
        probability *= len(set(values)) / choices(printed)
        formula: dict[str, object] = {"op": op, "operands": [operand_of(a), operand_of(b)]}
        if power:
            formula["power"] = power
        fits[i] = derived_candidate(a.best.entry, hit, formula)
    return (fits if seen else None), contradicted, probability


def _operands(table: Table, row: int, reference: object, x: int, y: int) -> tuple[Bound, Bound] | None:
    if reference is None:
        a, b = table.bound.get((row, x)), table.bound.get((row, y))
    else:
        assert isinstance(reference, tuple)
        order, ref_row = reference
        if ref_row == row:
            return None
        mine, theirs = table.bound.get((row, x)), table.bound.get((ref_row, x))
        a, b = (mine, theirs) if order == "row first" else (theirs, mine)
    if a is None or b is None or a.best.key == b.best.key:
        return None
    return a, b


def _values(op: str, a: Bound, b: Bound, power: int) -> list[Decimal]:
    """Return what an operation of two bound cells gives: from their entries, and from them as printed."""
    pairs = [(a.best.value, b.best.value)]
    pa, pb = a.occurrence.number.value.as_tuple().exponent, b.occurrence.number.value.as_tuple().exponent
    if isinstance(pa, int) and isinstance(pb, int):
        pairs.append((rounded(a.best.value, pa), rounded(b.best.value, pb)))
    out = []
    for u, v in pairs:
        result = compute(op, u, v, power)
        if result is not None and result != 0:
            out.append(result)
    return out
