"""Whole-manuscript checks shared by `patchwrite check` and the pytest items."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .gates.compile import CompileGate, CompileReport
from .model import GateResult


@dataclass
class CheckOptions:
    """Everything a check of one manuscript may be configured with."""

    engine: str | None = None
    default_engine: str = "pdflatex"
    timeout: float = 60.0
    use_cache: bool = True
    cache_dir: Path | None = None
    bibs: list[Path] = field(default_factory=list)
    logs: list[Path] = field(default_factory=list)
    numbers: str = "decimals"
    strict: bool = False
    allow_numbers: list[str] = field(default_factory=list)

    def compile_gate(self, root: Path | None = None) -> CompileGate:
        """Return a compile gate configured from these options."""
        return CompileGate(
            root,
            engine=self.engine,
            default_engine=self.default_engine,
            timeout=self.timeout,
            cache_dir=self.cache_dir,
            use_cache=self.use_cache,
        )


def compile_result(report: CompileReport) -> GateResult:
    """Return the compile item's verdict from a compile report."""
    details = {
        "engine": report.engine,
        "runs": report.runs,
        "seconds": round(report.seconds, 3),
        "cached": report.cached,
    }
    return GateResult(report.ok, list(report.violations), "compile", report.seconds, details)


def check_manuscript(root: Path, options: CheckOptions) -> dict[str, GateResult]:
    """Return each gate's verdict on the manuscript rooted at `root`."""
    report = options.compile_gate(root).compile(root)
    return {"compile": compile_result(report)}
