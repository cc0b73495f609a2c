"""The gates a candidate must pass, and the default set for a manuscript."""

from __future__ import annotations

from pathlib import Path

from ..deadline import DEFAULT_TIMEOUT
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
    from .compile import CompileGate
    from .evidence import EvidenceConfig, EvidenceGate

    seconds = timeout or DEFAULT_TIMEOUT
    root = None  # the manuscript that reads `path`, found by the transaction from the text it reads under its lock
    gates: list[Gate] = []
    if compile_gate:
        gates.append(CompileGate(root, engine=engine, timeout=seconds, trusted=trusted))
    if evidence_gate:
        gates.append(EvidenceGate(root, EvidenceConfig(trusted=trusted, timeout=seconds)))
    return gates
