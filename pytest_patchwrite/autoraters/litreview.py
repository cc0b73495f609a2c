"""The literature-review score: its JSON schema and a validator that recomputes and flags, never overwrites."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

from .replies import schema_errors

AXES = {
    "coverage_and_completeness": 0.20,
    "relevance_and_focus": 0.15,
    "critical_analysis_and_synthesis": 0.25,
    "positioning_and_novelty": 0.25,
    "organization_and_writing": 0.10,
    "citation_practices_and_rigor": 0.05,
}
TOLERANCE = 5.0  # points an overall may stray from base - penalties + bonus before it is an error
MAX_PENALTY = 15.0
BONUS_RANGE = (3.0, 7.0)
VENUE_AVERAGES = {"cvpr2025": 58.52, "iclr2025": 59.18}

_TEXT = {"type": "string"}
_TEXTS = {"type": "array", "items": _TEXT}
_SCORE = {"type": "number", "minimum": 0, "maximum": 100}
SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["paper_title", "citation_statistics", "axis_scores", "penalties", "summary", "overall_score"],
    "properties": {
        "paper_title": _TEXT,
        "citation_statistics": {
            "type": "object",
            "required": [
                "estimated_unique_citations",
                "citation_density_assessment",
                "breadth_across_subareas",
                "comparison_to_baseline",
                "notes",
            ],  # fmt: skip
            "properties": {
                "estimated_unique_citations": {"type": "integer", "minimum": 0},
                "citation_density_assessment": {"enum": ["low", "appropriate", "high"]},
                "breadth_across_subareas": {"enum": ["narrow", "moderate", "broad"]},
                "comparison_to_baseline": _TEXT,
                "notes": _TEXT,
            },
        },
        "axis_scores": {
            "type": "object",
            "required": list(AXES),
            "properties": {
                axis: {
                    "type": "object",
                    "required": ["score", "justification"],
                    "properties": {"score": _SCORE, "justification": _TEXT},
                }  # fmt: skip
                for axis in AXES
            },
        },
        "penalties": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["reason", "points_deducted"],
                "properties": {"reason": _TEXT, "points_deducted": {"type": "number"}},
            },  # fmt: skip
        },
        "summary": {
            "type": "object",
            "required": ["strengths", "weaknesses", "top_improvements"],
            "properties": {"strengths": _TEXTS, "weaknesses": _TEXTS, "top_improvements": _TEXTS},
        },
        "bonus_points": {"type": "number", "minimum": 0},
        "overall_score": _SCORE,
    },
}

# caps the judge's own words reveal (a penalty it gave names the defect the cap is for)
_WORDED_CAPS = (
    (re.compile(r"descriptive|paper[- ]by[- ]paper|listing", re.I), "critical_analysis_and_synthesis", 60.0,
     "the review is penalized as mostly descriptive"),
    (re.compile(r"overclaim|novelty claim", re.I), "positioning_and_novelty", 60.0,
     "novelty is penalized as claimed without comparison to the closest work"),
    (re.compile(r"dump|weakly integrated", re.I), "citation_practices_and_rigor", 65.0,
     "citations are penalized as weakly integrated"),
)  # fmt: skip


def _axis_scores(data: Any) -> dict[str, float]:
    scores: dict[str, float] = {}
    axes = data.get("axis_scores") if isinstance(data, dict) else None
    for axis in AXES:
        entry = axes.get(axis) if isinstance(axes, dict) else None
        value = entry.get("score") if isinstance(entry, dict) else None
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            scores[axis] = float(value)
    return scores


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


@dataclass
class LitReviewReport:
    """A literature-review score checked: the judge's number kept, the recomputation and every broken cap beside it."""

    valid: bool
    errors: list[str]
    overall_score: float | None
    recomputed: dict[str, float | None]
    cap_violations: list[dict[str, Any]]
    citations: dict[str, Any]
    call: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        """Return the `rate litreview --json` object."""
        out = {k: v for k, v in asdict(self).items() if k != "call"}
        return out | ({"call": self.call} if self.call is not None else {})


def validate(data: Any, unique_citations: int, avg_citations: float, tolerance: float = TOLERANCE) -> LitReviewReport:
    """Return the checked score: schema, recomputed overall, deviation and broken caps (never overwritten)."""
    errors = schema_errors(data, SCHEMA)
    record = data if isinstance(data, dict) else {}
    scores = _axis_scores(record)
    overall = _number(record.get("overall_score"))
    penalties = [p for p in record.get("penalties") or [] if isinstance(p, dict)] if isinstance(
        record.get("penalties"), list) else []  # fmt: skip
    deducted = sum(abs(v) for p in penalties if (v := _number(p.get("points_deducted"))) is not None)
    bonus = _number(record.get("bonus_points")) or 0.0
    recomputed: dict[str, float | None] = {"base": None, "expected": None, "deviation": None}
    if len(scores) == len(AXES):
        base = sum(AXES[a] * s for a, s in scores.items())
        expected = min(100.0, max(0.0, base - deducted + bonus))
        recomputed = {"base": round(base, 4), "expected": round(expected, 4),
                      "deviation": round(overall - expected, 4) if overall is not None else None}  # fmt: skip
        if overall is not None and abs(overall - expected) > tolerance:
            errors.append(f"overall_score {overall:g} is {overall - expected:+.2f} from the recomputed "
                          f"{expected:.2f} (weighted base {base:.2f} - penalties {deducted:g} + bonus {bonus:g}); "
                          f"tolerance {tolerance:g}")  # fmt: skip
    violations = _caps(record, scores, overall, penalties, bonus, unique_citations, avg_citations)
    estimate = _stats(record).get("estimated_unique_citations")
    return LitReviewReport(
        valid=not errors and not any(v["severity"] == "cap" for v in violations),
        errors=errors,
        overall_score=overall,
        recomputed=recomputed,
        cap_violations=violations,
        citations={
            "unique": unique_citations,
            "ratio_to_avg": round(unique_citations / avg_citations, 4),
            "judge_estimate": estimate,
        },  # fmt: skip
    )


def _stats(record: dict[str, Any]) -> dict[str, Any]:
    stats = record.get("citation_statistics")
    return stats if isinstance(stats, dict) else {}


def _violation(rule: str, axis: str, score: float | None, limit: float, why: str, severity: str = "cap") -> dict:
    return {"rule": rule, "axis": axis, "score": score, "limit": limit, "why": why, "severity": severity}


def _caps(
    record: dict[str, Any],
    scores: dict[str, float],
    overall: float | None,
    penalties: list[dict[str, Any]],
    bonus: float,
    count: int,
    avg: float,
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    stats = _stats(record)
    few = count < 0.5 * avg
    coverage = scores.get("coverage_and_completeness")
    rigor = scores.get("citation_practices_and_rigor")
    if few and coverage is not None and coverage > 55:
        out.append(_violation("coverage_few_citations", "coverage_and_completeness", coverage, 55,
                              f"{count} unique cited works, under half the venue average {avg:g}"))  # fmt: skip
    if few and stats.get("breadth_across_subareas") == "broad" and rigor is not None and rigor > 55:
        out.append(_violation("rigor_far_below_average", "citation_practices_and_rigor", rigor, 55,
                              f"a broad problem with {count} cited works against an average of {avg:g}"))  # fmt: skip
    if stats.get("citation_density_assessment") == "low" and rigor is not None and rigor > 60:
        out.append(_violation("rigor_sparse_citations", "citation_practices_and_rigor", rigor, 60,
                              "the judge found the citations sparse"))  # fmt: skip
    for pattern, axis, limit, why in _WORDED_CAPS:
        score = scores.get(axis)
        if score is not None and score > limit and any(pattern.search(str(p.get("reason", ""))) for p in penalties):
            out.append(_violation(f"{axis}_cap", axis, score, limit, why))
    for p in penalties:
        points = _number(p.get("points_deducted"))
        if points is not None and abs(points) > MAX_PENALTY:
            out.append(_violation("penalty_range", "", abs(points), MAX_PENALTY, f"penalty {p.get('reason', '')!r}"))
    if bonus:
        critical, relevance = scores.get("critical_analysis_and_synthesis", 0), scores.get("relevance_and_focus", 0)
        if not (count > 1.5 * avg and critical > 60 and relevance > 65):
            out.append(_violation("bonus_conditions", "", bonus, 0, f"a bonus needs more than {1.5 * avg:g} cited "
                                  f"works ({count}), critical analysis > 60 and relevance > 65"))  # fmt: skip
        elif not BONUS_RANGE[0] <= bonus <= BONUS_RANGE[1]:
            out.append(_violation("bonus_range", "", bonus, BONUS_RANGE[1], "a bonus is 3 to 7 points"))
    if overall is not None and scores:
        low = min(scores.values())
        if overall > 90 and low < 86:
            out.append(_violation("overall_above_90", "", overall, 90, "above 90 needs survey-level mastery on "
                                  "every axis", "soft"))  # fmt: skip
        elif overall > 85 and low < 71:
            out.append(_violation("overall_above_85", "", overall, 85, "above 85 needs strong evidence on every "
                                  "axis", "soft"))  # fmt: skip
        if low < 50 and overall > 75:
            out.append(_violation("weak_axis", "", overall, 75, "an axis below 50 rarely allows more than 75", "soft"))
    return out
