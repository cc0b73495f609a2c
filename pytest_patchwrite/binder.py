"""The binder: each empirical number of a manuscript tied to the one log entry it reports.

Candidates are the entries whose value, under a transform the printed form allows, rounds to
the printed number at its precision: `identity`; `percent` (x100) only when the number is printed
as a percentage, its column header or caption says percent, or a whole LaTeX column aligns with a
log column in [0, 1]; `scale:<factor>` from a unit suffix or column header (`(M)`, `ms`). They are
ranked by how the number's context (sentence words; row label, column header, caption) names the
entry (key path, column name, row label, file name); table cells that map rows and columns of a
log consistently bind as a block. A value only single rows of a big log column hold, with nothing in
the context naming the row, is a coincidence, not a candidate; so is an entry that fits a number of
one or two significant digits (`0.8`, `0.10`) without its context naming it. What stays unbound may be `derived`
(a difference, sum, ratio or relative change of numbers bound beside it, or a log column's mean)
when exactly one formula fits.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal, localcontext
from pathlib import Path

from .latex import Number, Scan
from .logentries import Entry, LogData, is_structured
from .numeric import _Query, shift
from .texcontext import Context, Layout

#: a log column with more values than this binds a single row only when the context names that row
BIG_COLUMN = 50
#: scores closer than this are a tie
TIE = 0.05
#: a number printed with at most this many significant digits (0.8, 0.10, 50\%) rounds from so many logged
#: values that a candidate needs its context to name it (at least NAMED, and its own key) to be more than a
#: coincidence
FEW_DIGITS = 2
NAMED = 0.5
_SPLIT = re.compile(r"[A-Z]+(?![a-z])\d*|[A-Z]?[a-z]+\d*")
_FACTORS = {"identity": 0, "percent": 2}


def factor_of(transform: str) -> int | None:
    """Return the power of ten a transform multiplies by (`percent` 2, `scale:1e-6` -6), None for others."""
    if transform in _FACTORS:
        return _FACTORS[transform]
    if transform.startswith("scale:1e"):
        try:
            return int(transform[len("scale:1e") :])
        except ValueError:
            return None
    return None


def apply(transform: str, value: Decimal) -> Decimal | None:
    """Return `value` under a power-of-ten transform (exact), None for an unknown transform."""
    power = factor_of(transform)
    return None if power is None else shift(value, power)


def prints_as(value: Decimal, printed: Decimal) -> str:
    """Return how `value` prints at the precision of `printed` (`0.905` at `91.4`'s precision after x100: 90.5)."""
    exponent = printed.as_tuple().exponent
    with localcontext() as ctx:
        ctx.prec = max(28, len(value.as_tuple().digits) + 2)
        return str(value.quantize(Decimal((0, (1,), exponent)))) if isinstance(exponent, int) else str(value)


def holds(printed: Decimal, value: Decimal) -> bool:
    """Return whether `value` rounds to `printed` at its printed precision."""
    return _Query(printed).holds(value)


def name_words(name: str) -> list[str]:
    """Return the lower-case words of a key, column or file name (`clean_acc` -> clean, acc; `testAcc` -> test, acc)."""
    return [w.lower() for w in _SPLIT.findall(re.sub(r"\[\d+\]|\[\*\]", " ", name)) if len(w) > 1]


def _similar(a: str, b: str) -> float:
    if a == b:
        return 1.0
    if a.rstrip("s") == b.rstrip("s"):
        return 0.9
    if min(len(a), len(b)) >= 3 and (a.startswith(b) or b.startswith(a)):
        return 0.8
    return 0.0


@dataclass
class Occurrence:
    """One empirical number of the manuscript where it stands."""

    file: Path
    number: Number
    context: Context
    anchor: tuple[str, str]

    @property
    def token(self) -> str:
        """Return the number as printed."""
        return self.number.text


@dataclass
class Candidate:
    """One log entry that fits an occurrence, under a transform, with its score."""

    entry: Entry
    transform: str
    value: Decimal  # the entry's value under the transform
    score: float = 0.0
    tentative: bool = False  # percent on a cell not marked percent: needs its whole column to align
    formula: dict[str, object] | None = None
    weak: bool = False  # a few-digit number's entry its context does not name: needs its table row to agree

    @property
    def key(self) -> tuple[str, str, str]:
        """Return what identifies the candidate: log, locator, transform."""
        return str(self.entry.log), self.entry.at, self.transform


@dataclass
class Bound:
    """A decision: the best candidate, the tied ones, and how it was reached."""

    occurrence: Occurrence
    best: Candidate
    alternatives: list[Candidate] = field(default_factory=list)
    how: str = "unique"  # unique, context, ambiguous, derived, kept


@dataclass
class BindResult:
    """Every occurrence of a manuscript, bound or unattested."""

    bound: list[Bound] = field(default_factory=list)
    unattested: list[Occurrence] = field(default_factory=list)
    coincidental: int = 0  # occurrences whose only value matches were single rows of big log columns

    def counts(self) -> dict[str, int]:
        """Return how many numbers were bound uniquely, by context, ambiguously, derived, kept, or not at all."""
        how = Counter(b.how for b in self.bound)
        return {
            "numbers": len(self.bound) + len(self.unattested),
            "bound": len(self.bound),
            "unique": how["unique"],
            "context": how["context"],
            "ambiguous": how["ambiguous"],
            "derived": how["derived"],
            "kept": how["kept"],
            "unattested": len(self.unattested),
        }


def is_empirical(n: Number, policy: str) -> bool:
    """Return whether the number policy checks this number (as the pool rule does)."""
    return policy == "all" or n.decimals > 0 or n.percent or n.siunitx


def occurrences(scans: list[Scan], texts: dict[Path, str], policy: str, allowed: set[Decimal]) -> list[Occurrence]:
    """Return the empirical numbers of the scanned files with their contexts and anchors."""
    out = []
    for s in scans:
        path = Path(s.file)
        layout = Layout(texts[path])
        for n in s.numbers:
            if not is_empirical(n, policy) or n.value in allowed or s.is_suppressed(n.line, "number") or n.start < 0:
                continue
            out.append(Occurrence(path, n, layout.context(n), layout.anchor(n)))
    return out


def transforms(occ: Occurrence) -> list[tuple[str, bool]]:
    """Return the transforms an occurrence allows, each with whether it is tentative."""
    found = [("identity", False)]
    if occ.context.percent:
        found.append(("percent", False))
    elif occ.context.cell is not None and 0 <= occ.number.value <= 100:
        found.append(("percent", True))
    found.extend((scale, False) for scale in occ.context.scales)
    return found


def prefilter(occs: list[Occurrence]) -> tuple[list[float], object]:
    """Return the sorted bounds of the value intervals a log cell must fall in to fit some occurrence, and a key.

    A cell fits when `bisect_right(bounds, value)` is odd; the intervals are a little wider than the
    exact ones (the binder confirms every kept cell with exact decimals), so a big log is filtered
    by one C-level bisect per cell.
    """
    intervals: list[tuple[float, float]] = []
    for occ in occs:
        sign, digits, exponent = occ.number.value.as_tuple()
        if not isinstance(exponent, int) or len(digits) > 15:
            continue
        integer = int("".join(map(str, digits)) or "0") * (-1 if sign else 1)
        for transform, _ in transforms(occ):
            power = factor_of(transform)
            if power is None:
                continue
            mult = 10.0 ** (power - exponent)
            low, high = (integer - 0.5) / mult, (integer + 0.5) / mult
            slack = 1e-9 * max(abs(low), abs(high), 1e-300)
            intervals.append((low - slack, high + slack))
    intervals.sort()
    merged: list[list[float]] = []
    for low, high in intervals:
        if merged and low <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], high)
        else:
            merged.append([low, high])
    bounds = [x for pair in merged for x in pair]
    return bounds, tuple(bounds)


class EntryIndex:
    """The entries of every log, by the integer they round to at each precision asked for."""

    def __init__(self, logs: list[LogData]) -> None:
        self.logs = logs
        self._entries = [e for log in logs for e in log.entries]
        self._floats: list[tuple[float, Entry]] = []
        for e in self._entries:
            try:
                f = float(e.raw)
            except ValueError:
                continue
            if math.isfinite(f):
                self._floats.append((f, e))
        self._floats.sort(key=lambda t: t[0])
        self._keys = [f for f, _ in self._floats]
        self.structured = {log.path: is_structured(log.path) for log in logs}

    def fitting(self, printed: Decimal, power: int) -> list[tuple[Entry, Decimal]]:
        """Return the entries whose value times 10**power rounds to `printed`, with that value."""
        import bisect

        target = shift(printed, -power)
        if target is None:
            return []
        low, high = _Query(target).float_window()
        out = []
        start = bisect.bisect_left(self._keys, low)
        for position in range(start, len(self._keys)):
            if self._keys[position] > high:
                break
            entry = self._floats[position][1]
            try:
                value = apply_power(Decimal(entry.raw), power)
            except ArithmeticError:
                continue
            if value is not None and holds(printed, value):
                out.append((entry, value))
        return out

    def means(self) -> list[Entry]:
        """Return every column mean of the logs."""
        return [m for log in self.logs for m in log.means]


def apply_power(value: Decimal, power: int) -> Decimal | None:
    """Return value * 10**power exactly."""
    return shift(value, power)


def entry_words(entry: Entry) -> dict[str, float]:
    """Return the words that name an entry, weighted (its key path or column and row label; its file name less)."""
    words: dict[str, float] = {}
    names = [entry.at] if entry.kind == "leaf" else [entry.column]
    for name in names:
        for w in name_words(name):
            words[w] = 1.0
    for w in name_words(entry.label.replace(" ", "_")):
        words.setdefault(w, 1.0)
    for w in name_words(entry.log.stem):
        words.setdefault(w, 0.3)
    return words


def score(context: Context, entry: Entry) -> float:
    """Return how well a number's context names an entry."""
    total = 0.0
    for word, weight in entry_words(entry).items():
        best = 0.0
        for c, cw in context.words.items():
            s = _similar(c, word)
            if s:
                best = max(best, s * cw)
        total += weight * best
    return round(total, 4)


def _label_named(context: Context, entry: Entry) -> bool:
    label = name_words(entry.label.replace(" ", "_"))
    return any(_similar(c, w) for w in label for c in context.words)


def _leaf_named(context: Context, entry: Entry) -> bool:
    """Return whether the context names the entry's own key or column (the metric, not only the run or model)."""
    leaf = name_words(col_key(entry)) + (name_words(entry.column) if entry.kind == "mean" else [])
    return any(_similar(c, w) for w in leaf for c in context.words)


def candidates(occ: Occurrence, index: EntryIndex) -> tuple[list[Candidate], bool]:
    """Return the candidates of one occurrence, best first, and whether big-column coincidences were dropped."""
    found: dict[tuple[str, str, str], Candidate] = {}
    coincidences = False
    few = len(occ.number.value.as_tuple().digits) <= FEW_DIGITS and occ.number.value != 0  # 10.0 has three
    for transform, tentative in transforms(occ):
        power = factor_of(transform)
        assert power is not None
        for entry, value in index.fitting(occ.number.value, power):
            if entry.rows > BIG_COLUMN and not _label_named(occ.context, entry):
                coincidences = True
                continue
            cand = Candidate(entry, transform, value, score(occ.context, entry), tentative)
            if few and (cand.score < NAMED or not _leaf_named(occ.context, entry)):
                if occ.context.cell is None:
                    coincidences = True
                    continue
                cand.weak = True  # a table cell may still be named by the row the other cells bind to
            found.setdefault(cand.key, cand)
    return rank(list(found.values())), coincidences


def rank(cands: list[Candidate]) -> list[Candidate]:
    """Return candidates best first: score, then small columns, then the order of the logs."""
    return sorted(cands, key=lambda c: (-c.score, c.tentative, c.entry.rows, c.entry.kind != "leaf"))


def decide(occ: Occurrence, cands: list[Candidate]) -> Bound | None:
    """Return the binding of one occurrence from its ranked candidates, None when there is none."""
    cands = [c for c in cands if not c.weak]
    cands = [c for c in cands if not c.tentative] or cands
    if not cands:
        return None
    if len(cands) == 1:
        return Bound(occ, cands[0], [], "unique")
    best, second = cands[0], cands[1]
    if best.score - second.score >= TIE:
        return Bound(occ, best, [], "context")
    ties = [c for c in cands[1:] if best.score - c.score < TIE]
    return Bound(occ, best, ties[:5], "ambiguous")


def col_key(entry: Entry) -> str:
    """Return the column of an entry's table, as block alignment compares it (a JSON leaf key, a CSV column)."""
    if entry.kind == "leaf":
        return re.split(r"[.\[]", entry.at.rstrip("]"))[-1].strip('"')
    return entry.column


def align_blocks(occs: list[Occurrence], ranked: dict[int, list[Candidate]]) -> None:
    """Re-score table cells so rows and columns map one log table consistently; settle tentative percent."""
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
        col_votes = {
            c: _votes(cells, ranked, lambda x: (str(x.entry.log), col_key(x.entry), x.transform))
            for c, cells in by_col.items()
        }
        row_votes = {r: _votes(cells, ranked, lambda x: (str(x.entry.log), x.entry.row)) for r, cells in by_row.items()}
        for i in members:
            _, row, column = occs[i].context.cell  # type: ignore[misc]
            n_col, n_row = len(by_col[column]), len(by_row[row])
            kept = []
            for cand in ranked[i]:
                votes = col_votes[column][(str(cand.entry.log), col_key(cand.entry), cand.transform)]
                if cand.tentative and (n_col < 2 or votes < n_col or not 0 <= cand.entry.value <= 1):
                    continue  # x100 without a percent mark needs the whole column in [0, 1] to align
                cand.tentative = False
                others = row_votes[row][(str(cand.entry.log), cand.entry.row)] - 1
                if cand.weak and n_row > 1 and others >= 1 and not any(not c.weak for c in ranked[i]):
                    cand.weak = False  # the row's other cells bind to the same log row: it names this one too
                bonus = 0.6 * votes / n_col if n_col > 1 else 0.0
                if n_row > 1:
                    bonus += 0.6 * row_votes[row][(str(cand.entry.log), cand.entry.row)] / n_row
                cand.score = round(cand.score + bonus, 4)
                kept.append(cand)
            ranked[i] = rank(kept)


def settle_rows(occs: list[Occurrence], decided: dict[int, Bound], ranked: dict[int, list[Candidate]]) -> None:
    """Move a table cell to the log row most cells of its LaTeX row bind to, when it fits an entry of that row."""
    rows: dict[tuple[Path, int, int], list[int]] = {}
    for i, bound in decided.items():
        cell = occs[i].context.cell
        if cell is not None and bound.best.formula is None and bound.how != "kept":
            rows.setdefault((occs[i].file, cell[0], cell[1]), []).append(i)
    for members in rows.values():
        if len(members) < 3:
            continue
        keys = Counter((str(decided[i].best.entry.log), decided[i].best.entry.row) for i in members)
        top, count = keys.most_common(1)[0]
        if count * 2 <= len(members):
            continue
        for i in members:
            bound = decided[i]
            if (str(bound.best.entry.log), bound.best.entry.row) == top:
                continue
            other = next((c for c in ranked[i] if (str(c.entry.log), c.entry.row) == top and not c.weak), None)
            if other is not None:
                decided[i] = Bound(bound.occurrence, other, [], "context")


def _votes(cells: list[int], ranked: dict[int, list[Candidate]], key: Callable[[Candidate], object]) -> Counter:
    votes: Counter = Counter()
    for i in cells:
        votes.update({key(c) for c in ranked[i]})
    return votes
