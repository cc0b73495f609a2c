"""Autoraters: Citation F1, side-by-side judgments, literature-review scores and the halt rule."""

from .citation_metrics import CitationF1, citation_f1, macro_average
from .halt import decide
from .litreview import validate
from .references import Reference, ReferenceList, load_references
from .sxs import Aggregate, aggregate, batch

__all__ = [
    "Aggregate",
    "CitationF1",
    "Reference",
    "ReferenceList",
    "aggregate",
    "batch",
    "citation_f1",
    "decide",
    "load_references",
    "macro_average",
    "validate",
]
