"""Exact numbers that never overflow or trap, and the rounding rule by which a log value attests a printed one.

Values are `Decimal`s built without a context (construction, comparison, hashing and the
exponent shifts below are exact for any exponent), so `3.2e+20`, `1e308`, `2.5e1000000` and
`1e-29697637` are numbers like any other. A printed number's precision is its exponent:
`91.40` is printed to 10^-2, `3.8 \\times 10^{27}` to 10^26.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from decimal import MAX_EMAX, MIN_EMIN, Context, Decimal, InvalidOperation, localcontext

#: exponents beyond this are no measurement; such strings are not numbers
MAX_EXPONENT = 10**15


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


class NumberIndex:
    """A set of exact values answering: does any of them round to a printed number at its precision?"""

    def __init__(self) -> None:
        self._values: set[Decimal] = set()
        self._positive: list[Decimal] = []
        self._negative: list[Decimal] = []  # magnitudes
        self._zero = False
        self._dirty = False

    def __len__(self) -> int:
        return len(self._values)

    def __contains__(self, value: object) -> bool:
        return value in self._values

    def add(self, value: Decimal) -> None:
        """Record one exact value."""
        self._values.add(value)
        self._dirty = True

    def update(self, values: Iterable[Decimal]) -> None:
        """Record many exact values."""
        self._values.update(values)
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
        sign, digits, exponent = printed.as_tuple()
        half = Decimal((0, (5,), int(exponent) - 1))
        if printed == 0:
            # |v| <= half rounds to zero (a tie goes to the even 0), whatever the sign
            return self._zero or any(values and values[0] <= half for values in (self._positive, self._negative))
        values = self._negative if sign else self._positive
        magnitude = printed.copy_abs()
        # exact: both ends have at most one digit more than the printed number, at any exponent
        with localcontext(Context(prec=len(digits) + 2, Emax=MAX_EMAX, Emin=MIN_EMIN, traps=[])):
            low, high = magnitude - half, magnitude + half
        index = bisect.bisect_left(values, low)  # half-up: the lower tie rounds away from zero, to `printed`
        if index == len(values):
            return False
        # half-even: the upper tie rounds to `printed` when its last digit is even
        return values[index] < high or (values[index] == high and digits[-1] % 2 == 0)
