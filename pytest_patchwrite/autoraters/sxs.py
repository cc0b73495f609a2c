"""Side-by-side verdicts judged twice with the order swapped: the per-pair table and batch statistics."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

WINNERS = ("paper_1", "paper_2", "tie")
CATEGORIES_5 = {2: "win", 1: "leaning_win", 0: "tie", -1: "leaning_loss", -2: "loss"}
OUTCOMES = ("win", "tie", "loss")
GATE_COLUMN = "consensus"  # the column `outcome` (and the quality item) uses
LINE_FORMAT = '{"pair": ID, "call1": WINNER, "call2": WINNER}'


class UnreadableVerdict(ValueError):
    """A winner that is not exactly paper_1, paper_2 or tie (an error, never a tie)."""


def read_winner(value: Any) -> str:
    """Return `paper_1`, `paper_2` or `tie` (surrounding space and case ignored); raise UnreadableVerdict."""
    if isinstance(value, str) and value.strip().casefold() in WINNERS:
        return value.strip().casefold()
    raise UnreadableVerdict(f"unreadable winner {value!r}; expected paper_1, paper_2 or tie")


def side_of_a(winner: str, a_first: bool) -> int:
    """Return +1 when paper A won the call, -1 when B did, 0 for a tie (`a_first`: A was shown as paper_1)."""
    if winner == "tie":
        return 0
    return 1 if (winner == "paper_1") == a_first else -1


@dataclass(frozen=True)
class Aggregate:
    """One pair's two calls, seen from paper A: the three columns of the order-swap table."""

    s1: int
    s2: int

    @property
    def category_5pt(self) -> str:
        """Return the original's five classes (s1 + s2)."""
        return CATEGORIES_5[self.s1 + self.s2]

    @property
    def category_3pt(self) -> str:
        """Return the original's three classes (the sign of s1 + s2)."""
        total = self.s1 + self.s2
        return "win" if total > 0 else "loss" if total < 0 else "tie"

    @property
    def outcome(self) -> str:
        """Return the consensus: a win or a loss only when both orders agree on it, else a tie."""
        if self.s1 == self.s2 == 1:
            return "win"
        if self.s1 == self.s2 == -1:
            return "loss"
        return "tie"

    @property
    def consistent(self) -> bool:
        """Return whether both calls, mapped back to A and B, said the same."""
        return self.s1 == self.s2


def aggregate(call1: Any, call2: Any) -> Aggregate:
    """Return the table row for call 1 (A shown first) and call 2 (B shown first), winners as each call wrote them."""
    return Aggregate(side_of_a(read_winner(call1), True), side_of_a(read_winner(call2), False))


def wilson(successes: float, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """Return the Wilson score interval of a proportion (95% by default); (0, 1) when n is 0."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    # at p = 0 or 1 the bound is exactly 0 or 1; floating point would leave it 1e-17 off the estimate
    lo = 0.0 if successes <= 0 else max(0.0, centre - half)
    hi = 1.0 if successes >= n else min(1.0, centre + half)
    return lo, hi


class Verdict(NamedTuple):
    """One recorded pair: its id, the two calls' winners, the line it came from, why it could not be read."""

    pair: Any
    call1: Any
    call2: Any
    line: int | None = None
    problem: str | None = None


def _pair_key(pair: Any) -> Any:
    # JSON reads 1 and 1.0 as equal numbers, and so do we; a string id is another id
    if isinstance(pair, str):
        return ("str", pair)
    if isinstance(pair, int) and not isinstance(pair, bool) or isinstance(pair, float) and math.isfinite(pair):
        return ("number", pair)
    return None


def _repeats(rows: list[Verdict]) -> dict[int, str]:
    seen: defaultdict[Any, list[int]] = defaultdict(list)
    for index, row in enumerate(rows):
        key = _pair_key(row.pair) if row.problem is None else None
        if key is not None:
            seen[key].append(index)
    problems = {}
    for indices in seen.values():
        if len(indices) > 1:
            where = [f"line {rows[i].line}" if rows[i].line else f"row {i + 1}" for i in indices]
            for i in indices:
                times = f"{len(indices)} times ({', '.join(where)})"
                problems[i] = f"pair {rows[i].pair!r} is recorded {times}; none counted"
    return problems


def batch(rows: Iterable[Verdict | tuple[Any, ...]]) -> dict[str, Any]:
    """Return the `rate sxs --verdicts` object for Verdict rows (or (pair id, call1 winner, call2 winner) tuples).

    A row is an error, never a tie, when it could not be read, its id is not a string or a finite number,
    a winner is unreadable, or its id is recorded more than once (every copy is an error: which one
    is right cannot be told).
    """
    verdicts = [row if isinstance(row, Verdict) else Verdict(*row) for row in rows]
    repeats = _repeats(verdicts)
    pairs: list[dict[str, Any]] = []
    readable: list[Aggregate] = []
    for index, verdict in enumerate(verdicts):
        entry: dict[str, Any] = {"pair": verdict.pair if _pair_key(verdict.pair) else None}
        if verdict.line is not None:
            entry["line"] = verdict.line
        problem = verdict.problem or repeats.get(index)
        if problem is None and _pair_key(verdict.pair) is None:
            problem = f"pair id {verdict.pair!r} is not a string or a finite number"
        try:
            if problem is not None:
                raise UnreadableVerdict(problem)
            row = aggregate(verdict.call1, verdict.call2)
        except UnreadableVerdict as exc:
            pairs.append({**entry, "error": str(exc)})
            continue
        readable.append(row)
        pairs.append({**entry, "outcome": row.outcome, "category_5pt": row.category_5pt,
                      "category_3pt": row.category_3pt})  # fmt: skip
    n = len(readable)
    wins = sum(1 for r in readable if r.outcome == "win")
    ties = sum(1 for r in readable if r.outcome == "tie")
    losses = n - wins - ties

    def rate(k: float) -> float | None:
        return k / n if n else None

    lo, hi = wilson(wins, n)
    return {
        "pairs": pairs,
        "n": n,
        "n_errors": len(pairs) - n,
        "win_rate": rate(wins),
        "tie_rate": rate(ties),
        "loss_rate": rate(losses),
        "win_rate_half_ties": rate(wins + ties / 2),
        "position_inconsistency": rate(sum(1 for r in readable if not r.consistent)),
        "interval": [lo, hi] if n else None,
        "column": GATE_COLUMN,
    }
