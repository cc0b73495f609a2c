"""The paper's fault corpus: 24 mini-articles, 8 fault injectors, oracle repairs, the stress harness."""

from .documents import BUILDS, DOCUMENTS, CorpusDocument, materialize, select
from .faults import COMPILE_FAULTS, CONTENT_FAULTS, FAULTS, Fault, FaultNotApplicable, inject

__all__ = [
    "BUILDS",
    "COMPILE_FAULTS",
    "CONTENT_FAULTS",
    "DOCUMENTS",
    "FAULTS",
    "CorpusDocument",
    "Fault",
    "FaultNotApplicable",
    "inject",
    "materialize",
    "select",
]
