"""The gates a candidate must pass, and the default set for a manuscript."""

from __future__ import annotations

from pathlib import Path

from ..model import Gate


def default_gates(
    path: Path,
    *,
    compile_gate: bool = True,
    evidence_gate: bool = True,
    engine: str | None = None,
    timeout: float | None = None,
    trusted: bool = False,
) -> list[Gate]:
    """Return the enabled gates for the manuscript at `path`, compile first."""
    from ..check import CheckOptions
    from .evidence import EvidenceGate

    options = CheckOptions(engine=engine, timeout=timeout or 60.0, trusted=trusted)
    root = None  # the manuscript that reads `path`, found by the transaction from the text it reads under its lock
    gates: list[Gate] = []
    if compile_gate:
        gates.append(options.compile_gate(root))
    if evidence_gate:
        gates.append(EvidenceGate(root, options.evidence_config()))
    return gates
