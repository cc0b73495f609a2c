"""What a change moved: numbers and cite keys removed, added or changed against a git revision."""

from __future__ import annotations

import subprocess
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .. import shown
from ..errors import InputError
from ..gates.binding import bindings_location
from ..gates.evidence import EvidenceConfig, EvidenceReport, as_added, engine_undefined, evaluate
from ..gates.headrules import line_opcodes, settings_changes
from ..gates.report import CompileReport, EngineMissing
from ..model import ERROR, WARNING, GateResult, Violation, display_path, failing
from ..numbers.binddiff import binding_changes, bindings_at, log_changes
from ..snapshot.manuscript import Manuscript, load_manuscript
from ..tex.latex import scan
from ..tex.magic import magic_line
from ..tex.texcites import cite_commands
from . import selfattest


class BaseError(InputError):
    """The base revision cannot be used (missing, or absent from a shallow clone)."""


def _git(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=60)


@dataclass
class GitBase:
    """A git revision to compare a working tree against."""

    top: Path
    rev: str
    renames: dict[str, str] = field(default_factory=dict)  # new relpath -> old relpath

    @classmethod
    def open(cls, where: Path, rev: str) -> GitBase:
        """Return the base `rev` of the repository holding `where`; raise BaseError with what to do."""
        top = _git(where, "rev-parse", "--show-toplevel")
        if top.returncode != 0:
            raise BaseError(where, "not inside a git repository, so there is no base to compare against")
        root = Path(top.stdout.strip())
        if _git(root, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}").returncode != 0:
            shallow = _git(root, "rev-parse", "--is-shallow-repository").stdout.strip() == "true"
            hint = (
                "this is a shallow clone: fetch the base first (git fetch --deepen=50 origin, or "
                "actions/checkout with fetch-depth: 0)"
                if shallow
                else "check the name (git branch -a) or fetch it (git fetch origin)"
            )
            raise BaseError(rev, f"base revision not found; {hint}")
        base = cls(root, rev)
        status = _git(root, "diff", "--name-status", "-M", rev, "--")
        for line in status.stdout.splitlines():
            parts = line.split("\t")
            if parts[0].startswith("R") and len(parts) == 3:
                base.renames[parts[2]] = parts[1]
        return base

    def text(self, path: Path) -> str | None:
        """Return the file's text at the base (following a rename), or None when it did not exist."""
        rel = str(path.resolve().relative_to(self.top.resolve()))
        rel = self.renames.get(rel, rel)
        shown = _git(self.top, "show", f"{self.rev}:{rel}")
        return shown.stdout if shown.returncode == 0 else None


ADDED_NUMBER_KINDS = ("added_number", "moved_number")


def jaccard(a: set[str], b: set[str]) -> float:
    """Return |a & b| / |a | b| (1.0 for two empty sets)."""
    return 1.0 if not a and not b else len(a & b) / len(a | b)


def _tokens_by_line(text: str, cites: frozenset[str] | None = None) -> dict[int, list[tuple[str, str]]]:
    found = scan(text, cites=cites)
    out: dict[int, list[tuple[str, str]]] = {}
    for n in found.numbers:
        out.setdefault(n.line, []).append(("number", n.text))
    for c in found.citations:
        out.setdefault(c.line, []).append(("cite", c.key))
    return out


@dataclass
class DiffReport:
    """The changes of one manuscript against the base, and what fails the item."""

    changes: list[Violation]
    failures: list[Violation]
    numeric_jaccard: float
    cite_jaccard: float
    new_manuscript: bool

    def result(self) -> GateResult:
        """Return the `diff` item's verdict (changes are details; failures fail it)."""
        details: dict[str, Any] = {
            "changes": [c.to_json() for c in self.changes],
            "numeric_jaccard": self.numeric_jaccard,
            "cite_jaccard": self.cite_jaccard,
            "new_manuscript": self.new_manuscript,
        }
        return GateResult(not failing(self.failures), list(self.failures), "diff", 0.0, details)


def diff_manuscript(
    root: Path | Manuscript,
    base: GitBase,
    config: EvidenceConfig,
    max_hunk: int | None = None,
    evidence: EvidenceReport | None = None,
    compiled: Any = None,
    evidence_from: str = "head",
) -> DiffReport:
    """Return what the working tree's manuscript (`root`, or its snapshot) moved against `base` (`evidence`: its
    locks, if already known).

    `compiled`: the working tree's compile report, if one ran; an undefined citation or reference it warns about
    on a line the change touched fails the item, whatever command made it. `evidence_from` (`head` or `base`):
    whether a number or key only the change's own log values or bib entries attest warns or fails (selfattest).
    """
    manuscript = root if isinstance(root, Manuscript) else load_manuscript(root, boundary=config.boundary(root))
    new_manuscript = base.text(manuscript.root) is None
    base_texts = {path: base.text(path) or "" for path in manuscript.files}
    binding_notes: list[Violation] = []
    if not new_manuscript:
        evidence, binding_notes = _judged_by_base(manuscript, base, base_texts, config, evidence_from)
    elif evidence is None:
        evidence = evaluate(manuscript, config)
    if evidence.timed_out:  # the locks were stopped: nothing was judged, so nothing passes
        return DiffReport([], list(evidence.citations), 0.0, 0.0, new_manuscript)
    lock_failures = [*evidence.citations, *(evidence.numbers or []), *evidence.placeholders]
    commands = cite_commands([*manuscript.texts.values(), *base_texts.values()])
    changes: list[Violation] = []
    failures: list[Violation] = list(binding_notes)
    all_new: Counter[tuple[str, str]] = Counter()
    all_old: Counter[tuple[str, str]] = Counter()
    changed_by_file: dict[str, set[int]] = {}
    values: dict[tuple[str, int, str], Any] = {}
    for path in manuscript.files:
        file = _diff_file(path, base_texts[path], manuscript.texts[path], commands, evidence, max_hunk, new_manuscript)
        changes.extend(file.changes)
        failures.extend(file.failures)
        failures.extend(file.lock_failures(lock_failures))
        all_new.update(file.new_tokens)
        all_old.update(file.old_tokens)
        changed_by_file[str(path)] = file.changed_lines
        values.update(file.values)
    texts = manuscript.texts
    touched = {p: (base_texts[p], texts[p]) for p in manuscript.files if base_texts[p] != texts[p]}
    failures.extend(
        selfattest.change_notes(changes, values, evidence, base.text, evidence_from, manuscript.directory, touched)
    )
    cited = {t for k, t in all_new if k == "cite"}
    failures.extend(selfattest.bib_entry_notes(evidence.bib_files, base.text, cited, evidence_from))
    if compiled is not None and compiled.ok:
        failures.extend(_engine_failures(compiled, evidence, changed_by_file, {v.token for v in failures}))
    numbers = round(jaccard({t for k, t in all_old if k == "number"}, {t for k, t in all_new if k == "number"}), 4)
    cites = round(jaccard({t for k, t in all_old if k == "cite"}, {t for k, t in all_new if k == "cite"}), 4)
    return DiffReport(changes, failures, numbers, cites, new_manuscript)


def _judged_by_base(
    manuscript: Manuscript, base: GitBase, base_texts: dict[Path, str], config: EvidenceConfig, evidence_from: str
) -> tuple[EvidenceReport, list[Violation]]:
    """Return the locks' report on the working tree judged by the base's suppressions, configuration and bindings
    (never by the change being judged), and the notes on what the change did to the bindings and the logs."""
    bindings_path = bindings_location(manuscript, base_texts.get(manuscript.root, ""))
    base_bindings = base.text(bindings_path) if bindings_path.resolve().is_relative_to(base.top.resolve()) else None
    evidence = evaluate(manuscript, config, base_texts, bindings_text=base_bindings, bindings_from_disk=False)
    notes = _binding_notes(manuscript, config, base, bindings_path, base_bindings, evidence)
    if evidence_from == "base":  # only what the base holds attests: a change to the logs or bindings fails
        notes = [replace(v, severity=ERROR) for v in notes]
    return evidence, notes


@dataclass
class _FileDiff:
    """What the change did to one file: its moves, the failures of its own (settings, long hunks), its changed
    lines, the tokens on either side and the values of the numbers it prints."""

    path: Path
    changes: list[Violation] = field(default_factory=list)
    failures: list[Violation] = field(default_factory=list)
    changed_lines: set[int] = field(default_factory=set)
    new_tokens: list[tuple[str, str]] = field(default_factory=list)
    old_tokens: list[tuple[str, str]] = field(default_factory=list)
    values: dict[tuple[str, int, str], Any] = field(default_factory=dict)

    def lock_failures(self, found: list[Violation]) -> list[Violation]:
        """Return the locks' violations on the lines the change touched in this file; a number the change brings in
        is judged as added (a \\cite in its sentence does not attest it)."""
        brought = {(c.line, c.token) for c in self.changes if c.kind in ADDED_NUMBER_KINDS}
        return [
            as_added(v) if (v.line, v.token) in brought else v
            for v in found
            if Path(v.file) == self.path and v.line in self.changed_lines
        ]


def _diff_file(
    path: Path,
    old_text: str,
    new_text: str,
    commands: frozenset[str],
    evidence: EvidenceReport,
    max_hunk: int | None,
    new_manuscript: bool,
) -> _FileDiff:
    """Return what the change did to one file of the manuscript, hunk by hunk."""
    diff = _FileDiff(path)
    new_tokens, old_tokens = _tokens_by_line(new_text, commands), _tokens_by_line(old_text, commands)
    numbers_at = {(n.line, n.text): n for n in scan(new_text, cites=commands).numbers}
    diff.values = {(str(path), line, text): n.value for (line, text), n in numbers_at.items()}
    diff.new_tokens = [t for toks in new_tokens.values() for t in toks]
    diff.old_tokens = [t for toks in old_tokens.values() for t in toks]
    opcodes = line_opcodes(old_text, new_text)
    if not new_manuscript:
        # a person may mean it: visible in review as a warning; the locks ignored it
        diff.failures.extend(settings_changes(path, old_text, new_text, WARNING, opcodes))
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            continue
        diff.changed_lines.update(range(j1 + 1, j2 + 1))
        anchor = j1 + 1 if j2 > j1 else max(1, j1)
        if max_hunk is not None and max(i2 - i1, j2 - j1) > max_hunk:
            span = f"lines {j1 + 1}-{j2}" if j2 > j1 else f"{i2 - i1} removed lines"
            message = f"a hunk of {max(i2 - i1, j2 - j1)} lines ({span}); at most {max_hunk} allowed"
            diff.failures.append(Violation("hunk_too_long", str(path), anchor, "", message))
        diff.changes.extend(_moves(path, old_tokens, new_tokens, (i1, i2, j1, j2), anchor, evidence, numbers_at))
    return diff


def _engine_failures(
    compiled: Any, evidence: EvidenceReport, changed_by_file: dict[str, set[int]], failed_tokens: set[str]
) -> list[Violation]:
    """Return the undefined citations and references a passing compile warns about on changed lines, but for those
    already failing."""
    return [
        v
        for v in engine_undefined(compiled, evidence.ignored_cites)
        if v.line in changed_by_file.get(v.file, ()) and v.token not in failed_tokens
    ]


def changed_lines(manuscript: Manuscript, base: GitBase) -> set[tuple[str, int]]:
    """Return the (file, line) pairs of the working tree's manuscript that differ from `base` (a file new in the
    change: all its lines), for the faces that print the findings on changed lines first (`first_things_first`)."""
    out: set[tuple[str, int]] = set()
    for path in manuscript.files:
        for tag, _i1, _i2, j1, j2 in line_opcodes(base.text(path) or "", manuscript.texts[path]):
            if tag != "equal":
                out.update((str(path), line) for line in range(j1 + 1, j2 + 1))
    return out


def diff_working_tree(
    manuscript: Manuscript,
    base: GitBase,
    config: EvidenceConfig,
    compile: Callable[[], CompileReport] | None,
    *,
    max_hunk: int | None = None,
    evidence_from: str = "head",
    evidence: Callable[[CompileReport | None], EvidenceReport] | None = None,
    engine_missing: Callable[[EngineMissing], None] | None = None,
) -> tuple[DiffReport, CompileReport | None]:
    """Return the diff of the working tree's snapshot against `base` and the compile it took: the one diff flow the
    pytest `diff` item, `patchwrite diff` and the MCP `diff` tool call.

    `compile` (None: no compile) compiles the working tree, a verdict-cache hit after `check`; its record joins the
    snapshot and a passing compile's undefined citations and references on changed lines fail the diff. A missing
    engine is no verdict: the diff goes on without the compile (`engine_missing` hears of it). `evidence` gives the
    locks' report from the compile, when the caller keeps one (the pytest session does).
    """
    compiled = None
    if compile is not None:
        try:
            compiled = compile()
        except EngineMissing as exc:
            if engine_missing is not None:
                engine_missing(exc)
    known = evidence(compiled) if evidence is not None else None
    return diff_manuscript(manuscript, base, config, max_hunk, known, compiled, evidence_from), compiled


def _binding_notes(
    manuscript: Manuscript,
    config: EvidenceConfig,
    base: GitBase,
    path: Path,
    base_text: str | None,
    evidence: EvidenceReport,
) -> list[Violation]:
    """Return warnings for what the change did to the bindings file and to the declared logs."""
    try:
        current = path.read_text(encoding="utf-8") if path.is_file() else None
    except (OSError, UnicodeDecodeError):
        current = None
    old = bindings_at(base_text, path, manuscript.root)
    new = bindings_at(current, path, manuscript.root) if current != base_text else old
    notes = binding_changes(old, new, manuscript.directory) if current != base_text else []
    line = magic_line(manuscript.texts[manuscript.root], "patchwrite.log") or 1
    notes.extend(log_changes(evidence.log_files, base.text, old or new, manuscript.root, line))
    return notes


def _moves(
    path: Path,
    old_tokens: dict[int, list[tuple[str, str]]],
    new_tokens: dict[int, list[tuple[str, str]]],
    hunk: tuple[int, int, int, int],
    anchor: int,
    evidence: Any,
    numbers: dict,
) -> list[Violation]:
    i1, i2, j1, j2 = hunk
    removed = Counter(t for line in range(i1 + 1, i2 + 1) for t in old_tokens.get(line, []))
    added_at: list[tuple[int, tuple[str, str]]] = [
        (line, t) for line in range(j1 + 1, j2 + 1) for t in new_tokens.get(line, [])
    ]
    added = Counter(t for _, t in added_at)
    kept = removed & added
    removed -= kept
    added -= kept
    out: list[Violation] = []
    for kind in ("number", "cite"):
        gone = [t for (k, t), n in sorted(removed.items()) if k == kind for _ in range(n)]
        came = []
        for line, (k, t) in added_at:
            if k == kind and added[(k, t)] > 0:
                added[(k, t)] -= 1
                came.append((line, t))
        for index in range(max(len(gone), len(came))):
            old = gone[index] if index < len(gone) else None
            line, new = came[index] if index < len(came) else (anchor, None)
            note = _attestation(kind, new, path, line, evidence, numbers) if new is not None else ""
            if old is not None and new is not None:
                out.append(Violation(f"moved_{kind}", str(path), line, new, f"{kind} {old} -> {new}{note}"))
            elif new is not None:
                out.append(Violation(f"added_{kind}", str(path), line, new, f"{kind} {new} added{note}"))
            else:
                out.append(Violation(f"removed_{kind}", str(path), line, str(old), f"{kind} {old} removed"))
    return out


def _attestation(kind: str, token: str, path: Path, line: int, evidence: Any, numbers: dict) -> str:
    if kind == "cite":
        bad = any(v.token == token and Path(v.file) == path and v.line == line for v in evidence.citations)
        return " (not defined by the bibliography)" if bad else ""
    if evidence.log is None:
        return " (no experimental log declared)"
    number = numbers.get((line, token))
    if number is None:
        return ""
    logs = ", ".join(p.name for p in evidence.log_files)
    attested = evidence.log.attests(number.value)
    return f" ({'attested' if attested else 'not attested'} by {logs})"


def format_change(change: Violation, base: Path | None = None) -> str:
    """Return a change as `relpath:line: number 12 -> 16 (...)`."""
    return shown.line(f"{display_path(change.file, base)}:{change.line}: {change.message}")
