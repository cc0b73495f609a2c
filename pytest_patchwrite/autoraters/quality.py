"""The `quality` item: the change judged against the base (order-swapped), and the halt rule on its review."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..flows.prdiff import GitBase
from ..model import GateResult, Violation
from .halt import decide
from .judges import Judge, JudgeCall, run_sxs, score_litreview
from .litreview import validate
from .references import load_references
from .sections import flatten, review_sections


def _review(flat: str) -> str:
    return "\n\n".join(s.text for s in review_sections(flat))


def _unreadable(root: Path, what: str, call: JudgeCall) -> Violation:
    raw = (call.raw or "")[:200]
    return Violation("judge_error", str(root), 1, what, f"the judge's reply is unreadable ({'; '.join(call.errors)}); "
                     f"raw reply: {raw!r}")  # fmt: skip


def quality_result(root: Path, base_rev: str, judge: Judge, avg_citations: float) -> GateResult | None:
    """Return the change's verdict against `base_rev`; None when the base has no such manuscript."""
    base = GitBase.open(root.parent, base_rev)
    if base.text(root) is None:
        return None
    before = flatten(root, lambda p: base.text(p) if p.resolve().is_relative_to(base.top.resolve()) else None)
    after = flatten(root)
    details: dict[str, Any] = {"base": base_rev, "judge": judge.model}
    if before == after:
        details["unchanged"] = True
        return GateResult(True, [], "quality", 0.0, details)
    violations: list[Violation] = []
    notes: list[str] = []
    sxs = run_sxs(judge, after, before, "paper")  # A = the change, B = the base
    details["sxs"] = sxs.to_json()
    notes.append(f"side by side, A = this change, B = {base_rev}:")
    notes += [f"  {line}" for line in sxs.describe().splitlines()]
    notes.append(f"  outcome for the change: {sxs.outcome or 'unreadable'}")
    if sxs.outcome == "loss":
        violations.append(Violation("sxs_loss", str(root), 1, "", f"the change loses to {base_rev} in both orders"))
    for call, winner in zip(sxs.calls, sxs.winners, strict=True):
        if winner is None:
            violations.append(_unreadable(root, "sxs", call))
    if _review(before) != _review(after) and _review(after):
        count = load_references(root).unique_works()
        scores = [score_litreview(judge, text, count, avg_citations) for text in (_review(before), _review(after))]
        details["litreview"] = [validate(c.data, count, avg_citations).to_json() | {"call": c.to_json()}
                                for c in scores]  # fmt: skip
        if all(c.ok for c in scores):
            halt = decide(scores[0].data, scores[1].data, sources=(f"{base_rev} review score", "change review score"))
            details["halt"] = halt
            notes.append(f"literature review: {scores[0].data['overall_score']} at {base_rev} -> "
                         f"{scores[1].data['overall_score']} now: {halt['decision']}")  # fmt: skip
            if not halt["accepted"]:
                violations.append(Violation("litreview_revert", str(root), 1, "", f"{halt['decision']}: the "
                                            f"Introduction / Related Work score moved {halt['delta']:+g}"))  # fmt: skip
        else:
            violations += [_unreadable(root, "litreview", c) for c in scores if not c.ok]
    details["notes"] = notes
    return GateResult(not violations, violations, "quality", sum(c.seconds for c in sxs.calls), details)
