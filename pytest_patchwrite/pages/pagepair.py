"""Which page of the base became which page of the change: pages paired by their text, not by their number.

An edit that reflows a paragraph shifts every later page, and a new section adds pages in the
middle; pairing page i with page i would then show every later page as changed. So pages are
aligned in order (like lines in a diff) by how many words they share; a page left without a
partner is added or removed. A pair whose text and drawn objects are the same is unchanged and
never drawn; a pair that only moved keeps its text but its page number changes, so its text is
compared without the numbers that are its own page numbers, and its images must be the same.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

MIN_SHARED = 0.3  # the part of their words two pages must share to be a pair
_WORD = re.compile(r"\w+|[^\w\s]")


@dataclass(frozen=True)
class Page:
    """One page: its 1-based number, its text, and digests of its content stream and of its images/forms."""

    number: int
    text: str
    content: str = ""
    images: str = ""


@dataclass(frozen=True)
class Pair:
    """A base page and the change's page it became (either None: removed or added); `same`: nothing to draw."""

    base: Page | None
    change: Page | None
    same: bool


def words(text: str) -> list[str]:
    """Return the words and signs of a page's text, in order."""
    return _WORD.findall(text)


def shared(a: Counter[str], b: Counter[str]) -> float:
    """Return the part of their words two pages share (Dice coefficient over word counts)."""
    total = sum(a.values()) + sum(b.values())
    return 1.0 if total == 0 else 2 * sum((a & b).values()) / total


def _without_page_number(text: str, number: int) -> list[str]:
    """Return the page's words without its page number: the last word (a footer) or else the first (a header)."""
    found = words(text)
    if found and found[-1] == str(number):
        return found[:-1]
    return found[1:] if found and found[0] == str(number) else found


def unchanged(base: Page, change: Page) -> bool:
    """Return whether the change's page shows the same as the base page (the page number aside)."""
    if base.text == change.text and base.content == change.content and base.images == change.images:
        return True
    moved = base.number != change.number
    return moved and base.images == change.images and (
        _without_page_number(base.text, base.number) == _without_page_number(change.text, change.number)
    )


def pair_pages(base: list[Page], change: list[Page]) -> list[Pair]:
    """Return the pages of both versions in order, paired by shared text (a monotone alignment, as a diff)."""
    bags_a = [Counter(words(p.text)) for p in base]
    bags_b = [Counter(words(p.text)) for p in change]
    n, m = len(base), len(change)
    score = [[0.0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            best = max(score[i + 1][j], score[i][j + 1])
            similarity = shared(bags_a[i], bags_b[j])
            if similarity >= MIN_SHARED:
                # the same text at the same distance from the start is worth a little more: ties stay in place
                best = max(best, score[i + 1][j + 1] + similarity + (1e-6 if i == j else 0.0))
            score[i][j] = best
    pairs: list[Pair] = []
    i = j = 0
    while i < n and j < m:
        similarity = shared(bags_a[i], bags_b[j])
        take = score[i + 1][j + 1] + similarity + (1e-6 if i == j else 0.0)
        if similarity >= MIN_SHARED and abs(score[i][j] - take) < 1e-9:
            pairs.append(Pair(base[i], change[j], unchanged(base[i], change[j])))
            i, j = i + 1, j + 1
        elif score[i][j] == score[i + 1][j]:
            pairs.append(Pair(base[i], None, False))
            i += 1
        else:
            pairs.append(Pair(None, change[j], False))
            j += 1
    pairs += [Pair(p, None, False) for p in base[i:]]
    pairs += [Pair(None, p, False) for p in change[j:]]
    return pairs


def token_forms(token: str) -> set[str]:
    """Return how a source token (`86.9\\%`, `12`) reads in a PDF's text (`86.9%`, `12`)."""
    plain = re.sub(r"\\([%$&#_])", r"\1", token)
    plain = re.sub(r"[{}$~]|\\[A-Za-z]+\s*", "", plain).strip()
    return {f for f in (plain, plain.rstrip("%").strip()) if f}


def count(text: str, form: str) -> int:
    """Return how often `form` stands in `text` as a whole token (not inside a longer number or word)."""
    return len(re.findall(rf"(?<![\w.]){re.escape(form)}(?![\w]|\.\d)", text))


def place(token: str, old: str | None, pair: Pair) -> bool:
    """Return whether a change of `old` to `token` shows on this pair's pages (a count that differs between them)."""
    after = pair.change.text if pair.change else ""
    before = pair.base.text if pair.base else ""
    for value in (token, old):
        for form in token_forms(value) if value else ():
            if count(after, form) != count(before, form):
                return True
    return False
