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
) -> list[Gate]:
    """Return the enabled gates for the manuscript at `path`, compile first."""
    from ..manuscript import find_root
    from .compile import CompileGate
    from .evidence import EvidenceGate

    gates: list[Gate] = []
    root = find_root(path)
    if compile_gate:
        gates.append(CompileGate(root, engine=engine, timeout=timeout or 60.0))
    if evidence_gate:
        gates.append(EvidenceGate(root))
    return gates
