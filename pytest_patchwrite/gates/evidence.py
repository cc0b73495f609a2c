"""Evidence locks: cite keys defined by a bibliography, numbers attested by a log, no placeholders."""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..deadline import OutOfTime, within
from ..errors import InputError
from ..files.paths import Boundary
from ..model import ERROR, GateResult, PatchContext, Violation
from ..numbers.explog import EvidenceLog
from ..snapshot import snapshot
from ..snapshot.bib import Bibliography
from ..snapshot.manuscript import Manuscript
from ..tex.latex import Scan, scan
from ..tex.magic import magic_comments
from ..tex.placeholders import find as find_placeholders
from ..tex.placeholders import seen_in
from ..tex.texcites import cite_commands
from ..tex.texconditionals import false_conditionals
from ..tex.texnumbers import document_language
from .citelock import (
    as_read,
    bibliography_of,
    cite_violations,
    engine_bibliographies,
)
from .headrules import bibitem_changes, carried_suppressions, settings_changes
from .lognumbers import number_lock

POLICIES = ("decimals", "all", "off")
UNATTESTED, CITED = "unattested_number", "cited_number"
NO_LOG = "no experimental log declared"


@dataclass
class EvidenceConfig:
    """How the evidence locks are configured; magic comments in the root override it."""

    cites: bool = True
    numbers: str = "decimals"
    strict: bool = False
    placeholders: bool = True
    bibs: list[Path] = field(default_factory=list)
    logs: list[str | Path] = field(default_factory=list)
    allow_numbers: list[str] = field(default_factory=list)
    trusted: bool = False  # read any file the manuscript names (a trusted author)
    rootdir: Path | None = None  # bounds shared bibliographies and logs when no git work tree does
    timeout: float | None = None  # seconds the locks may take on one manuscript (`--timeout`); None: no bound

    def boundary(self, root: Path | str) -> Boundary:
        """Return where the manuscript rooted at `root` may read files from under this configuration."""
        return Boundary.for_root(Path(root).resolve(), self.rootdir, self.trusted)

    def for_manuscript(self, manuscript: Manuscript, root_text: str | None = None) -> EvidenceConfig:
        """Return this config with the root's (or `root_text`'s) `% !patchwrite key = value` comments applied."""
        magic = magic_comments(manuscript.texts[manuscript.root] if root_text is None else root_text)
        base = manuscript.directory
        config = EvidenceConfig(**{k: getattr(self, k) for k in self.__dataclass_fields__})
        if "patchwrite.log" in magic:
            config.logs = [base / p.strip() for p in magic["patchwrite.log"].split(",") if p.strip()]
        if "patchwrite.bib" in magic:
            config.bibs = [base / p.strip() for p in magic["patchwrite.bib"].split(",") if p.strip()]
        if "patchwrite.numbers" in magic:
            policy = magic["patchwrite.numbers"].strip().lower()
            config.strict = policy == "strict" or config.strict
            config.numbers = "decimals" if policy == "strict" else policy
            if config.numbers not in POLICIES:
                raise InputError(manuscript.root, f"unknown number policy {policy!r}; use decimals, all, strict or off")
        if "patchwrite.allow" in magic:
            config.allow_numbers = [*config.allow_numbers, *magic["patchwrite.allow"].replace(",", " ").split()]
        return config


@dataclass
class EvidenceReport:
    """The three locks' findings on one manuscript; `numbers` is None when no log is declared."""

    citations: list[Violation]
    numbers: list[Violation] | None
    placeholders: list[Violation]
    bib_files: list[Path]
    log_files: list[Path]
    keys_defined: int
    log: EvidenceLog | None = None
    probes: list[str | None] = field(default_factory=list)  # per placeholder: the text a PDF would show
    numbers_skipped: str | None = None  # why `numbers` is None
    pool_only: int = 0  # numbers that pass only because some logged value rounds to them (no bindings file)
    bindings_file: Path | None = None  # the bindings file the lock used, if any
    timed_out: bool = False  # the locks ran past their time (`evaluate`): every list holds that `timeout`
    cited: frozenset[str] = frozenset()  # the keys the source's citation commands cite (the static scan)
    declared_bibs: list[Path] = field(default_factory=list)  # `patchwrite_bib` / `% !patchwrite bib` files
    recorded_cites: frozenset[str] = frozenset()  # keys reported only through the compile's record (its .aux)
    ignored_cites: frozenset[str] = frozenset()  # keys cited on a `% patchwrite: ignore [cite]` line

    def placeholders_in(self, pdf_text: str | None) -> list[Violation]:
        """Return the placeholders the PDF's text confirms; all of them (the source rules) without a PDF."""
        if pdf_text is None:
            return list(self.placeholders)
        return [v for v, seen in zip(self.placeholders, seen_in(self.probes, pdf_text), strict=True) if seen]


def evaluate(
    manuscript: Manuscript,
    config: EvidenceConfig,
    head: dict[Path, str] | None = None,
    bindings_text: str | None = None,
    bindings_from_disk: bool = True,
) -> EvidenceReport:
    """Return every evidence violation of a manuscript, located in the file that holds it.

    `head`: the texts at HEAD (or the base) by file; when given, configuration and
    suppressions come from them, never from the manuscript being judged (a file
    missing from `head` has none). The number lock uses the bindings file when there is one:
    `bindings_text` (the base's, in a diff), else the file on disk unless `bindings_from_disk` is off.
    Past `config.timeout` seconds the locks stop and each reports a `timeout` (`timed_out`): a
    manuscript cannot make the Python side run unbounded.
    """
    done = _Done()
    try:
        with within(config.timeout):
            return _evaluate(manuscript, config, head, bindings_text, bindings_from_disk, done)
    except OutOfTime as exc:
        what = done.doing or "a manuscript this large or this dense with numbers"
        message = (f"the evidence locks did not finish within {exc.seconds:g} s and were stopped ({what}); "
                   "raise --timeout / patchwrite_timeout")  # fmt: skip
        stopped = [Violation("timeout", str(manuscript.root), 0, "", message)]
        # the locks that finished before the time ran out keep their findings (the number lock reads the logs last)
        citations = done.citations if done.citations is not None else list(stopped)
        nothing: list[str | None] = [None]
        placeholders, probes = done.placeholders if done.placeholders is not None else (list(stopped), nothing)
        return EvidenceReport(citations, list(stopped), placeholders, done.bib_files, [], done.keys, probes=probes,
                              timed_out=True)  # fmt: skip


@dataclass
class _Done:
    """What `_evaluate` finished before a timeout stopped it, and what it was doing then."""

    doing: str = ""
    citations: list[Violation] | None = None
    placeholders: tuple[list[Violation], list[str | None]] | None = None
    bib_files: list[Path] = field(default_factory=list)
    keys: int = 0

    def reading(self, doing: str) -> None:
        """Note what the locks are reading now (what a timeout names)."""
        self.doing = doing


def _evaluate(
    manuscript: Manuscript,
    config: EvidenceConfig,
    head: dict[Path, str] | None,
    bindings_text: str | None,
    bindings_from_disk: bool,
    done: _Done,
) -> EvidenceReport:
    config_text = manuscript.root_text if head is None else head.get(manuscript.root, "")
    config = config.for_manuscript(manuscript, config_text)
    reading = _read(manuscript, head)
    citations, bibliography, recorded = _cite_lock(manuscript, reading, config, config_text)
    done.citations, done.bib_files, done.keys = list(citations), bibliography.files, len(bibliography.keys)
    placeholders, probes = _placeholder_lock(manuscript, reading, config)
    done.placeholders = (list(placeholders), list(probes))
    given = (bindings_text, bindings_from_disk)
    numbers = number_lock(manuscript, reading.scans, config, config_text, given, done.reading)

    log_files = numbers.log.files if numbers.log else []
    keys = len(bibliography.keys)
    skipped = None if numbers.found is not None else (NO_LOG if not config.logs else "the number policy is off")
    report = EvidenceReport(citations, numbers.found, placeholders, bibliography.files, log_files, keys, numbers.log,
                            probes, skipped)  # fmt: skip
    report.pool_only, report.bindings_file = numbers.pool_only, numbers.bindings_file
    report.cited = frozenset(cite.key for s in reading.scans for cite in s.citations)
    report.declared_bibs = [Path(p) for p in config.bibs]
    report.recorded_cites = frozenset(v.token for v in recorded)
    ignored = (as_read(c.key) for s in reading.scans for c in s.citations if s.is_suppressed(c.line, "cite"))
    report.ignored_cites = frozenset(ignored)
    return report


@dataclass
class _Reading:
    """The manuscript as the three locks read it: one scan per file, the conditionals known false, the citation
    commands (the manuscript's own wrappers too)."""

    scans: list[Scan]
    false_ifs: frozenset[str]
    cites: frozenset[str]


def _read(manuscript: Manuscript, head: dict[Path, str] | None) -> _Reading:
    """Return the scans of the manuscript's files, each with HEAD's suppressions when `head` is given."""
    # a local class or style may set a conditional true (`\DeclareOption{draft}{\drafttrue}`): in doubt, checked
    false_ifs = false_conditionals([*manuscript.texts.values(), *snapshot.local_styles(manuscript)])
    cites = cite_commands(manuscript.texts.values())  # a wrapper the preamble defines cites in every section
    language = document_language(manuscript.texts[path] for path in manuscript.files)  # 6.200 in a Turkish text
    scans = [scan(manuscript.texts[path], str(path), false_ifs, cites, language) for path in manuscript.files]
    if head is not None:
        for path, s in zip(manuscript.files, scans, strict=True):
            if head.get(path) != manuscript.texts[path]:
                s.suppressed = carried_suppressions(head.get(path, ""), manuscript.texts[path])
    return _Reading(scans, false_ifs, cites)


def _cite_lock(
    manuscript: Manuscript, reading: _Reading, config: EvidenceConfig, config_text: str
) -> tuple[list[Violation], Bibliography, list[Violation]]:
    """Return the cite lock's violations (files outside the tree first), the bibliography and the keys only the
    compile's record cites."""
    citations = [Violation("outside_tree", str(f), line, name, why) for f, line, name, why in manuscript.outside]
    bibliography, problems = bibliography_of(manuscript, reading.scans, config.bibs, config_text)
    recorded: list[Violation] = []
    if config.cites:
        citations.extend(problems)
        found, recorded = cite_violations(manuscript, reading.scans, bibliography)
        citations.extend(found)
    return citations, bibliography, recorded


def _placeholder_lock(
    manuscript: Manuscript, reading: _Reading, config: EvidenceConfig
) -> tuple[list[Violation], list[str | None]]:
    """Return the placeholder lock's violations and, for each, the text a PDF would show of it."""
    placeholders: list[Violation] = []
    probes: list[str | None] = []
    if not config.placeholders:
        return placeholders, probes
    by_file = {s.file: s for s in reading.scans}
    files = [(str(path), manuscript.texts[path]) for path in manuscript.files]
    for c in find_placeholders(files, manuscript.texts[manuscript.root], reading.false_ifs, reading.cites):
        if not by_file[c.file].is_suppressed(c.line, "placeholder"):
            message = "is a placeholder left in the text; finish it, or move it into a % comment"
            placeholders.append(Violation("placeholder", c.file, c.line, c.token, message))
            probes.append(c.probe)
    return placeholders, probes


def record_adds(manuscript: Manuscript, report: EvidenceReport) -> bool:
    """Return whether the snapshot's engine record (stage two) can change `report`, evaluated before the compile:
    a file it typeset that the reading missed, a bibliography it used, a key it cited that the scan did not see,
    a declared bibliography to warn about. Then the flow evaluates once more (`check`, the items)."""
    record = manuscript.record
    if record is None or report.timed_out:
        return False
    if record.added or any(p not in report.bib_files for p in engine_bibliographies(manuscript)):
        return True
    if record.passed and report.declared_bibs:
        return True
    if record.passed and record.cites_recorded and any(v.kind == "unknown_cite" for v in report.citations):
        return True  # a command the compile shows is no citation here (`not_citing`)
    return bool(set(record.cited or ()) - report.cited)


def as_added(violation: Violation) -> Violation:
    """Return the violation an edit or pull request that adds this number gets: a `cited_number` is unattested.

    A `\\cite` beside a number that a change brings in does not attest it (else a citation
    would be a way in for an invented number).
    """
    if violation.kind != CITED:
        return violation
    message = violation.message.split("; its sentence cites", 1)[0]
    message += "; a number a change adds must be attested by a log, whatever its sentence cites"
    return replace(violation, kind=UNATTESTED, message=message, severity=ERROR)


def _lock_kind(kind: str) -> str:
    """Return the kind a HEAD violation is matched by: a number unattested in HEAD, cited or not, is known."""
    return UNATTESTED if kind == CITED else kind


class EvidenceGate:
    """The evidence locks as a gate: a candidate may not add an undefined key, unattested number or placeholder."""

    stage = "evidence"

    def __init__(self, root: Path | str | None = None, config: EvidenceConfig | None = None) -> None:
        self.root = Path(root) if root is not None else None
        self.config = config or EvidenceConfig()

    def check(self, text: str, context: PatchContext) -> GateResult:
        """Return the verdict; like the paper, what HEAD already holds is allowed, only additions are checked."""
        started = time.perf_counter()
        root = self.root or snapshot.root_of(context, text)
        head_manuscript, manuscript = snapshot.pair_for(context, text, root, self.config.boundary(root))
        # stage two: the candidate's compile (the compile gate, before this one) says which bibliographies and files
        # the engine used; HEAD, not compiled, is judged with the same ones (its own compile only when it matters)
        snapshot.borrow_record(head_manuscript, manuscript)
        head = evaluate(head_manuscript, self.config)
        # a file HEAD's manuscript does not read was read from disk as it is (HEAD), unless the candidate supplied it
        supplied = {Path(p).resolve() for p in context.files}
        head_texts = {p: t for p, t in manuscript.texts.items() if p not in supplied}
        head_texts.update(head_manuscript.texts)
        candidate = evaluate(manuscript, self.config, head_texts)
        # listed first: the rejection's reason names the changed setting, not what it would have hidden
        new = [v for p in manuscript.files for v in settings_changes(p, head_texts.get(p, ""), manuscript.texts[p])]
        new += [v for p in manuscript.files for v in bibitem_changes(p, head_texts.get(p, ""), manuscript.texts[p])]
        if candidate.timed_out:  # what was not checked is never allowed because HEAD was not checked either
            stopped = [v for v in _all(candidate) if v.kind == "timeout"]
            return GateResult.of(stopped, "evidence", time.perf_counter() - started)
        in_head = {(_lock_kind(v.kind), v.token) for v in _all(head)}
        added = [v for v in _all(candidate) if (_lock_kind(v.kind), v.token) not in in_head]
        if any(v.token in candidate.recorded_cites for v in added) and _head_compiled(context):
            # a key only the compile's .aux shows: HEAD may cite it the same way, which only HEAD's compile tells
            in_head |= {(_lock_kind(v.kind), v.token) for v in evaluate(head_manuscript, self.config).citations}
            added = [v for v in added if (_lock_kind(v.kind), v.token) not in in_head]
        new.extend(as_added(v) for v in added)
        new.extend(_engine_additions(context, {v.token for v in new}, candidate.ignored_cites))
        skipped = {"skipped": {"numbers": candidate.numbers_skipped}} if candidate.numbers_skipped else {}
        return GateResult.of(new, "evidence", time.perf_counter() - started, skipped)


UNDEFINED = ("undefined_citation", "undefined_reference")


def engine_undefined(report: Any, ignored: frozenset[str] = frozenset()) -> list[Violation]:
    """Return one violation per undefined citation or reference a compile report's last run warned about, but for
    the citations of `ignored` keys (cited on a `% patchwrite: ignore cite` line: `EvidenceReport.ignored_cites`)."""
    out: list[Violation] = []
    seen: set[tuple[str, str]] = set()
    for m in report.messages:
        if m.kind == "undefined_citation" and as_read(m.token) in ignored:
            continue
        if m.kind in UNDEFINED and (m.kind, m.token) not in seen:
            seen.add((m.kind, m.token))
            what = "citation" if m.kind == "undefined_citation" else "reference"
            out.append(Violation(m.kind, m.file, m.line, m.token, f"is an undefined {what} after the last "
                                 f"{report.engine} run"))  # fmt: skip
    return out


def _engine_additions(context: PatchContext, reported: set[str], ignored: frozenset[str]) -> list[Violation]:
    """Return the undefined citations and references the candidate's compile reports and HEAD's does not.

    Whatever command cites or refers (a macro the scanner cannot follow), the engine knows. HEAD is compiled only
    when the candidate has any (usually a verdict-cache hit); a HEAD that does not compile decides nothing.
    """
    report = context.records.get("compile")
    if report is None or not report.ok:
        return []
    reported = {as_read(token) for token in reported}
    found = [v for v in engine_undefined(report, ignored) if as_read(v.token) not in reported]
    if not found:
        return []
    head = _head_compiled(context)
    if head is None or not head.ok:
        return []
    old = {(v.kind, v.token) for v in engine_undefined(head)}
    return [replace(v, message=v.message + "; HEAD's compile had it defined or did not use it")
            for v in found if (v.kind, v.token) not in old]  # fmt: skip


def _head_compiled(context: PatchContext) -> Any:
    """Return HEAD's compile report (once per transaction; it sets HEAD's engine record), None without one."""
    if "compile_head_report" not in context.records:
        compile_head = context.records.get("compile_head")
        context.records["compile_head_report"] = compile_head() if callable(compile_head) else None
    return context.records["compile_head_report"]


def _all(report: EvidenceReport) -> list[Violation]:
    return [*report.citations, *(report.numbers or []), *report.placeholders]
