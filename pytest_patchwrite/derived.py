"""Derived numbers: a difference, sum, ratio or relative change of numbers bound beside it, or a log column's mean.

A derived number binds only when exactly one formula over its neighbours (the other bound
numbers of its sentence, or of its table row or column) or over the logs' column means fits
it; the formula is recorded with the entries it uses, so the lock recomputes it from the logs.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal, DivisionByZero, InvalidOperation, localcontext

from .binder import Bound, Candidate, EntryIndex, Occurrence, apply, holds, transforms
from .logentries import Entry

OPS = ("difference", "sum", "ratio", "relative_change")
SYMBOL = {"difference": "-", "sum": "+", "ratio": "/"}


def compute(op: str, a: Decimal, b: Decimal, power: int = 0) -> Decimal | None:
    """Return `a op b` (relative change: (a - b) / b, times 10**power), None when undefined."""
    with localcontext() as ctx:
        ctx.prec = 28
        try:
            if op == "difference":
                return a - b
            if op == "sum":
                return a + b
            if op == "ratio":
                return a / b
            if op == "relative_change":
                return (a - b) / b * (Decimal(10) ** power)
        except (DivisionByZero, InvalidOperation):
            return None
    return None


def rounded(value: Decimal, places: int) -> Decimal:
    """Return `value` rounded to the exponent `places` (how a neighbour prints it)."""
    with localcontext() as ctx:
        ctx.prec = 60
        return value.quantize(Decimal((0, (1,), places)))


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
    if op == "mean":
        return [values[0][0]] if values else []
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
    """Return a formula as people read it: `ours.acc - baseline.acc`, `mean(column acc)`."""
    operands = formula.get("operands") or []
    assert isinstance(operands, list)
    names = [str(o["at"]) for o in operands]
    op = str(formula.get("op"))
    if op == "mean":
        return names[0] if names else "mean"
    if op == "relative_change" and len(names) == 2:
        scaled = " * 100" if formula.get("power") == 2 else ""
        return f"({names[0]} - {names[1]}) / {names[1]}{scaled}"
    return f" {SYMBOL.get(op, op)} ".join(names)


def _operand(bound: Bound) -> dict[str, object]:
    places = bound.occurrence.number.value.as_tuple().exponent
    return {"log": bound.best.entry.log, "at": bound.best.entry.at, "transform": bound.best.transform,
            "places": places if isinstance(places, int) else None}  # fmt: skip


def derive(occ: Occurrence, neighbours: list[Bound], index: EntryIndex) -> Candidate | None:
    """Return the one derived candidate that fits an occurrence, None when none or several do."""
    printed = occ.number.value
    if len(printed.as_tuple().digits) <= 2:
        return None  # a formula fits a one- or two-digit number by chance too often
    found: dict[tuple[object, ...], Candidate] = {}
    usable = [b for b in neighbours if b.how != "ambiguous" and b.best.formula is None and b.occurrence is not occ]
    powers = [0, 2] if occ.context.percent else [0]
    for i, a in enumerate(usable):
        for j, b in enumerate(usable):
            if i == j or a.best.key == b.best.key:
                continue
            for op in OPS:
                if op == "sum" and j < i:
                    continue
                for power in powers if op == "relative_change" else [0]:
                    pa, pb = _operand(a), _operand(b)
                    results = [compute(op, a.best.value, b.best.value, power)]
                    if isinstance(pa["places"], int) and isinstance(pb["places"], int):
                        results.append(compute(op, rounded(a.best.value, pa["places"]),
                                               rounded(b.best.value, pb["places"]), power))  # fmt: skip
                    hit = next((r for r in results if r is not None and r != 0 and holds(printed, r)), None)
                    if hit is None:
                        continue
                    formula: dict[str, object] = {"op": op, "operands": [pa, pb]}
                    if op == "relative_change":
                        formula["power"] = power
                    key = (op, a.best.key, b.best.key)
                    found.setdefault(key, _derived(a.best.entry, hit, formula))
    for mean in index.means():
        for transform, tentative in transforms(occ):
            if tentative:
                continue
            value = apply(transform, Decimal(mean.raw))
            if value is not None and holds(printed, value):
                formula = {"op": "mean", "operands": [{"log": mean.log, "at": mean.at, "transform": transform}]}
                found.setdefault(("mean", str(mean.log), mean.at, transform), _derived(mean, value, formula))
    return next(iter(found.values())) if len(found) == 1 else None


def _derived(entry: Entry, value: Decimal, formula: dict[str, object]) -> Candidate:
    return Candidate(entry, "derived", value, 0.0, False, formula)
