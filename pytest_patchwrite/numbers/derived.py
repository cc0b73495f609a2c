"""Derived numbers: a difference, sum, ratio or relative change of numbers bound beside it, or an aggregate of a log
column that the text names.

A derived number binds only on evidence, never on arithmetic alone: the operands are numbers of its
sentence or table row (or column) bound on evidence themselves, and its own words name the
operation (`points`, `improvement`, `relative`, `times`, a `Delta` header); an aggregate (mean,
median, min, max, std, sum of a log column) binds only when the context names the aggregate
(`mean`, `on average`, `median`, `in total`) and the column. Exactly one formula must fit; the
formula is recorded with the entries it uses, so the lock recomputes it from the logs.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Callable
from decimal import Decimal, DivisionByZero, InvalidOperation, Overflow, localcontext

from .binder import Bound, Candidate, EntryIndex, Occurrence, apply, col_key, holds, name_words, similar, transforms
from .chance import BOUND, Chance
from .logentries import Entry

OPS = ("difference", "sum", "ratio", "relative_change", "relative_decrease")
SYMBOL = {"difference": "-", "sum": "+", "ratio": "/"}
#: words that name each operation (a number's own words, or its sentence's near ones)
_CHANGE = """points point pp pts gain gains gained improvement improvements improves improved improving drop drops
dropped decrease decreases decreased increase increases increased reduction reduces reduced reducing higher lower
more fewer better worse gap delta difference differences outperforms outperform beats ahead behind exceeds above
below margin up down boost boosts change changes diff impr""".split()
_DECREASE = "drop drops dropped decrease decreases decreased reduction reduces reduced reducing lower fewer worse down"
OP_WORDS = {
    "difference": frozenset(_CHANGE),
    "relative_change": frozenset(_CHANGE + "relative relatively rel faster slower speedup".split()),
    "relative_decrease": frozenset(_DECREASE.split()),
    "ratio": frozenset(
        "times fold ratio speedup faster slower smaller larger compression share fraction proportion out".split()
    ),
    "sum": frozenset("total sum combined together altogether".split()),
}
#: words that name each aggregate of a log column
AGGREGATES = {
    "mean": frozenset("mean means average averages averaged avg mu".split()),
    "median": frozenset("median medians".split()),
    "min": frozenset("min minimum lowest smallest worst".split()),
    "max": frozenset("max maximum highest largest best peak".split()),
    "std": frozenset("std standard deviation sd stdev spread".split()),
    "total": frozenset("total sum overall altogether".split()),
}
#: the chance (`pair_chance`) at or above which a derived number is not bound: the number's words name the
#: operation and its operands are bound on evidence beside it, so the arithmetic is not the only evidence, but a
#: sentence of many bound numbers gives so many pairs that some pair fits a short number by luck
PAIR_BOUND = BOUND
#: every aggregate a formula may hold: those the words name, and a seed group's population deviation
#: (`derivedgroups`: `16.8 \pm 3.4` over five seeds prints whichever deviation the authors took)
FORMULA_AGGREGATES = frozenset(AGGREGATES) | {"pstd"}
#: aggregates that are one of the column's own values: named by the number's own words only (a caption's `best`
#: does not make a confidence interval's upper end its `max`)
EXTREMES = ("min", "max")
#: a column of at most this many held values may be aggregated with its rows listed as operands
SMALL_COLUMN = 100


def compute(op: str, a: Decimal, b: Decimal, power: int = 0) -> Decimal | None:
    """Return `a op b` (relative change: (a - b) / b, relative decrease: (b - a) / b, a drop from b to a printed as
    a positive number; times 10**power), None when undefined."""
    with localcontext() as ctx:
        ctx.prec = 28
        try:
            if op == "difference":
                return a - b
            if op == "sum":
                return a + b
            if op == "ratio":
                return a / b * (Decimal(10) ** power)  # a share: `312 of 2,010` as 15.5%
            if op == "relative_change":
                return (a - b) / b * (Decimal(10) ** power)
            if op == "relative_decrease":
                return (b - a) / b * (Decimal(10) ** power)
        except (DivisionByZero, InvalidOperation):
            return None
    return None


def rounded(value: Decimal, places: int) -> Decimal:
    """Return `value` rounded to the exponent `places` (how a neighbour prints it)."""
    with localcontext() as ctx:
        ctx.prec = 60
        return value.quantize(Decimal((0, (1,), places)))


def aggregate(op: str, values: list[Decimal]) -> Decimal | None:
    """Return an aggregate of a column's values (`mean`, `median`, `min`, `max`, `std`: the sample's, `pstd`: the
    population's, `total`)."""
    if not values:
        return None
    with localcontext() as ctx:
        ctx.prec = 28
        if op == "mean":
            return sum(values, Decimal(0)) / len(values)
        if op == "median":
            return statistics.median(values)
        if op == "min":
            return min(values)
        if op == "max":
            return max(values)
        if op == "total":
            return sum(values, Decimal(0))
        if op in ("std", "pstd") and len(values) >= 2:
            return _deviation(values, sample=op == "std")
    return None


def _deviation(values: list[Decimal], *, sample: bool) -> Decimal | None:
    """Return the standard deviation in decimal arithmetic of 60 digits (None when it overflows).

    Not `statistics.stdev`: its exact ratios of a cell such as `1e-999999999` are integers of a billion digits, an
    operation no deadline stops."""
    with localcontext() as ctx:
        ctx.prec = 60
        try:
            mean = sum(values, Decimal(0)) / len(values)
            squares = sum(((v - mean) ** 2 for v in values), Decimal(0))
            deviation = (squares / (len(values) - 1 if sample else len(values))).sqrt()
        except (InvalidOperation, Overflow):
            return None
    with localcontext() as ctx:
        ctx.prec = 28
        return +deviation


def formula_values(formula: dict[str, object], lookup: Callable[[str, str, str], Decimal | None]) -> list[Decimal]:
    """Return the values a formula takes over current entries: from the raw entries and from them as printed.

    `lookup(log, at, transform)` returns an entry's value under a transform, None when the log lacks it.
    """
    operands = formula.get("operands") or []
    assert isinstance(operands, list)
    values = []
    for operand in operands:
        value = lookup(str(operand["log"]), str(operand["at"]), str(operand.get("transform", "identity")))
        if value is None:
            return []
        values.append((value, operand.get("places")))
    op = str(formula.get("op"))
    if op == "mean" and len(values) == 1:
        return [values[0][0]]  # a column mean the log's reader computed: `mean(column acc)`
    if op in FORMULA_AGGREGATES:
        result = aggregate(op, [v for v, _ in values])
        return [] if result is None else [result]
    if len(values) != 2:
        return []
    power = int(formula.get("power", 0) or 0)  # type: ignore[call-overload]
    (a, pa), (b, pb) = values
    out = []
    for x, y in ((a, b), (rounded(a, pa) if isinstance(pa, int) else a, rounded(b, pb) if isinstance(pb, int) else b)):
        result = compute(op, x, y, power)
        if result is not None:
            out.append(result)
    return out


def describe(formula: dict[str, object]) -> str:
    """Return a formula as people read it: `ours.acc - baseline.acc`, `mean(column acc)`, `median(runs[*].acc)`."""
    operands = formula.get("operands") or []
    assert isinstance(operands, list)
    names = [str(o["at"]) for o in operands]
    op = str(formula.get("op"))
    if op == "mean" and len(names) == 1:
        return names[0]
    if op in FORMULA_AGGREGATES:
        return f"{op}({formula.get('column', ', '.join(names))})"
    if op == "relative_change" and len(names) == 2:
        scaled = " * 100" if formula.get("power") == 2 else ""
        return f"({names[0]} - {names[1]}) / {names[1]}{scaled}"
    if op == "relative_decrease" and len(names) == 2:
        scaled = " * 100" if formula.get("power") == 2 else ""
        return f"({names[1]} - {names[0]}) / {names[1]}{scaled}"
    return f" {SYMBOL.get(op, op)} ".join(names)


def operand_of(bound: Bound) -> dict[str, object]:
    places = bound.occurrence.number.value.as_tuple().exponent
    return {"log": bound.best.entry.log, "at": bound.best.entry.at, "transform": bound.best.transform,
            "places": places if isinstance(places, int) else None}  # fmt: skip


def _names(occ: Occurrence, words: frozenset[str]) -> bool:
    """Return whether a number's own or nearby words name one of `words`."""
    near = set(occ.context.near) | {w for w, weight in occ.context.words.items() if weight >= 0.3}
    return bool(near & words)


def _column_named(occ: Occurrence, column: str) -> bool:
    last = re.split(r"[.\[]", column.replace("[*]", "").replace("column ", ""))
    names = [w for part in last[-1:] for w in name_words(part)]
    return any(similar(c, n) for n in names for c in occ.context.words)


def derive(occ: Occurrence, neighbours: list[Bound], index: EntryIndex) -> Candidate | None:
    """Return the one derived candidate that fits an occurrence on evidence, None when none or several do, or when
    so many operand pairs compete that one would fit a number of its printed form by chance (`pair_chance`)."""
    printed = occ.number.value
    found: dict[tuple[object, ...], Candidate] = {}
    usable = [b for b in neighbours if b.how not in ("ambiguous", "derived") and b.best.formula is None
              and b.occurrence is not occ and b.evidence]  # fmt: skip
    powers = [0, 2] if occ.context.percent else [0]
    tried: list[Decimal] = []  # every value the named operations take over the pairs: the chance a fit is luck
    for op in OPS:
        if not _names(occ, OP_WORDS[op]):
            continue
        for i, a in enumerate(usable):
            for j, b in enumerate(usable):
                if i == j or a.best.key == b.best.key or (op == "sum" and j < i):
                    continue
                for power in powers if op in ("relative_change", "relative_decrease", "ratio") else [0]:
                    if not (alike(a, b) or op == "ratio" and power == 2 and share(a, b)):
                        continue
                    results = _results(op, a, b, power)
                    tried.extend(results)
                    hit = next((r for r in results if holds(printed, r)), None)
                    if hit is None:
                        continue
                    formula: dict[str, object] = {"op": op, "operands": [operand_of(a), operand_of(b)]}
                    if power:
                        formula["power"] = power
                    found.setdefault((op, a.best.key, b.best.key), derived_candidate(a.best.entry, hit, formula))
    if found and pair_chance(printed, tried) >= PAIR_BOUND:
        found = {}  # so many pairs compete that a number of this printed form fits one by arithmetic alone
    tried = []  # the aggregates of every column the words name: a short number fits one of many by chance
    fitted: dict[tuple[object, ...], Candidate] = {}
    for op, words in AGGREGATES.items():
        if _names(occ, words) and (op not in EXTREMES or set(occ.context.near) & words):
            for key, candidate in _aggregates(occ, op, index, tried):
                fitted.setdefault(key, candidate)
    if fitted and pair_chance(printed, tried) < PAIR_BOUND:
        found.update(fitted)
    return next(iter(found.values())) if len(found) == 1 else None


def alike(a: Bound, b: Bound) -> bool:
    """Return whether two bound numbers report one quantity (like is compared with like: the same field of two
    records or rows, `ours.acc` and `baseline.acc`, a CSV column's two rows)."""
    return col_key(a.best.entry) == col_key(b.best.entry) and a.best.transform == b.best.transform


def share(part: Bound, whole: Bound) -> bool:
    """Return whether a percentage may be `part` of `whole`: two counts, the part the smaller (`312 of 2,010`)."""
    a, b = part.best.value, whole.best.value
    return a == a.to_integral_value() and b == b.to_integral_value() and 0 < a < b


def pair_chance(printed: Decimal, values: list[Decimal]) -> float:
    """Return the chance that a random number of `printed`'s form equals one of `values` at its precision (the
    values an operation named by the words takes over every pair of the numbers bound beside it)."""
    floats = sorted(f for v in values if math.isfinite(f := float(v)))
    return Chance(floats).of(printed, [0])


def _results(op: str, a: Bound, b: Bound, power: int) -> list[Decimal]:
    """Return `a op b` from the entries and from them as printed (distinct, never zero)."""
    pa, pb = operand_of(a), operand_of(b)
    results = [compute(op, a.best.value, b.best.value, power)]
    if isinstance(pa["places"], int) and isinstance(pb["places"], int):
        results.append(compute(op, rounded(a.best.value, pa["places"]), rounded(b.best.value, pb["places"]), power))
    return list(dict.fromkeys(r for r in results if r is not None and r != 0))


def _aggregates(
    occ: Occurrence, op: str, index: EntryIndex, tried: list[Decimal]
) -> list[tuple[tuple[object, ...], Candidate]]:
    """Return the aggregates `op` of the logs' columns that fit a number whose context names the column (every
    aggregate computed is added to `tried`)."""
    out: list[tuple[tuple[object, ...], Candidate]] = []
    printed = occ.number.value
    formula: dict[str, object]
    if op == "mean":
        for mean in index.means():
            if not _column_named(occ, mean.column):
                continue
            try:
                mean_value = Decimal(mean.raw)
            except ArithmeticError:
                continue
            if not mean_value.is_finite():
                continue  # a column holding NaN has no mean
            for transform, tentative in transforms(occ):
                value = None if tentative else apply(transform, mean_value)
                tried.extend([] if value is None else [value])
                if value is not None and holds(printed, value):
                    formula = {"op": "mean", "operands": [{"log": mean.log, "at": mean.at, "transform": transform}]}
                    out.append((("mean", str(mean.log), mean.at, transform), derived_candidate(mean, value, formula)))
    for column, entries in index.columns(SMALL_COLUMN).items() if op != "mean" else ():
        if not _column_named(occ, column[1]):
            continue
        values = [e.value for e in entries]
        if not all(v.is_finite() for v in values):
            continue
        result = aggregate(op, values)
        for transform, tentative in transforms(occ):
            value = None if tentative or result is None else apply(transform, result)
            tried.extend([] if value is None else [value])
            if value is not None and holds(printed, value):
                operands = [{"log": e.log, "at": e.at, "transform": transform} for e in entries]
                formula = {"op": op, "column": column[1], "operands": operands}
                out.append(((op, *column, transform), derived_candidate(entries[0], value, formula)))
    return out


def derived_candidate(entry: Entry, value: Decimal, formula: dict[str, object]) -> Candidate:
    return Candidate(entry, "derived", value, 0.0, False, formula, evidence="derived")
