"""The binder's parts: the numbers of a manuscript where they stand, the log entries that fit them, and the
decisions made of them.

An entry fits an occurrence when its value, under a transform the printed form allows, rounds to the
printed number at its precision: `identity`; `percent` (x100) only when the number is printed as a
percentage, its column header or caption says percent, or a whole LaTeX column aligns with a log
column in [0, 1]; `scale:<factor>` from a unit suffix or column header (`(M)`, `ms`). A fit is no
binding: `bindplan` binds on evidence (`bindrules`, `bindblocks`, `chance`), `derived` the numbers
computed from others.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from decimal import Decimal, localcontext
from pathlib import Path

from ..numeric import _Query, shift
from ..tex.latex import Number, Scan
from ..tex.texcites import first_use
from ..tex.texcontext import Context, Layout
from .chance import Chance
from .logentries import Entry, LogData, is_structured

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
    return list(_name_words(name))


@functools.lru_cache(maxsize=1 << 16)  # a log's names repeat over its rows and every number asks for them
def _name_words(name: str) -> tuple[str, ...]:
    return tuple(w.lower() for w in _SPLIT.findall(re.sub(r"\[\d+\]|\[\*\]", " ", name)) if len(w) > 1)


def similar(a: str, b: str) -> float:
    """Return how alike two name words are (1 equal, 0.9 but a plural, 0.8 one a prefix of the other, else 0)."""
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
    optional: bool = False  # a number the policy does not check (an integer under `decimals`): bound on evidence only

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
    by_field: float = 0.0  # how strongly the context names the entry's field (key, column)
    by_row: float = 0.0  # how strongly it names the entry's row (path, label, file)
    block: bool = False  # its table maps onto the entry's log table as a block
    evidence: str = ""  # why it may bind: `name`, `block`, `value` (a chance below the bound), `derived`, `kept`

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
    evidence: str = ""  # `name`, `block`, `value p=0.3%`, `derived`, `kept`: what the decision rests on


@dataclass
class BindResult:
    """Every occurrence of a manuscript, bound or unattested."""

    bound: list[Bound] = field(default_factory=list)
    unattested: list[Occurrence] = field(default_factory=list)
    coincidental: int = 0  # occurrences some entry fits by value but none by evidence
    quiet: list[Occurrence] = field(default_factory=list)  # optional numbers without evidence: never reported

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
    """Return the empirical numbers of the scanned files with their contexts and anchors (under `decimals` also the
    integers, as optional: bound on evidence only)."""
    out = []
    layouts = {Path(s.file): Layout(texts[Path(s.file)]) for s in scans}
    for s in scans:
        path = Path(s.file)
        layout = layouts[path]
        for n in s.numbers:
            if n.value in allowed or s.is_suppressed(n.line, "number") or n.start < 0:
                continue
            checked = is_empirical(n, policy)
            if not checked and policy != "decimals":
                continue
            # an integer the policy does not check (a count: documents, tokens, parameters) binds on evidence and
            # is then locked; without evidence it is never reported
            context = printed_context(n, layout, layouts) if n.macro else layout.context(n)
            out.append(Occurrence(path, n, context, layout.anchor(n), not checked))
    return out


def printed_context(n: Number, layout: Layout, layouts: dict[Path, Layout]) -> Context:
    """Return the context of a number a macro's definition holds: the words where the macro is first used
    (`(Friedman test, \\llmfried, $n=32$)` for `\\newcommand{\\llmfried}{$\\chi^2 = 1.88$}`), its place (group,
    cell, identity) where it is defined and locked."""
    own = layout.context(n)
    use = first_use(((p, lay.masked) for p, lay in layouts.items()), n.macro)
    if use is None:
        return own
    path, start = use
    there = layouts[path].context(replace(n, start=start, end=start + len(n.macro)))
    return replace(there, group=own.group, cell=own.cell, axis=own.axis, identity=own.identity)


def transforms(occ: Occurrence) -> list[tuple[str, bool]]:
    """Return the transforms an occurrence allows, each with whether it is tentative."""
    found = [("identity", False)]
    if occ.context.percent:
        found.append(("percent", False))
    elif occ.context.cell is not None and 0 <= occ.number.value <= 100:
        found.append(("percent", True))
    found.extend((scale, False) for scale in occ.context.scales)
    if occ.number.scale:  # a glued unit or magnitude (`1.5B tokens`, `0.19MB`, `12.5ms`): the log may hold the units
        glued = f"scale:1e{-occ.number.scale}"
        if all(t != glued for t, _ in found):
            found.append((glued, False))
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
        self.chance = Chance(self._keys, sum(log.dropped for log in logs))
        self._columns: dict[int, dict[tuple[str, str], list[Entry]]] = {}

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

    def columns(self, limit: int) -> dict[tuple[str, str], list[Entry]]:
        """Return the log columns of 2 to `limit` values whose every value is held (a list's `runs[*].acc`, a CSV's
        column), by (log, column); read once per limit, not once per number."""
        if limit not in self._columns:
            self._columns[limit] = self._read_columns(limit)
        return self._columns[limit]

    def _read_columns(self, limit: int) -> dict[tuple[str, str], list[Entry]]:
        out: dict[tuple[str, str], list[Entry]] = {}
        for log in self.logs:
            for e in log.entries:
                if 2 <= e.rows <= limit and (e.kind == "leaf" and "[*]" in e.column or e.kind == "cell"):
                    out.setdefault((str(log.path), e.column), []).append(e)
        return {k: v for k, v in out.items() if len(v) == v[0].rows and not (v[0].kind == "cell" and self._dropped(k))}

    def _dropped(self, key: tuple[str, str]) -> bool:
        return any(str(log.path) == key[0] and log.dropped for log in self.logs)

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
            s = similar(c, word)
            if s:
                best = max(best, s * cw)
        total += weight * best
    return round(total, 4)


def col_key(entry: Entry) -> str:
    """Return the column of an entry's table, as block alignment compares it (a JSON leaf key, a CSV column)."""
    if entry.kind == "leaf":
        return _leaf_key(entry.at)
    return entry.column


@functools.lru_cache(maxsize=1 << 16)  # asked per (number, fitting entry) and per block vote
def _leaf_key(at: str) -> str:
    return re.split(r"[.\[]", at.rstrip("]"))[-1].strip('"')
