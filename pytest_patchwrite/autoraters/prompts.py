"""The judges' prompts and reply schemas, in one place and versioned: change a text, bump its version."""

from __future__ import annotations

from typing import Any

from .litreview import AXES
from .litreview import SCHEMA as LITREVIEW_SCHEMA

SXS_VERSION = "sxs-1"
LITREVIEW_VERSION = "litreview-1"
LABELS_VERSION = "labels-1"

_TEXT = {"type": "string"}
SXS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["paper_1_analysis", "paper_2_analysis", "justification", "winner"],
    "properties": {
        "paper_1_analysis": _TEXT,
        "paper_2_analysis": _TEXT,
        "justification": _TEXT,
        "winner": {"enum": ["paper_1", "paper_2", "tie"]},
    },
}

SXS_CRITERIA = {
    "paper": (
        "Judge the whole paper: novelty and significance of the contribution; technical soundness; clarity of "
        "the writing; how the evidence is presented (tables, figures, formatting problems such as overflowing "
        "tables or misplaced figures); how the work is positioned against related work."
    ),
    "litreview": (
        "Judge only the literature review: the Introduction and the Related Work / Background sections you are "
        "given. Weigh coverage of the relevant prior work, synthesis across works rather than a list of "
        "summaries, how clearly the contribution is positioned against the closest work, and citation practice."
    ),
}

SXS_SYSTEM = """You are a careful reviewer comparing two versions of a scientific manuscript, given as LaTeX.
{criteria}
The order in which the papers are shown says nothing about their quality. Length alone is no quality.
Reply with one JSON object and nothing else:
{{"paper_1_analysis": "...", "paper_2_analysis": "...", "justification": "...", "winner": "paper_1"}}
where winner is exactly "paper_1", "paper_2" or "tie"."""


def sxs_messages(first: str, second: str, aspect: str) -> list[dict[str, str]]:
    """Return the chat messages of one side-by-side call (`first` is shown as paper_1)."""
    system = SXS_SYSTEM.format(criteria=SXS_CRITERIA[aspect])
    user = f"paper_1:\n<<<\n{first}\n>>>\n\npaper_2:\n<<<\n{second}\n>>>"
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


LITREVIEW_SYSTEM = """You grade the literature review of one scientific manuscript (its Introduction and Related
Work / Background sections, given as LaTeX) from 0 to 100 on six axes, weights in brackets:
coverage_and_completeness [20%], relevance_and_focus [15%], critical_analysis_and_synthesis [25%],
positioning_and_novelty [25%], organization_and_writing [10%], citation_practices_and_rigor [5%].
Anchors: 0-20 unacceptable, 21-40 weak, 41-55 adequate but flawed, 56-70 solid, 71-85 strong,
86-92 excellent, 93-100 exceptional. Most reviews land between 45 and 70. Above 85 needs strong
evidence on every axis; above 90 near survey-level mastery; an axis below 50 rarely allows an overall above 75.
Caps: a mostly descriptive, paper-by-paper review: critical analysis at most 60. Novelty claimed without an
explicit comparison to the closest work: positioning at most 60. Sparse or inconsistent citations: citation
rigor at most 60. Fewer cited works than half the venue average: coverage at most 55. Many weakly integrated
citations: citation rigor at most 65. A high count alone is no quality.
Penalties (subtract from the overall): overclaiming novelty 5-15, missing key recent work 5-15, mostly
descriptive 5-10, weak gap statements 5-10, citation dumping 5-10.
overall_score = the weighted sum of the axes minus the penalties.
Reply with one JSON object and nothing else, with the keys paper_title, citation_statistics
(estimated_unique_citations, citation_density_assessment: low|appropriate|high, breadth_across_subareas:
narrow|moderate|broad, comparison_to_baseline, notes), axis_scores (each axis: score, justification),
penalties (a list of reason, points_deducted), summary (strengths, weaknesses, top_improvements: lists of
strings) and overall_score."""


def litreview_messages(sections: str, unique_citations: int, avg_citations: float) -> list[dict[str, str]]:
    """Return the chat messages of one literature-review grading call."""
    user = (
        f"The manuscript cites {unique_citations} unique works; the venue's average is {avg_citations:g}.\n\n"
        f"Sections:\n<<<\n{sections}\n>>>"
    )
    return [{"role": "system", "content": LITREVIEW_SYSTEM}, {"role": "user", "content": user}]


LABELS_SYSTEM = """You label each reference of a scientific manuscript.
P0 (must cite): work the paper directly builds on, compares against, or uses as a baseline, dataset or method;
a reviewer would flag its absence. P1 (good to cite): background and related work.
Reply with one JSON object mapping every reference number to "P0" or "P1" and nothing else, e.g.
{"1": "P0", "2": "P1"}."""


def labels_schema(n: int) -> dict[str, Any]:
    """Return the schema of a labelling reply for references 1..n."""
    keys = [str(i) for i in range(1, n + 1)]
    return {"type": "object", "required": keys, "properties": {k: {"enum": ["P0", "P1", "p0", "p1"]} for k in keys}}


def labels_messages(listing: str, context: str) -> list[dict[str, str]]:
    """Return the chat messages of one labelling call: the paper's opening text and its numbered references."""
    user = f"Manuscript (opening):\n<<<\n{context}\n>>>\n\nReferences:\n{listing}"
    return [{"role": "system", "content": LABELS_SYSTEM}, {"role": "user", "content": user}]


__all__ = ["AXES", "LITREVIEW_SCHEMA", "SXS_SCHEMA"]
