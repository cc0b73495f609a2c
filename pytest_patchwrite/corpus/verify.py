"""Faults that really break: each candidate site is compiled and checked before a fault is handed out."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..check import CheckOptions, citations_result, numbers_result, placeholders_result
from ..gates.evidence import evaluate
from ..inputs import read_text
from ..manuscript import find_root, is_root, load_manuscript
from ..model import GateResult, failing
from .documents import FAKE_KEY
from .faults import Fault, FaultNotApplicable, sites

#: the gate whose item must fail for each content fault (swapped_acc is the paper's silent fault: none does)
CAUGHT_BY = {"fake_cite": "citations", "todo": "placeholders", "bad_number": "numbers", "swapped_acc": None}


@dataclass
class Verified:
    """A fault that breaks what it says, how that shows, and the sites tried before it."""

    fault: Fault
    outcome: str
    rejected: list[str] = field(default_factory=list)


def _at_fault(result: GateResult, path: Path, fault: Fault) -> bool:
    """Return whether `result` fails on the faulted line of `path`."""
    return any(Path(v.file).resolve() == path and v.line == fault.line for v in failing(result.violations))


def outcome(fault: Fault, path: Path, root: Path, options: CheckOptions) -> tuple[bool, str]:
    """Return (whether the fault shows, how) after compiling `root` with `path` holding `fault.broken`."""
    path = path.resolve()
    overrides = {path: fault.broken}
    gate = options.compile_gate(root)
    gate.extract_text = fault.name == "todo"  # the placeholder must reach the PDF
    report = gate.compile(root, overrides)
    if fault.fault_class == "compile":
        if report.ok:
            return False, f"line {fault.line}: the document still compiles"
        first = report.violations[0]
        return True, f"the compile fails: {first.kind} at {Path(first.file).name}:{first.line}"
    if not report.ok:
        return False, f"line {fault.line}: the document no longer compiles ({report.violations[0].kind})"
    evidence = evaluate(load_manuscript(root, overrides), options.evidence_config())
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
    root = find_root(path)
    if not is_root(read_text(root)):
        problem = "no root manuscript reads this file (add `% !TEX root = ...`), so the fault cannot be compiled"
        raise FaultNotApplicable(f"{name}: {problem}")
    head = options.compile_gate(root).compile(root)
    if not head.ok:  # every compile fault would look verified, every content fault would look broken
        first = head.violations[0]
        where = f"{Path(first.file).name}:{first.line}"
        raise FaultNotApplicable(f"{name}: the manuscript does not compile as it is ({first.kind} at {where})")
    rejected: list[str] = []
    for fault in sites(read_text(path), name):
        shows, how = outcome(fault, path, root, options)
        if shows:
            return Verified(fault, how, rejected)
        rejected.append(how)
        if len(rejected) >= limit:
            break
    tried = "; ".join(rejected) if rejected else "no site outside conditional branches and unprinted arguments"
    raise FaultNotApplicable(f"{name}: no site really breaks the document ({tried})")
