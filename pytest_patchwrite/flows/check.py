"""Whole-manuscript checks shared by `patchwrite check` and the pytest items."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path

from ..deadline import DEFAULT_TIMEOUT
from ..gates.citelock import as_read
from ..gates.compile import CompileGate
from ..gates.evidence import NO_LOG, EvidenceConfig, EvidenceReport, engine_undefined, evaluate, record_adds
from ..gates.report import CompileReport
from ..model import GateResult
from ..snapshot import snapshot
from ..snapshot.manuscript import Manuscript, load_manuscript
from ..tex.latex import text_layer_command


@dataclass
class CheckOptions:
    """Everything a check of one manuscript may be configured with."""

    engine: str | None = None
    default_engine: str = "pdflatex"
    timeout: float = DEFAULT_TIMEOUT
    max_runs: int = 5
    warnings_fail: bool = False
    use_cache: bool = True
    cache_dir: Path | None = None
    bibs: list[Path] = field(default_factory=list)
    logs: list[Path] = field(default_factory=list)
    numbers: str = "decimals"
    strict: bool = False
    allow_numbers: list[str] = field(default_factory=list)
    # the manuscript's author is trusted: no OS sandbox, no refusals, reads not confined to its tree
    trusted: bool = False
    rootdir: Path | None = None  # bounds declared shared bibliographies and logs when no git work tree does

    def compile_gate(self, root: Path | None = None) -> CompileGate:
        """Return a compile gate configured from these options."""
        return CompileGate(
            root,
            engine=self.engine,
            default_engine=self.default_engine,
            timeout=self.timeout,
            max_runs=self.max_runs,
            cache_dir=self.cache_dir,
            use_cache=self.use_cache,
            trusted=self.trusted,
            rootdir=self.rootdir,
        )

    def evidence_config(self) -> EvidenceConfig:
        """Return the evidence locks' configuration from these options."""
        return EvidenceConfig(
            numbers=self.numbers,
            strict=self.strict,
            bibs=list(self.bibs),
            logs=list(self.logs),
            allow_numbers=list(self.allow_numbers),
            trusted=self.trusted,
            rootdir=self.rootdir,
            timeout=self.timeout,
        )


def compile_result(report: CompileReport) -> GateResult:
    """Return the compile item's verdict from a compile report."""
    details = {
        "engine": report.engine,
        "runs": report.runs,
        "seconds": round(report.seconds, 3),
        "cached": report.cached,
        "start": report.start,
        "cache_rejected": report.cache_rejected,
    }
    return GateResult(report.ok, list(report.violations), "compile", report.seconds, details)


def citations_result(evidence: EvidenceReport, report: CompileReport | None) -> GateResult:
    """Return the citations item's verdict: the cite lock plus what the engine left undefined."""
    violations = list(evidence.citations)
    seen = {as_read(v.token) for v in violations}
    # warnings of a run that stopped at an error are noise: nothing after the error was resolved
    if report is not None and report.ok:
        for violation in engine_undefined(report, evidence.ignored_cites):
            if as_read(violation.token) not in seen:
                seen.add(as_read(violation.token))
                violations.append(violation)
    details = {"bib": [str(p) for p in evidence.bib_files], "keys_defined": evidence.keys_defined}
    return GateResult.of(violations, "citations", details=details)


def numbers_result(evidence: EvidenceReport, root: Path | None = None) -> GateResult | None:
    """Return the numbers item's verdict, or None when no experimental log is declared; the pool rule's note names
    the command that binds the numbers of `root` (absolute: it works pasted anywhere; `check` shows it as its
    files, `model.show_paths`)."""
    if evidence.numbers is None:
        return None
    details: dict[str, object] = {"logs": [str(p) for p in evidence.log_files]}
    if evidence.bindings_file is not None:
        details["bindings"] = str(evidence.bindings_file)
    elif evidence.pool_only:
        details["pool_only"] = evidence.pool_only
        details["note"] = (
            f"{evidence.pool_only} number(s) pass only through the pool rule (some logged value rounds to them); "
            f"`patchwrite bind{'' if root is None else ' ' + shlex.quote(str(root))}` ties each to its log entry"
        )
    return GateResult.of(evidence.numbers, "numbers", details=details)


def placeholders_result(
    evidence: EvidenceReport, report: CompileReport | None = None, text_layer: str = ""
) -> GateResult:
    """Return the placeholders item's verdict: the candidates the compile's PDF shows, else the source rules.

    `text_layer`: a command of the manuscript that writes the PDF's text apart from its glyphs
    (`latex.text_layer_command`); the PDF's text then proves nothing and the source rules decide.
    """
    pdf = report.pdf_text if report is not None and report.ok and not text_layer else None
    details: dict[str, object] = {"pdf_checked": pdf is not None}
    if text_layer and evidence.placeholders:
        details["pdf_note"] = f"the manuscript writes the PDF's text layer itself ({text_layer})"
    elif report is not None and report.ok and report.pdf_note:
        details["pdf_note"] = report.pdf_note  # the PDF was asked for and not read: the source rules decided
    return GateResult.of(evidence.placeholders_in(pdf), "placeholders", details=details)


def check_manuscript(root: Path | Manuscript, options: CheckOptions) -> dict[str, GateResult]:
    """Return each gate's verdict on the manuscript rooted at `root`, or on its snapshot (`numbers` says `skipped`
    without a log)."""
    config = options.evidence_config()
    manuscript = root if isinstance(root, Manuscript) else load_manuscript(root, boundary=config.boundary(root))
    root = manuscript.root
    evidence = evaluate(manuscript, config)
    gate = options.compile_gate(root)
    # the PDF's text confirms a placeholder only when the manuscript lets the engine write it from the glyphs
    styles = snapshot.local_styles(manuscript)  # read once per snapshot (the evidence locks read them too)
    text_layer = text_layer_command([*manuscript.texts.values(), *styles])
    gate.extract_text = bool(evidence.placeholders) and not text_layer  # only then is the PDF's text worth reading
    report = gate.compile(manuscript)  # the snapshot: the one read of the manuscript; it takes the engine's record
    if record_adds(manuscript, evidence):
        # what the engine read decides what is checked: the second reading adds what the source's reading missed
        evidence = evaluate(manuscript, config)
    results = {"compile": compile_result(report), "citations": citations_result(evidence, report)}
    numbers = numbers_result(evidence, manuscript.root)
    skipped = {"skipped": evidence.numbers_skipped or NO_LOG}
    results["numbers"] = numbers if numbers is not None else GateResult(True, [], "numbers", details=skipped)
    results["placeholders"] = placeholders_result(evidence, report, text_layer)
    if options.warnings_fail:
        return {gate: result.strict() for gate, result in results.items()}
    return results
