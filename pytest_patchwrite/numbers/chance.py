"""How likely a printed number matches some logged value by chance, at its printed precision.

A number printed with k significant digits is one of M = 9 * 10**(k-1) numbers of its decade and
precision (`19.8`: one of the 900 numbers 10.0 .. 99.9). The logs' values, under each transform
the number allows (x1, x100 for a percentage, a unit's scale), round to some of those numbers; a
random number of the same printed form equals one of them with probability hits / M. Values a
big log's filter did not keep may fall anywhere, so each counts as a hit (an upper bound). A number
binds on its value alone only when that probability is below `BOUND`, and an entry whose field the
context names but not its row only when the chance of a value of that field's column is (`column`).
"""

from __future__ import annotations

import bisect
import math
from decimal import Decimal

#: the chance below which an equal value alone is evidence (docs/evidence.md)
BOUND = 0.01


def choices(printed: Decimal) -> int:
    """Return how many numbers share a printed number's decade and precision (`19.8`: 900; `0.8`: 9)."""
    digits = printed.as_tuple().digits
    significant = len(digits) - next((i for i, d in enumerate(digits) if d), len(digits))
    return 9 * 10 ** (max(significant, 1) - 1)


def column(printed: Decimal, rows: int, transforms: int = 1) -> float:
    """Return the chance that a random number of `printed`'s form equals one of `rows` values (a column, a record)."""
    return min(1.0, rows * transforms / choices(printed))


class Chance:
    """The logs' values, sorted, and the chance that a printed number matches one of them."""

    def __init__(self, values: list[float], unknown: int = 0) -> None:
        self.values = values  # sorted, finite
        self.unknown = unknown  # values a filter dropped: each may be a hit
        self._memo: dict[tuple[object, ...], int] = {}

    def hits(self, printed: Decimal, power: int) -> int:
        """Return how many numbers of `printed`'s decade and precision some value x 10**power rounds to."""
        sign, digits, exponent = printed.as_tuple()
        if not isinstance(exponent, int) or printed == 0:
            return 0
        k = len(digits) - next((i for i, d in enumerate(digits) if d), len(digits))
        key = (sign, k, exponent, power)
        if key in self._memo:
            return self._memo[key]
        low, high = 10 ** (k - 1), 10**k  # the decade, in units of the printed quantum
        scale = 10.0 ** (exponent - power)  # a value's units of the quantum after the transform
        lo, hi = (low - 0.5) * scale, (high - 0.5) * scale
        if sign:
            lo, hi = -hi, -lo
        start, end = bisect.bisect_left(self.values, lo), bisect.bisect_right(self.values, hi)
        found = set()
        for value in self.values[start:end]:
            q = math.floor(abs(value) / scale + 0.5)
            if low <= q < high:
                found.add(q)
        self._memo[key] = len(found)
        return len(found)

    def of(self, printed: Decimal, powers: list[int]) -> float:
        """Return the chance that a random number of `printed`'s form matches a logged value under some power."""
        if printed == 0:
            return 1.0  # a zero is logged everywhere (counts, flags, gaps): it never binds on its value
        total = sum(self.hits(printed, p) for p in powers) + self.unknown * len(powers)
        return min(1.0, total / choices(printed))
