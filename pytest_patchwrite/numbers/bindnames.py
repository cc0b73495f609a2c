"""How strongly one number's context names log entries, computed once per name word instead of once per entry.

`bindrules.naming` and `binder.score` compare every context word with every name word of an
entry. A printed number fits hundreds of entries (`0.99` of a hypervolume column), and those
entries share their name words (one column, one file, one row label for a whole CSV row), so
`Naming` keeps, for one occurrence, the best similarity x weight of each name word against its
context words, and `naming` / `score` are the same max and weighted sum over those bests
(tests/test_bind_work.py asserts the equality with `bindrules.naming` and `binder.score`).
`EntryNames` reads each entry's words once per bind.
"""

from __future__ import annotations

from .binder import entry_words, similar
from .bindrules import GENERIC, field_words, row_words
from .logentries import Entry


class Naming:
    """One context's words (word -> weight) against name words, each name word compared once."""

    def __init__(self, words: dict[str, float]) -> None:
        self.words = words
        self._best: dict[str, float] = {}
        self._named: dict[tuple[tuple[str, ...], float], float] = {}
        self.compared = 0  # name words compared with the context: the work done

    def best(self, name: str) -> float:
        """Return the best similarity x weight of a context word for `name` (0 when none is alike)."""
        found = self._best.get(name)
        if found is None:
            self.compared += 1
            found = 0.0
            for word, weight in self.words.items():
                s = similar(word, name)
                if s:
                    found = max(found, s * weight)
            self._best[name] = found
        return found

    def naming(self, names: tuple[str, ...], generic: float = 0.5) -> float:
        """Return `bindrules.naming(self.words, names, generic)` (once per names: a column's rows share its field)."""
        found = self._named.get((names, generic))
        if found is None:
            best = 0.0
            for name in names:
                best = max(best, self.best(name) * (generic if name in GENERIC else 1.0))
            found = self._named[(names, generic)] = round(best, 4)
        return found

    def score(self, words: dict[str, float]) -> float:
        """Return `binder.score` of an entry whose weighted words (`binder.entry_words`) are `words`."""
        total = 0.0
        for word, weight in words.items():
            total += weight * self.best(word)
        return round(total, 4)


class EntryNames:
    """The words of each entry, read once per bind (by the entry's identity; the entries outlive it)."""

    def __init__(self) -> None:
        self._of: dict[int, tuple[Entry, tuple[str, ...], tuple[str, ...], dict[str, float]]] = {}
        self._near: dict[tuple[str, ...], Naming] = {}

    def of(self, entry: Entry) -> tuple[tuple[str, ...], tuple[str, ...], dict[str, float]]:
        """Return an entry's field words, row words and weighted words (`score`'s)."""
        found = self._of.get(id(entry))
        if found is None or found[0] is not entry:
            fields, row = tuple(field_words(entry)), tuple(row_words(entry))
            found = (entry, fields, row, entry_words(entry))
            self._of[id(entry)] = found
        return found[1], found[2], found[3]

    def near(self, near: tuple[str, ...]) -> Naming:
        """Return the naming of a number's own words, each weighing 1 (shared by the numbers of the same words)."""
        found = self._near.get(near)
        if found is None:
            found = self._near[near] = Naming(dict.fromkeys(near, 1.0))
        return found
