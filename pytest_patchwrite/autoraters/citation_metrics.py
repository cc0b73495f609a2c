"""Citation F1 of a generated paper's references against a ground-truth paper's, in the two published modes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError
from .matching import Matching, match_references
from .references import Reference

MODES = ("skill", "paperorchestra")
LABELS = ("P0", "P1")
Partition = dict[int, str]


def parse_partition(data: Any, references: list[Reference], source: str) -> Partition:
    """Return {reference number: "P0"|"P1"} from `{"1": "p0", ...}`; raise InputError naming `source` otherwise."""
    if not isinstance(data, dict):
        raise InputError(source, 'a partition is a JSON object keyed by reference number: {"1": "P0", "2": "P1"}')
    numbers = {r.num for r in references}
    partition: Partition = {}
    for key, label in data.items():
        if not str(key).strip().isdigit() or int(key) not in numbers:
            raise InputError(source, f"key {key!r} is not a reference number (1..{len(references)}, see `rate refs`)")
        if not isinstance(label, str) or label.strip().upper() not in LABELS:
            raise InputError(source, f"reference {key}: label {label!r} is neither P0 nor P1")
        partition[int(key)] = label.strip().upper()
    return partition


@dataclass
class Block:
    """Precision, recall and F1 of one class; each is 0 when its denominator is 0 (`defined` says so)."""

    precision: float
    recall: float
    f1: float
    n_gt: int
    n_gen: int
    n_intersection: int
    defined: bool

    def to_json(self) -> dict[str, Any]:
        """Return the block as JSON."""
        return dict(self.__dict__)


def score(gt: set[str], gen: set[str]) -> Block:
    """Return P = |G∩H|/|H|, R = |G∩H|/|G|, F1 = 2PR/(P+R), each 0 when its denominator is 0."""
    both = len(gt & gen)
    precision = both / len(gen) if gen else 0.0
    recall = both / len(gt) if gt else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return Block(precision, recall, f1, len(gt), len(gen), both, bool(gt) and bool(gen))


def _recall(gt: set[str], gen: set[str]) -> float | None:
    return len(gt & gen) / len(gt) if gt else None


@dataclass
class Side:
    """One paper's references as work ids: duplicates folded, unresolved set aside, labels attached."""

    references: list[Reference]
    work: dict[int, str] = field(default_factory=dict)  # reference number -> work id (resolved only)
    canonical: list[Reference] = field(default_factory=list)  # first reference of each work
    labels: dict[str, set[str]] = field(default_factory=dict)  # work id -> labels it carries
    counts: dict[str, int] = field(default_factory=dict)

    @classmethod
    def build(cls, references: list[Reference], partition: Partition | None) -> Side:
        """Return the side with duplicates (same identity key) folded onto their first reference."""
        side = cls(references)
        first: dict[str, Reference] = {}
        duplicates = 0
        for ref in references:
            if not ref.resolved or ref.id is None:
                continue
            if ref.id in first:
                duplicates += 1
            else:
                first[ref.id] = ref
                side.canonical.append(ref)
        side.counts = {
            "references": len(references),
            "unresolved": sum(1 for r in references if not r.resolved or r.id is None),
            "duplicates": duplicates,
        }
        return side

    def assign(self, work_of: dict[str, str], partition: Partition | None) -> None:
        """Give every resolved reference the work id of its canonical reference; gather labels per work."""
        for ref in self.references:
            if ref.resolved and ref.id is not None:
                self.work[ref.num] = work_of[ref.id]
                if partition is not None and ref.num in partition:
                    self.labels.setdefault(work_of[ref.id], set()).add(partition[ref.num])
        if partition is not None:
            # per work: a duplicate of a labelled reference is not unlabeled
            self.counts["unlabeled"] = len(set(self.work.values()) - set(self.labels))
            self.counts["both_labels"] = sum(1 for labels in self.labels.values() if len(labels) > 1)

    def ids(self, label: str | None = None) -> set[str]:
        """Return the work ids carrying `label` (every labelled one for None)."""
        if label is None:
            return set(self.labels)
        return {w for w, labels in self.labels.items() if label in labels}

    def all_ids(self) -> set[str]:
        """Return every resolved work id, labelled or not."""
        return set(self.work.values())


def _ref_json(ref: Reference) -> dict[str, Any]:
    return {"num": ref.num, "key": ref.key, "title": ref.title}


@dataclass
class CitationF1:
    """The result of one comparison; `to_json` is the `rate citation-f1 --json` object."""

    mode: str
    overall: Block
    p0: Block | None = None
    p1: Block | None = None
    p0_recall: float | None = None
    p1_recall: float | None = None
    partitioned: bool = True
    unmatched_gt: list[Reference] = field(default_factory=list)
    unmatched_gen: list[Reference] = field(default_factory=list)
    matches: list[tuple[int, int, str, float]] = field(default_factory=list)
    counts: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def f1(self) -> float:
        """Return the overall F1."""
        return self.overall.f1

    def to_json(self) -> dict[str, Any]:
        """Return the JSON shape of the mode (skill: P0, P1, overall; paperorchestra: overall and recalls)."""
        out: dict[str, Any] = {"mode": self.mode}
        if self.mode == "skill":
            out["P0"] = self.p0.to_json() if self.p0 else None
            out["P1"] = self.p1.to_json() if self.p1 else None
            out["overall"] = self.overall.to_json()
        else:
            out.update(overall=self.overall.to_json(), p0_recall=self.p0_recall, p1_recall=self.p1_recall)
        if not self.partitioned:
            out["note"] = "no partitions: only the overall block, over every resolved reference"
        out["unmatched_gt"] = [_ref_json(r) for r in self.unmatched_gt]
        out["unmatched_gen"] = [_ref_json(r) for r in self.unmatched_gen]
        out["matches"] = [{"gt": g, "gen": h, "how": how, "score": round(s, 2)} for g, h, how, s in self.matches]
        out["counts"] = self.counts
        return out


def citation_f1(
    gt: list[Reference],
    gen: list[Reference],
    gt_partition: Partition | None = None,
    gen_partition: Partition | None = None,
    mode: str = "skill",
) -> CitationF1:
    """Return Citation F1 of `gen` against `gt` in `mode` (skill: both partitioned; paperorchestra: the GT only)."""
    if mode not in MODES:
        raise InputError("--mode", f"unknown mode {mode!r}; use skill or paperorchestra")
    if mode == "paperorchestra":
        gen_partition = None
    elif (gt_partition is None) != (gen_partition is None):
        raise InputError("--gt-partition/--gen-partition", "skill mode partitions both papers, or neither")
    gt_side, gen_side = Side.build(gt, gt_partition), Side.build(gen, gen_partition)
    matching: Matching = match_references(gt_side.canonical, gen_side.canonical)
    gt_work = {r.id: f"gt{r.num}" for r in gt_side.canonical if r.id}
    gen_work: dict[str, str] = {r.id: f"gen{r.num}" for r in gen_side.canonical if r.id}
    for m in matching.matches:
        gen_id = gen_side.canonical[m.gen].id
        if gen_id:
            gen_work[gen_id] = gt_work[gt_side.canonical[m.gt].id or ""]
    gt_side.assign(gt_work, gt_partition)
    gen_side.assign(gen_work, gen_partition)
    result = CitationF1(mode, score(gt_side.all_ids(), gen_side.all_ids()), partitioned=gt_partition is not None)
    result.unmatched_gt = [gt_side.canonical[i] for i in matching.unmatched_gt]
    result.unmatched_gen = [gen_side.canonical[j] for j in matching.unmatched_gen]
    result.matches = [(gt_side.canonical[m.gt].num, gen_side.canonical[m.gen].num, m.how, m.score)
                      for m in matching.matches]  # fmt: skip
    result.counts = {"gt": gt_side.counts, "gen": gen_side.counts}
    if gt_partition is None:
        return result
    if mode == "skill":
        result.p0 = score(gt_side.ids("P0"), gen_side.ids("P0"))
        result.p1 = score(gt_side.ids("P1"), gen_side.ids("P1"))
        result.overall = score(gt_side.ids(), gen_side.ids())
    else:
        p0 = gt_side.ids("P0")  # an id labelled both ways is P0; an unlabelled one is P1
        p1 = gt_side.all_ids() - p0
        generated = gen_side.all_ids()
        result.p0_recall, result.p1_recall = _recall(p0, generated), _recall(p1, generated)
    return result


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def macro_average(results: list[CitationF1]) -> dict[str, Any]:
    """Return the mean of each per-paper metric (undefined blocks count as their 0, as in the sources)."""
    out: dict[str, Any] = {"n_papers": len(results)}
    blocks = ("P0", "P1", "overall") if results and results[0].mode == "skill" else ("overall",)
    for name in blocks:
        values = [getattr(r, name.lower()) for r in results]
        present = [b for b in values if b is not None]
        out[name] = (
            {metric: _mean([getattr(b, metric) for b in present]) for metric in ("precision", "recall", "f1")}
            | {"n_defined": sum(1 for b in present if b.defined), "n": len(present)}
            if present
            else None
        )
    if results and results[0].mode == "paperorchestra":
        for name in ("p0_recall", "p1_recall"):
            out[name] = _mean([v for r in results if (v := getattr(r, name)) is not None])
    totals: dict[str, dict[str, int]] = {}
    for r in results:
        for side, counts in r.counts.items():
            for k, v in counts.items():
                totals.setdefault(side, {}).setdefault(k, 0)
                totals[side][k] += v
    out["counts"] = totals
    return out
