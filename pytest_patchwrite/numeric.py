"""Exact numbers that never overflow or trap, and the rounding rule by which a log value attests a printed one.

Values are `Decimal`s built without a context (construction, comparison, hashing and the
exponent shifts below are exact for any exponent), so `3.2e+20`, `1e308`, `2.5e1000000` and
`1e-29697637` are numbers like any other. A printed number's precision is its exponent:
`91.40` is printed to 10^-2, `3.8 \\times 10^{27}` to 10^26.
"""

from __future__ import annotations

import bisect
import math
import operator
import re
from collections.abc import Iterable
from decimal import MAX_EMAX, MIN_EMIN, Context, Decimal, InvalidOperation, localcontext
from itertools import compress, repeat

#: exponents beyond this are no measurement; such strings are not numbers
MAX_EXPONENT = 10**15
#: floats order decimals exactly only in their normal range
_FLOAT_MIN, _FLOAT_MAX = 1e-290, 1e290
_INFINITE = {math.inf, -math.inf}
#: remembered answers per index (bounded memory on a file dense with distinct numbers)
_MAX_ANSWERS = 200_000


#: a magnitude or byte unit glued to a number (`24.4M`, `3.2k`, `0.19MB`, `27.2B`), by the power of ten it stands for
UNIT_SCALES = {"k": 3, "K": 3, "M": 6, "B": 9, "G": 9, "T": 12,
               "kB": 3, "KB": 3, "MB": 6, "GB": 9, "TB": 12}  # fmt: skip
# a numeric string of a log: `91.4`, `91.4%`, `1,234`, `1,234.5`, `27.2B`, `0.19 MB`, `-3e-4`
_NUMERIC_STRING = re.compile(
    r"\s*(?P<number>[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?(?:[eE][-+]?\d+)?|[-+]?\.\d+(?:[eE][-+]?\d+)?)"
    r"\s*(?P<unit>%|[kKMGT]?B|[kKMGT])?\s*"
)


def numeric_string(text: str) -> tuple[str, str, int] | None:
    """Return (the number without its separators, its unit, the unit's power of ten) when `text` is exactly one
    number (`91.4%` -> 91.4, %, 0; `1,234` -> 1234; `27.2B` -> 27.2, B, 9), else None."""
    if len(text) > 60:
        return None
    m = _NUMERIC_STRING.fullmatch(text)
    if m is None:
        return None
    unit = m.group("unit") or ""
    return m.group("number").replace(",", ""), unit, UNIT_SCALES.get(unit, 0)


def parse_number(text: str) -> Decimal | None:
    """Return the exact finite value of a numeric string, keeping its printed precision; None if it is none."""
    try:
        value = Decimal(text)
    except (InvalidOperation, ValueError):
        return None
    if not value.is_finite() or not -MAX_EXPONENT <= value.adjusted() <= MAX_EXPONENT:
        return None
    return value


def shift(value: Decimal, places: int) -> Decimal | None:
    """Return `value * 10**places` exactly (no context, no rounding); None past the exponent bound."""
    sign, digits, exponent = value.as_tuple()
    moved = int(exponent) + places
    if abs(moved) > MAX_EXPONENT:
        return None
    return Decimal((sign, digits, moved))


class _Query:
    """The exact interval of values that round to a printed number (half-up or half-even)."""

    def __init__(self, printed: Decimal) -> None:
        sign, digits, exponent = printed.as_tuple()
        self.half = Decimal((0, (5,), int(exponent) - 1))
        self.zero = printed == 0
        self.negative = bool(sign)
        self.even = digits[-1] % 2 == 0
        magnitude = printed.copy_abs()
        # exact: both ends have at most one digit more than the printed number, at any exponent
        with localcontext(Context(prec=len(digits) + 2, Emax=MAX_EMAX, Emin=MIN_EMIN, traps=[])):
            self.low, self.high = magnitude - self.half, magnitude + self.half

    def holds(self, value: Decimal) -> bool:
        """Return whether `value` rounds to the printed number."""
        magnitude = value.copy_abs()
        if self.zero:
            return magnitude <= self.half  # a tie goes to the even 0, whatever the sign
        if value == 0 or value.is_signed() != self.negative:
            return False
        # half-up: the lower tie rounds away from zero, to it; half-even: the upper tie when its digit is even
        return self.low <= magnitude < self.high or (magnitude == self.high and self.even)

    def float_window(self) -> tuple[float, float]:
        """Return float bounds a little wider than the interval (two ulps each side)."""
        if self.zero:
            low, high = -float(self.half), float(self.half)
        elif self.negative:
            low, high = -float(self.high), -float(self.low)
        else:
            low, high = float(self.low), float(self.high)
        for _ in range(2):
            low, high = math.nextafter(low, -math.inf), math.nextafter(high, math.inf)
        return low, high


def _float_orders(token: str, value: float) -> bool:
    """Return whether a float orders this token exactly among others like it (<= 15 digits, normal range)."""
    if not (_FLOAT_MIN < abs(value) < _FLOAT_MAX):
        return value == 0 and not any(c in "123456789" for c in token.partition("e")[0].partition("E")[0])
    if len(token) <= 16:
        return True
    mantissa = token.lower().partition("e")[0]
    return len(mantissa.replace(".", "").lstrip("+-").strip("0")) <= 15


class NumberIndex:
    """Numbers of experimental logs, answering: does any of them round to a printed number at its precision?

    Numeric strings are kept as printed and, on the first query, sorted by their float value,
    which orders numbers of up to 15 significant digits exactly; a query bisects a float window
    and confirms each candidate with exact decimals. Numbers a float cannot order (more
    digits, beyond its range) go to an exact sorted index of Decimals.
    """

    def __init__(self) -> None:
        self.tokens: set[str] = set()
        self._values: set[Decimal] = set()
        self._sorted: list[str] = []
        self._keys: list[float] = []
        self._exact = _ExactIndex()
        self._dirty = False
        # answers by printed form (sign, digits, exponent: `91.4` and `91.40` differ); a paper repeats its numbers
        self._answers: dict[tuple[int, tuple[int, ...], int | str], bool] = {}

    def __len__(self) -> int:
        return len(self.tokens) + len(self._values)

    def add_tokens(self, tokens: Iterable[str]) -> None:
        """Record numeric strings as a log prints them."""
        self.tokens.update(tokens)
        self._dirty = True

    def add(self, value: Decimal) -> None:
        """Record one exact value."""
        self._values.add(value)
        self._dirty = True

    def _build(self) -> None:
        simple: list[str] = []
        exact: list[Decimal] = list(self._values)
        for token in self.tokens:
            try:
                number = float(token)
            except ValueError:
                number = math.nan
            if _float_orders(token, number):
                simple.append(token)
            elif (value := parse_number(token.replace(",", ""))) is not None:
                exact.append(value)
        simple.sort(key=float)
        self._sorted, self._keys = simple, [float(t) for t in simple]
        self._exact = _ExactIndex()
        self._answers.clear()
        for value in exact:
            self._exact.add(value)
            # a fraction in the log may be printed as a percentage: 0.914 -> 91.4
            if -1 <= value <= 1 and (scaled := shift(value, 2)) is not None:
                self._exact.add(scaled)
        self._dirty = False

    def rounds_to(self, printed: Decimal) -> bool:
        """Return whether a value, or 100 times a value of at most 1, rounds to `printed` at its precision."""
        if self._dirty:
            self._build()
        key = printed.as_tuple()
        answer = self._answers.get(key)
        if answer is None:
            answer = self._answer(printed)
            if len(self._answers) >= _MAX_ANSWERS:
                self._answers.clear()
            self._answers[key] = answer
        return answer

    def _answer(self, printed: Decimal) -> bool:
        if self._exact.rounds_to(printed) or self._window_holds(_Query(printed), scaled=False):
            return True
        fraction = shift(printed, -2)
        return fraction is not None and self._window_holds(_Query(fraction), scaled=True)

    def _window_holds(self, query: _Query, scaled: bool) -> bool:
        low, high = query.float_window()
        start = bisect.bisect_left(self._keys, low)
        end = bisect.bisect_right(self._keys, high)
        for position in range(start, end):
            value = Decimal(self._sorted[position])
            if (not scaled or -1 <= value <= 1) and query.holds(value):
                return True
        return False


class _ExactIndex:
    """Exact Decimals in sorted lists (by sign and magnitude), for the numbers a float cannot order."""

    def __init__(self) -> None:
        self._values: set[Decimal] = set()
        self._positive: list[Decimal] = []
        self._negative: list[Decimal] = []  # magnitudes
        self._zero = False
        self._dirty = False

    def add(self, value: Decimal) -> None:
        """Record one exact value."""
        self._values.add(value)
        self._dirty = True

    def _build(self) -> None:
        self._positive = sorted(v for v in self._values if v > 0)
        self._negative = sorted(v.copy_abs() for v in self._values if v < 0)
        self._zero = any(v == 0 for v in self._values)
        self._dirty = False

    def rounds_to(self, printed: Decimal) -> bool:
        """Return whether a value rounds to `printed` at its printed precision (half-up or half-even)."""
        if self._dirty:
            self._build()
        query = _Query(printed)
        if query.zero:
            return self._zero or any(values and values[0] <= query.half for values in (self._positive, self._negative))
        values = self._negative if query.negative else self._positive
        index = bisect.bisect_left(values, query.low)
        return index < len(values) and query.holds(values[index].copy_negate() if query.negative else values[index])


class Sieve:
    """Which values of a log streamed past are worth keeping: a union of float intervals around printed numbers.

    The bounds are sorted and merged; a value fits when `bisect_right(bounds, value)` is odd. Each
    interval is a little wider than the exact one, so a kept value is confirmed later with exact
    decimals and a value that could attest a printed number is never dropped.
    """

    def __init__(self, intervals: Iterable[tuple[float, float]]) -> None:
        merged: list[list[float]] = []
        for low, high in sorted(intervals):
            if merged and low <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], high)
            else:
                merged.append([low, high])
        self.bounds = [x for pair in merged for x in pair]

    @classmethod
    def around(cls, printed: Iterable[Decimal]) -> Sieve:
        """Return the sieve of the pool rule: values that round to a printed number, or to it divided by 100."""
        windows = []
        for value in set(printed):
            windows.append(_Query(value).float_window())
            if (fraction := shift(value, -2)) is not None:
                windows.append(_Query(fraction).float_window())
        return cls(windows)

    def fits(self, value: float) -> bool:
        """Return whether a float value lies in one of the intervals."""
        return bool(bisect.bisect_right(self.bounds, value) & 1)

    def keeps(self, token: str) -> bool:
        """Return whether a numeric string may attest a printed number (also one past a float's range)."""
        try:
            value = float(token)
        except ValueError:
            return True
        return self.fits(value) or value in _INFINITE

    def keep(self, tokens: list[str]) -> list[str]:
        """Return the numeric strings (`explog` tokens) that fit, each step a C-level pass over them."""
        values = list(map(float, tokens))
        where = map(bisect.bisect_right, repeat(self.bounds, len(values)), values)
        kept = list(compress(tokens, map(operator.and_, where, repeat(1))))
        if math.inf in values or -math.inf in values:  # past a float's range: only exact decimals can tell
            kept.extend(t for t, v in zip(tokens, values, strict=True) if v in _INFINITE)
        return kept

    def covers(self, other: Sieve) -> bool:
        """Return whether every interval of `other` lies inside one of this sieve's."""
        bounds = self.bounds
        for low, high in zip(other.bounds[::2], other.bounds[1::2], strict=True):
            index = bisect.bisect_right(bounds, low)
            if not index & 1 or high > bounds[index]:
                return False
        return True

    def union(self, other: Sieve) -> Sieve:
        """Return the sieve keeping what either keeps."""
        pairs = [*zip(self.bounds[::2], self.bounds[1::2], strict=True),
                 *zip(other.bounds[::2], other.bounds[1::2], strict=True)]  # fmt: skip
        return Sieve(pairs)
