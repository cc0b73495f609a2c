"""The words of LaTeX text as the binder weighs them, and a sentence read once for all its numbers.

Part of the LaTeX layer beside `texcontext`: `words_of` gives a fragment's words (no command names, no stop
words, Greek letters as words), `configs_of` the model sizes it names, and `Sentence` holds one sentence's
words, numbers and sizes by offset so each of its numbers looks up what stands within `WINDOW` characters of it
instead of re-reading the sentence (a sentence of a megabyte costs each number a window, not the sentence).
"""

from __future__ import annotations

import bisect
import re
from collections import Counter

WORD = re.compile(r"(?<![\\A-Za-z@\d])[^\W\d_][^\W_]+")  # F1, top5 and acc; not 50k nor \textbf
STOPWORDS = frozenset(
    """the a an and or of in on at to for with by from as is are was were be been this that these those we our
    it its than then over under into per vs via which while also both each all any more most less only not
    compared table tab fig figure section results result shows show shown reports report reported using used
    lr rl lcc ccc toprule midrule bottomrule hline cline cmidrule textbf textit emph bf it multicolumn multirow
    centering footnotesize small scriptsize tiny large pm mathbf mathrm document""".split()
)


#: a model size or configuration named in text or in a log's path (`7B`, `1.5b`, `125M`, `Qwen2.5-32B`)
CONFIG = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)[-_]?([bBmM])(?![A-Za-z])")
PLAIN_NUMBER = re.compile(r"(?<![\w.\\])\d[\d.,]*(?![\w])")


def configs_of(text: str, skip: tuple[int, int] | None = None) -> frozenset[str]:
    """Return the model sizes a text names, lower case without separators (`7B` -> `7b`), outside `skip`."""
    found = set()
    for m in CONFIG.finditer(text):
        if skip is not None and m.start() < skip[1] and skip[0] < m.end():
            continue
        found.add(f"{m.group(1)}{m.group(2).lower()}")
    return frozenset(found)


GREEK = re.compile(r"\\(?:var)?(alpha|beta|gamma|delta|epsilon|eta|theta|kappa|lambda|mu|nu|rho|sigma|tau|phi|omega)"
                    r"(?![A-Za-z])")  # fmt: skip


def words_of(text: str) -> list[str]:
    """Return the lower-case words of a LaTeX fragment, without command names and stop words.

    Greek letters count as words (`$\\gamma$` names a `gamma` key): papers and logs both name
    hyperparameters so.
    """
    words = [w.lower() for w in WORD.findall(text) if w.lower() not in STOPWORDS]
    return words + GREEK.findall(text)


#: how many words of a sentence an identity keeps
SENTENCE_WORDS = 16
#: how far (in characters) from a prose number its sentence's words are read: a sentence of a megabyte costs
#: each of its numbers this much, not the whole sentence (words that far weigh almost nothing anyway)
WINDOW = 2000


class Sentence:
    """One sentence of the masked text, read once: its words (less stop words), Greek letters, numbers and model
    sizes by offset, so each of its numbers looks up what stands near it instead of re-reading the sentence."""

    def __init__(self, masked: str, index: int, start: int, end: int) -> None:
        self.masked, self.index, self.start, self.end = masked, index, start, end
        words = [(m.start(), m.group(0).lower()) for m in WORD.finditer(masked, start, end)]
        self._all_starts, self._all_words = [pos for pos, _ in words], [w for _, w in words]
        kept = [(pos, w) for pos, w in words if w not in STOPWORDS]
        self._word_starts, self._words = [pos for pos, _ in kept], [w for _, w in kept]
        self._greek = [(m.start(), m.group(1)) for m in GREEK.finditer(masked, start, end)]
        self._greek_starts = [pos for pos, _ in self._greek]
        spans = [m.span() for m in PLAIN_NUMBER.finditer(masked, start, end)]
        self._number_starts, self._number_ends = [a for a, _ in spans], [b for _, b in spans]
        self._configs = [(m.start(), m.end(), f"{m.group(1)}{m.group(2).lower()}")
                         for m in CONFIG.finditer(masked, start, end)]  # fmt: skip
        self._config_starts = [c[0] for c in self._configs]
        self._config_counts = Counter(c[2] for c in self._configs)
        self._openings: dict[int, str] = {}

    def nearest(self, low: int, high: int, at: int) -> list[tuple[str, int]]:
        """Return each word (less stop words) and Greek letter starting in [low, high) with the fewest words standing
        between it and offset `at` at any of its places (a word before `at` counts itself)."""
        a, b = bisect.bisect_left(self._word_starts, low), bisect.bisect_left(self._word_starts, high)
        j = min(max(bisect.bisect_left(self._word_starts, at), a), b)
        # a dict keeps the last value written for a word: before the number its nearest place, after it (read
        # backwards) too
        before = dict(zip(self._words[a:j], range(j - a, 0, -1), strict=True))
        after = dict(zip(self._words[b - 1 : j - 1 if j else None : -1], range(b - 1 - j, -1, -1), strict=True))
        for word, between in after.items():
            if between < before.get(word, between + 1):
                before[word] = between
        g, h = bisect.bisect_left(self._greek_starts, low), bisect.bisect_left(self._greek_starts, high)
        for pos, name in self._greek[g:h]:
            between = abs(bisect.bisect_left(self._word_starts, pos) - j)
            if between < before.get(name, between + 1):
                before[name] = between
        return list(before.items())

    def all_words(self, low: int, high: int) -> list[str]:
        """Return the words, stop words too, starting in [low, high)."""
        return self._all_words[bisect.bisect_left(self._all_starts, low) : bisect.bisect_left(self._all_starts, high)]

    def beside(self, start: int, end: int) -> tuple[int, int]:
        """Return the end of the number before [start, end) and the start of the one after (the sentence's ends)."""
        i = bisect.bisect_right(self._number_ends, start)
        j = bisect.bisect_left(self._number_starts, end)
        return (self._number_ends[i - 1] if i else self.start), (
            self._number_starts[j] if j < len(self._number_starts) else self.end)  # fmt: skip

    def only_config(self, start: int, end: int) -> frozenset[str]:
        """Return the one model size the sentence names outside [start, end), or nothing when it names several."""
        if not self._configs:
            return frozenset()
        i = bisect.bisect_left(self._config_starts, start) - 1
        overlapping = [c for c in self._configs[max(0, i) : i + 3] if c[0] < end and start < c[1]]
        if len(self._config_counts) > 1 + len(overlapping):
            return frozenset()
        counts = self._config_counts.copy()
        counts.subtract(c[2] for c in overlapping)
        found = [value for value, count in counts.items() if count > 0]
        return frozenset(found) if len(found) == 1 else frozenset()

    def opening(self, start: int) -> str:
        """Return the sentence's first words from `start` (its identity's first part)."""
        if start not in self._openings:
            self._openings[start] = " ".join(words_of(self.masked[start : self.end])[:SENTENCE_WORDS])
        return self._openings[start]
