"""Which decision of the bindings file belongs to which number now: pairing by the occurrence's identity.

A number's identity is its place's words, never the numbers beside it: a table cell's table (label, else caption),
row label and column header; a prose number's sentence and the words on either side. `match` pairs, strongest
first: the whole identity in the same file, then identities that agree in part, then the same identity in another
file (a sentence moved between sections), then what is left in the same stretch of the file: between two numbers
that paired, in the same order (a sentence reworded together with its number while lines moved above it). The
line is only a hint there: compared relative to the numbers that paired, so lines inserted above shift nothing.

A paired decision is then compared with the number: a changed value is `binding_mismatch`. Without the last levels
an edit that changed a number and enough of its words turned the decision stale (a warning) and bound the new
number afresh (a warning): the changed number passed.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

CELL_KEYS = ("table", "row", "column")
PROSE_KEYS = ("sentence", "before", "after")
#: which parts of an anchor must agree, strongest first: the whole identity, then what survives an edit of one part
LEVELS = (CELL_KEYS, ("table", "row"), ("table", "column"), ("row", "column"),
          PROSE_KEYS, ("before", "after"), ("sentence", "before"), ("sentence", "after"))  # fmt: skip
#: a stretch of the file with more leftover pairs than this is paired in order, not by likeness (quadratic)
MAX_LIKENESS_PAIRS = 250_000


class Decision(Protocol):
    """What pairing reads of a decision (a `bindfile.FileBinding` is one)."""

    file: Path
    anchor: dict[str, str]
    line: int
    token: str


@dataclass(frozen=True)
class Place:
    """Where one number stands now: its file, identity (anchor), line and token."""

    file: Path
    anchor: dict[str, str]
    line: int
    token: str


def _key(file: Path | None, anchor: dict[str, str], level: tuple[str, ...]) -> tuple[Any, ...] | None:
    """Return the key of an identity's parts `level` in `file`; None when they say nothing, or (`file` None:
    across files) when a part is a place (`#2`: the second table of its file), which another file has too."""
    if any(k not in anchor for k in level) or not any(anchor[k] for k in level):
        return None
    if file is None and any(anchor[k].startswith("#") for k in level):
        return None
    return (file, *(anchor[k] for k in level))


class _Pairing:
    """The pairs made so far (place index -> decision index) and the files, each resolved once."""

    def __init__(self, bindings: Sequence[Decision], places: list[Place]) -> None:
        self.bindings, self.places = bindings, places
        real = {f: f.resolve() for f in {b.file for b in bindings} | {p.file for p in places}}  # a few files,
        self.files = [real[b.file] for b in bindings]  # many numbers: each resolved once (72,000: 15 s of resolve)
        self.resolved = [real[p.file] for p in places]
        self.pairs: dict[int, int] = {}
        self.used: set[int] = set()

    def left(self, same_file: bool) -> bool:
        """Return whether a number and a decision are left unpaired (`same_file`: in one file; else in two)."""
        here = {self.resolved[i] for i in range(len(self.places)) if i not in self.pairs}
        there = {self.files[j] for j in range(len(self.bindings)) if j not in self.used}
        return bool(here & there) if same_file else bool(here and there and (len(here | there) > 1))

    def pair(self, i: int, j: int) -> None:
        self.pairs[i] = j
        self.used.add(j)

    def by_identity(self, depth: int, level: tuple[str, ...], same_file: bool) -> None:
        """Pair the numbers and decisions left whose identity agrees on `level`: in reading order when both sides
        count alike, by the nearest line for a whole identity in one file, else not at all (a part of an identity
        shared by several numbers says nothing about which is which)."""
        groups: dict[tuple[Any, ...], tuple[list[int], list[int]]] = {}
        for i, place in enumerate(self.places):
            key = None if i in self.pairs else _key(self.resolved[i] if same_file else None, place.anchor, level)
            if key is not None:
                groups.setdefault(key, ([], []))[0].append(i)
        for j, b in enumerate(self.bindings):
            key = None if j in self.used else _key(self.files[j] if same_file else None, b.anchor, level)
            if key is not None and key in groups:
                groups[key][1].append(j)
        for _found, bound in groups.values():
            bound.sort(key=lambda k: (self.bindings[k].line, k))
        order = _row_orders(groups, self.places, self.bindings) if level == CELL_KEYS and same_file else {}
        for key, (found, bound) in groups.items():
            if not found or not bound:
                continue
            if len(found) == len(bound):
                sigma = order.get(key[:-1])  # rows labelled alike: the old row each one is (moved rows move whole)
                chosen = list(zip(found, [bound[k] for k in sigma] if sigma else bound, strict=True))
            elif same_file and depth in (0, LEVELS.index(PROSE_KEYS)):
                chosen = _nearest(found, bound, self.places, self.bindings)
            else:
                continue
            for i, j in chosen:
                self.pair(i, j)

    def by_region(self) -> None:
        """Pair what is left in the sentence (or table) a paired number came from and now stands in, in whichever
        file: a sentence whose other number kept its identity was edited, not replaced (one moved to another
        section with its numbers changed and its opening reworded)."""
        parent: dict[tuple[Any, ...], tuple[Any, ...]] = {}

        def root(node: tuple[Any, ...]) -> tuple[Any, ...]:
            while parent.setdefault(node, node) != node:
                parent[node] = node = parent[parent[node]]  # halve the path: each lookup stays short
            return node

        for i, j in self.pairs.items():
            here, there = self._region("place", i), self._region("decision", j)
            if here is not None and there is not None:
                parent[root(here)] = root(there)
        left: dict[tuple[Any, ...], tuple[list[int], list[int]]] = {}
        for i in range(len(self.places)):
            node = None if i in self.pairs else self._region("place", i)
            if node is not None and node in parent:
                left.setdefault(root(node), ([], []))[0].append(i)
        for j in range(len(self.bindings)):
            node = None if j in self.used else self._region("decision", j)
            if node is not None and node in parent and root(node) in left:
                left[root(node)][1].append(j)
        for found, bound in left.values():
            if bound:
                for i, j in self._alike(found, bound, None, "any"):
                    self.pair(i, j)

    def _region(self, side: str, k: int) -> tuple[Any, ...] | None:
        """Return the sentence or table a number stands in (`side` place) or stood in (decision), by file."""
        anchor, file = (self.places[k].anchor, self.resolved[k]) if side == "place" else (self.bindings[k].anchor,
                                                                                           self.files[k])  # fmt: skip
        part = "table" if "table" in anchor else "sentence"
        return (side, file, anchor[part]) if anchor.get(part) else None

    def by_token(self) -> None:
        """Pair, last, a number left with a decision left in its file for the same printed token whose identity
        shares words with it (a sentence reworded around its kept number and moved past another): it holds."""
        tokens: dict[tuple[Path, str], tuple[list[int], list[int]]] = {}
        for i, place in enumerate(self.places):
            if i not in self.pairs:
                tokens.setdefault((self.resolved[i], place.token), ([], []))[0].append(i)
        for j, b in enumerate(self.bindings):
            if j not in self.used and (self.files[j], b.token) in tokens:
                tokens[self.files[j], b.token][1].append(j)
        for found, bound in tokens.values():
            if bound:
                for i, j in self._alike(found, bound, None, "shared"):
                    self.pair(i, j)

    def by_stretch(self) -> None:
        """Pair, last, what is left between the same two paired numbers of a file (see the module's doc)."""
        order_p: dict[Path, list[int]] = {}
        order_b: dict[Path, list[int]] = {}
        for i, real in enumerate(self.resolved):
            order_p.setdefault(real, []).append(i)
        for j, real in enumerate(self.files):
            order_b.setdefault(real, []).append(j)
        for file, found in order_p.items():
            bound = order_b.get(file)
            if bound:
                found.sort(key=lambda i: (self.places[i].line, i))
                bound.sort(key=lambda j: (self.bindings[j].line, j))
                self._stretches(found, bound)

    def _stretches(self, found: list[int], bound: list[int]) -> None:
        """Pair one file's leftovers stretch by stretch; the stretches lie between anchors, the pairs that keep
        reading order on both sides (a moved sentence's pair is no anchor)."""
        at = {j: k for k, j in enumerate(bound)}
        paired = [(k, at[self.pairs[i]]) for k, i in enumerate(found) if i in self.pairs and self.pairs[i] in at]
        anchors = _in_order(paired)
        starts_p = [p for p, _ in anchors]
        starts_b = [b for _, b in anchors]
        stretches: dict[int, tuple[list[int], list[int]]] = {}
        for k, i in enumerate(found):
            if i not in self.pairs:
                stretches.setdefault(bisect.bisect(starts_p, k), ([], []))[0].append(i)
        for k, j in enumerate(bound):
            if j not in self.used:
                g = bisect.bisect(starts_b, k)
                if g in stretches:
                    stretches[g][1].append(j)
        for g, (left_p, left_b) in stretches.items():
            if not left_b:
                continue
            near = anchors[g - 1] if g > 0 else (anchors[g] if g < len(anchors) else None)
            shift = 0 if near is None else self.places[found[near[0]]].line - self.bindings[bound[near[1]]].line
            for i, j in self._alike(left_p, left_b, shift, "even"):
                self.pair(i, j)

    def _alike(self, found: list[int], bound: list[int], shift: int | None, take: str) -> list[tuple[int, int]]:
        """Return the pairs of a stretch or region: the most alike first (identity words, then the line shifted as
        the stretch's neighbours shifted, `shift`), each side once; `take` says which: `any` (as many as the
        smaller side holds), `even` (all when both sides count alike, else as `shared`) or `shared` (only pairs
        whose identities share words: a rewritten sentence and a new one elsewhere in a stretch stay apart)."""
        even = take == "any" or (take == "even" and len(found) == len(bound))
        if len(found) * len(bound) > MAX_LIKENESS_PAIRS:
            return list(zip(found, bound, strict=False)) if even else []
        costs = []
        for i in found:
            place = self.places[i]
            for j in bound:
                b = self.bindings[j]
                offset = abs(place.line - (shift or 0) - b.line)
                hint = shift is not None and offset == 0
                costs.append((-(_likeness(place.anchor, b.anchor) + hint), offset, i, j))
        costs.sort()
        taken_i: set[int] = set()
        taken_j: set[int] = set()
        out = []
        for score, _, i, j in costs:
            if i in taken_i or j in taken_j or (score == 0 and not even):
                continue
            taken_i.add(i)
            taken_j.add(j)
            out.append((i, j))
        return out


def _row_orders(
    groups: dict[tuple[Any, ...], tuple[list[int], list[int]]], places: list[Place], bindings: Sequence[Decision]
) -> dict[tuple[Any, ...], tuple[int, ...]]:
    """Return, for each row label that several rows of one table share (`Ours` twice), which old row each of its
    rows now is: the k-th such row takes the decisions of old row `sigma[k]`. The rows are told apart by nothing
    but their order, so a row moved past another of the same label would meet the other's decisions: the rows are
    paired as wholes, the permutation under which most cells print what their decision recorded, and reading order
    when none does better. One permutation serves every column, so two cells traded between such rows (the rest of
    each row kept) stay a `binding_mismatch`, while a whole row moved keeps its decisions."""
    labels: dict[tuple[Any, ...], list[tuple[list[int], list[int]]]] = {}
    for key, (found, bound) in groups.items():
        labels.setdefault(key[:-1], []).append((found, bound))  # key: (file, table, row, column)
    out = {}
    for label, columns in labels.items():
        n = len(columns[0][0])
        if n < 2 or any(len(found) != n or len(bound) != n for found, bound in columns):
            continue
        agree = [[sum(places[found[r]].token == bindings[bound[s]].token for found, bound in columns)
                  for s in range(n)] for r in range(n)]  # fmt: skip
        sigma = _best_permutation(agree)
        if sigma != tuple(range(n)):
            out[label] = sigma
    return out


def _best_permutation(agree: list[list[int]]) -> tuple[int, ...]:
    """Return the permutation sigma maximising sum(agree[r][sigma[r]]), the identity unless another does better
    (exhaustive up to 7 rows; past that greedily, the most agreeing pairs first, the nearest in order among them)."""
    n = len(agree)
    identity = tuple(range(n))
    if n <= 7:
        best, top = identity, sum(agree[r][r] for r in range(n))
        for sigma in itertools.permutations(range(n)):
            score = sum(agree[r][sigma[r]] for r in range(n))
            if score > top:
                best, top = sigma, score
        return best
    chosen = [-1] * n
    taken: set[int] = set()
    for _, _, r, s in sorted((-agree[r][s], abs(r - s), r, s) for r in range(n) for s in range(n)):
        if chosen[r] < 0 and s not in taken:
            chosen[r] = s
            taken.add(s)
    greedy = tuple(chosen)
    better = sum(agree[r][greedy[r]] for r in range(n)) > sum(agree[r][r] for r in range(n))
    return greedy if better else identity


def _in_order(paired: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Return the longest run of pairs ascending on both sides (`paired` ascends on the first)."""
    tails: list[int] = []  # tails[n]: the second side ending the best run of length n + 1 found so far
    ends: list[int] = []  # ... and its index in `paired`
    before: list[int] = []
    for n, (_, b) in enumerate(paired):
        k = bisect.bisect_left(tails, b)
        before.append(ends[k - 1] if k else -1)
        if k == len(tails):
            tails.append(b)
            ends.append(n)
        else:
            tails[k], ends[k] = b, n
    out: list[tuple[int, int]] = []
    n = ends[-1] if ends else -1
    while n != -1:
        out.append(paired[n])
        n = before[n]
    return out[::-1]


def _words(anchor: dict[str, str]) -> set[str]:
    return {w for value in anchor.values() for w in value.lower().replace("|", " ").split() if not w.startswith("#")}


def _likeness(a: dict[str, str], b: dict[str, str]) -> float:
    """Return how alike two identities are: each part equal counts one, and the share of their words in common."""
    same = sum(1 for k, v in a.items() if v and b.get(k) == v)
    wa, wb = _words(a), _words(b)
    return same + (len(wa & wb) / len(wa | wb) if wa | wb else 0.0)


def match(bindings: Sequence[Decision], places: list[Place]) -> dict[int, int]:
    """Return place index -> binding index (see the module's doc); `places` are in reading order. Within one
    identity the numbers pair in reading order when both sides count alike (so a swap of two numbers meets the
    decisions of the places it swapped), else by the nearest line. Neighbouring numbers never take part."""
    pairing = _Pairing(bindings, places)
    for same_file in (True, False):
        for depth, level in enumerate(LEVELS):
            if not pairing.left(same_file):
                break
            pairing.by_identity(depth, level, same_file)
    pairing.by_region()
    pairing.by_stretch()
    pairing.by_region()  # the sentences the stretches paired in
    pairing.by_token()
    return pairing.pairs


def _nearest(
    found: list[int], bound: list[int], places: list[Place], bindings: Sequence[Decision]
) -> list[tuple[int, int]]:
    """Return pairs by the nearest line hint (then the same token), closest first, each side once."""
    costs = sorted((abs(bindings[j].line - places[i].line), bindings[j].token != places[i].token, i, j)
                   for i in found for j in bound)  # fmt: skip
    taken_i: set[int] = set()
    taken_j: set[int] = set()
    out = []
    for _, _, i, j in costs:
        if i not in taken_i and j not in taken_j:
            taken_i.add(i)
            taken_j.add(j)
            out.append((i, j))
    return out
