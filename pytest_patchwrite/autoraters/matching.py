"""Offline matching of two reference lists: identifiers first, then fuzzy titles, one-to-one."""

from __future__ import annotations

from dataclasses import dataclass, field

from rapidfuzz import fuzz, process

from .references import Reference

THRESHOLD = 70.0  # Indel ratio a fuzzy title match must exceed (the sources' value)
YEAR_VETO = 90.0  # below this ratio, two different years mean two different works
EXACT = 101.0  # the score of an identifier match, above any fuzzy ratio


@dataclass
class Match:
    """One matched pair: indexes into the ground-truth and generated lists, the score and how it matched."""

    gt: int
    gen: int
    score: float
    how: str


@dataclass
class Matching:
    """A one-to-one matching and what stayed unmatched on each side (indexes into the lists)."""

    matches: list[Match] = field(default_factory=list)
    unmatched_gt: list[int] = field(default_factory=list)
    unmatched_gen: list[int] = field(default_factory=list)

    def gen_to_gt(self) -> dict[int, int]:
        """Return {generated index: ground-truth index}."""
        return {m.gen: m.gt for m in self.matches}


def _identifier_match(a: Reference, b: Reference) -> str | None:
    """Return which identifier says `a` and `b` are one work, or None."""
    for name in ("doi", "arxiv", "external"):
        x, y = getattr(a, name), getattr(b, name)
        if x and y and x == y:
            return name
    if a.norm_title and a.norm_title == b.norm_title and not _different_ids(a, b):
        return "title"
    return None


def _different_ids(a: Reference, b: Reference) -> bool:
    """Return whether both carry the same kind of identifier with different values (two different works)."""
    return any(getattr(a, n) and getattr(b, n) and getattr(a, n) != getattr(b, n) for n in ("doi", "arxiv", "external"))


def match_references(gt: list[Reference], gen: list[Reference], threshold: float = THRESHOLD) -> Matching:
    """Return the one-to-one matching of `gen` onto `gt` (greedy by best score; same year breaks ties)."""
    candidates: list[tuple[float, int, int, int, str]] = []  # (score, same year, -gen, -gt, how)
    exact_gen: set[int] = set()
    for j, b in enumerate(gen):
        for i, a in enumerate(gt):
            how = _identifier_match(a, b)
            if how:
                candidates.append((EXACT, int(a.year == b.year), -j, -i, how))
                exact_gen.add(j)
    gt_titles = [r.norm_title for r in gt]
    gen_rows = [j for j, r in enumerate(gen) if r.norm_title]
    if gen_rows and any(gt_titles):
        scores = process.cdist([gen[j].norm_title for j in gen_rows], gt_titles, scorer=fuzz.ratio,
                               score_cutoff=threshold, workers=1)  # fmt: skip
        for row, j in enumerate(gen_rows):
            b = gen[j]
            for i in scores[row].nonzero()[0]:
                a, ratio = gt[int(i)], float(scores[row][i])
                if ratio <= threshold or not a.norm_title or _different_ids(a, b):
                    continue
                if a.year and b.year and a.year != b.year and ratio < YEAR_VETO:
                    continue
                candidates.append((ratio, int(a.year == b.year), -j, -int(i), "title~"))
    candidates.sort(reverse=True)
    matching = Matching()
    used_gt: set[int] = set()
    used_gen: set[int] = set()
    for score, _same_year, neg_j, neg_i, how in candidates:
        i, j = -neg_i, -neg_j
        if i in used_gt or j in used_gen:
            continue
        used_gt.add(i)
        used_gen.add(j)
        matching.matches.append(Match(i, j, min(score, 100.0), how))
    matching.matches.sort(key=lambda m: m.gt)
    matching.unmatched_gt = [i for i in range(len(gt)) if i not in used_gt]
    matching.unmatched_gen = [j for j in range(len(gen)) if j not in used_gen]
    return matching
