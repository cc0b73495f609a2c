"""The plugin's per-session configuration, in the config stash: read by the items, the fixtures and `fault_case`."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from .check import CheckOptions
from .gates.evidence import EvidenceReport, evaluate
from .manuscript import load_manuscript


@dataclass
class Settings:
    """The plugin's configuration, resolved once per session (ini, then command line)."""

    options: CheckOptions
    collect: bool
    max_span: int
    report: Path | None
    shared_dir: Path
    base: str | None
    max_hunk: int | None
    annotations: bool
    owns_shared_dir: bool
    extra_gates: list[Any] = field(default_factory=list)
    evidence: dict[Path, EvidenceReport] = field(default_factory=dict)

    def evidence_of(self, root: Path) -> EvidenceReport:
        """Return the evidence locks' report on `root`, evaluated once per session and process."""
        if root not in self.evidence:
            config = self.options.evidence_config()
            self.evidence[root] = evaluate(load_manuscript(root, boundary=config.boundary(root)), config)
        return self.evidence[root]


SETTINGS = pytest.StashKey[Settings]()
