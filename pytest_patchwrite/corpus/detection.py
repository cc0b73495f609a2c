"""Detection of the content faults by `check`: the pool rule against bindings, per fault (summary.json `detection`).

For each corpus manuscript the clean HEAD is bound (`patchwrite bind`), then each content fault
is injected and the faulted manuscript checked twice: with the documented pool rule (no bindings
file) and with the clean HEAD's bindings file. The paper's conditions are untouched by this.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from ..flows.bind import bind_root
from ..flows.check import citations_result, compile_result, numbers_result, placeholders_result
from ..gates.compile import CompileGate
from ..gates.evidence import EvidenceConfig, EvidenceReport, evaluate
from ..snapshot.manuscript import load_manuscript
from .documents import DOCUMENTS, materialize
from .faults import CONTENT_FAULTS, inject

PAPER_NOTE = "the paper: swapped_acc is caught by no gate (both numbers are in the log)"


def _fails(evidence: EvidenceReport, report: Any) -> bool:
    results = [compile_result(report), citations_result(evidence, report), placeholders_result(evidence, report)]
    numbers = numbers_result(evidence)
    if numbers is not None:
        results.append(numbers)
    return not all(r.ok for r in results)


def detect_manuscript(doc_id: str, build: str, engine: str | None, timeout: float, cache_dir: str,
                      trusted: bool = False) -> dict[str, tuple[bool, bool]]:  # fmt: skip
    """Return, per content fault, whether `check` fails the faulted manuscript: (pool rule, bindings)."""
    doc = DOCUMENTS[doc_id]
    head = doc.head(build)
    out: dict[str, tuple[bool, bool]] = {}
    with tempfile.TemporaryDirectory(prefix="patchwrite-detect-") as tmp:
        clean = materialize(doc, Path(tmp) / "clean", build)
        bindings = bind_root(clean, EvidenceConfig()).new_text
        for fault_name in CONTENT_FAULTS:
            root = materialize(doc, Path(tmp) / fault_name, build, inject(head, fault_name).broken)
            gate = CompileGate(root, engine=engine, timeout=timeout, cache_dir=cache_dir or None,
                               use_cache=bool(cache_dir), trusted=trusted)  # fmt: skip
            report = gate.compile(root)
            config = EvidenceConfig()
            manuscript = load_manuscript(root, boundary=config.boundary(root))
            pool = evaluate(manuscript, config, bindings_from_disk=False)
            bound = evaluate(manuscript, config, bindings_text=bindings)
            out[fault_name] = (_fails(pool, report), _fails(bound, report))
    return out


def summarize_detection(per_doc: dict[str, dict[str, tuple[bool, bool]]]) -> dict[str, Any]:
    """Return the `detection` object: per content fault, the share of faulted manuscripts whose check fails."""
    faults: dict[str, Any] = {}
    for fault in CONTENT_FAULTS:
        rows = [found[fault] for found in per_doc.values() if fault in found]
        if rows:
            faults[fault] = {
                "n": len(rows),
                "pool": round(sum(p for p, _ in rows) / len(rows), 4),
                "bindings": round(sum(b for _, b in rows) / len(rows), 4),
            }
    return {"manuscripts": len(per_doc), "faults": faults, "note": PAPER_NOTE}
