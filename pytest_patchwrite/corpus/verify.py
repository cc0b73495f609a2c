"""Faults that really break: each candidate site is compiled and checked before a fault is handed out."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError
from ..files.inputs import read_text
from ..files.manuscriptcopy import copy_manuscript_dir
from ..flows.check import CheckOptions, citations_result, numbers_result, placeholders_result
from ..gates.evidence import evaluate
from ..model import GateResult, failing
from ..snapshot.manuscript import Manuscript, load_manuscript
from ..snapshot.roots import locate
from ..tex.texinputs import is_root
from .documents import FAKE_KEY
from .faults import Fault, FaultNotApplicable, sites

#: the gate whose item must fail for each content fault (swapped_acc is the paper's silent fault: none does)
CAUGHT_BY = {"fake_cite": "citations", "todo": "placeholders", "bad_number": "numbers", "swapped_acc": None}


#: faults whose sites come last first in a file (the last section, the last cite): the manuscript's files likewise
LAST_FIRST = ("todo", "undefined_cmd", "unclosed_env", "fake_cite", "unmatched_brace")


@dataclass
class Verified:
    """A fault that breaks what it says, how that shows, the sites tried before it, and the file that holds it."""

    fault: Fault
    outcome: str
    rejected: list[str] = field(default_factory=list)
    path: Path | None = None  # the file whose text `fault.broken` replaces
    root: Path | None = None  # the root manuscript that reads it


def _at_fault(result: GateResult, path: Path, fault: Fault) -> bool:
    """Return whether `result` fails on the faulted line of `path`."""
    return any(Path(v.file).resolve() == path and v.line == fault.line for v in failing(result.violations))


def outcome(fault: Fault, path: Path, root: Path | Manuscript, options: CheckOptions) -> tuple[bool, str]:
    """Return (whether the fault shows, how) after compiling the manuscript (`root`, or HEAD's snapshot) with `path`
    holding `fault.broken`; the candidate is derived from the snapshot, compiled and checked as one."""
    path = path.resolve()
    head = root if isinstance(root, Manuscript) else _snapshot(Path(root), options)
    candidate = head.derive({path: fault.broken})
    gate = options.compile_gate(head.root)
    gate.extract_text = fault.name == "todo"  # the placeholder must reach the PDF
    report = gate.compile(candidate)
    if fault.fault_class == "compile":
        if report.ok:
            return False, f"line {fault.line}: the document still compiles"
        first = report.violations[0]
        return True, f"the compile fails: {first.kind} at {Path(first.file).name}:{first.line}"
    if not report.ok:
        return False, f"line {fault.line}: the document no longer compiles ({report.violations[0].kind})"
    evidence = evaluate(candidate, options.evidence_config())
    gate_name = CAUGHT_BY[fault.name]
    if gate_name is None:
        return True, "it compiles, and no lock can tell a swap (the paper's silent fault)"
    if gate_name == "numbers":
        numbers = numbers_result(evidence)
        if numbers is None:
            return True, "not catchable with the declared logs: no experimental log is declared"
        caught = _at_fault(numbers, path, fault)
    elif gate_name == "citations":
        caught = any(v.token == FAKE_KEY for v in failing(citations_result(evidence, report).violations))
    else:
        caught = _at_fault(placeholders_result(evidence, report), path, fault)
    return caught, f"line {fault.line}: {'caught' if caught else 'not caught'} by the {gate_name} item"


def inject_verified(path: Path, name: str, options: CheckOptions | None = None, limit: int = 8) -> Verified:
    """Return the first site of the fault in `path` that really breaks the manuscript; raise FaultNotApplicable."""
    options = options or CheckOptions()
    path = Path(path)
    root, _ = locate(path)
    snapshot = _snapshot(root, options)  # read once: every candidate is derived from it
    if not is_root(snapshot.root_text):
        problem = "no root manuscript reads this file (add `% !TEX root = ...`), so the fault cannot be compiled"
        raise FaultNotApplicable(f"{name}: {problem}")
    head = options.compile_gate(root).compile(snapshot)
    if not head.ok:  # every compile fault would look verified, every content fault would look broken
        first = head.violations[0]
        where = f"{Path(first.file).name}:{first.line}"
        raise FaultNotApplicable(f"{name}: the manuscript does not compile as it is ({first.kind} at {where})")
    rejected: list[str] = []
    not_here: list[str] = []
    for file in _files(path, snapshot, name):
        try:
            candidates = list(sites(snapshot.texts[file] if file in snapshot.texts else read_text(file), name))
        except FaultNotApplicable as exc:
            not_here.append(str(exc))
            continue
        for fault in candidates:
            shows, how = outcome(fault, file, snapshot, options)
            if shows:
                return Verified(fault, how, rejected, file, root)
            rejected.append(how if file == path.resolve() else f"{file.name}: {how}")
            if len(rejected) >= limit:
                break
        if len(rejected) >= limit:
            break
    if not rejected:
        if not_here and len(not_here) > 1:
            raise FaultNotApplicable(f"{not_here[0]} (nor in any of the {len(not_here) - 1} other files it reads)")
        if not_here:
            raise FaultNotApplicable(not_here[0])
    tried = "; ".join(rejected) if rejected else "no site outside conditional branches and unprinted arguments"
    raise FaultNotApplicable(f"{name}: no site really breaks the document ({tried})")


def _snapshot(root: Path, options: CheckOptions) -> Manuscript:
    return load_manuscript(root, boundary=options.evidence_config().boundary(root))


def _files(path: Path, manuscript: Manuscript, name: str) -> list[Path]:
    """Return where to look for sites: `path` first (as always), then the manuscript's other files.

    The others come in reading order, or last first for the faults whose sites in one file
    come last first, so the manuscript reads as one file would.
    """
    path = path.resolve()
    others = [f for f in manuscript.files if f != path and f in manuscript.texts]
    return [path, *(reversed(others) if name in LAST_FIRST else others)]


def refuse_used_tree(out: Path) -> None:
    """Raise InputError unless `out` is missing or an empty directory (a tree is written new, never over files)."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise InputError(out, "exists and is not an empty directory; --out-tree writes a new copy, never over files")


def write_tree(verified: Verified, out: Path) -> Path:
    """Write the faulted manuscript into `out` (new or empty): a copy of the root's directory, the fault in place.

    Return the faulted file's path in the copy. The copy is the one the compile gate makes (no
    dot-files, no links leaving the tree, no stale job outputs of the root).
    """
    site, root = verified.path, verified.root
    if site is None or root is None:
        raise InputError(out, "the fault names no file to place in a tree")
    refuse_used_tree(out)
    try:
        relative = site.relative_to(root.parent)
    except ValueError:
        raise InputError(site, f"holds the fault but lies outside {root.parent}, the directory --out-tree copies; "
                               "use -o for its text") from None  # fmt: skip
    copy_manuscript_dir(root.parent, out, root.stem)
    target = out / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(verified.fault.broken, encoding="utf-8", newline="")
    return target
