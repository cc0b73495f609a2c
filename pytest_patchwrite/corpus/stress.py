"""The oracle stress test of the paper's Table 2: 24 manuscripts x 8 faults x the conditions."""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..edit import Edit, apply_edit, count_lines, split_lines
from ..files import envfaults
from ..flows.prdiff import jaccard
from ..flows.transaction import try_patch
from ..gates.compile import CompileGate
from ..gates.evidence import EvidenceConfig, EvidenceGate
from ..model import Gate, PatchContext
from ..tex.latex import scan
from .detection import detect_manuscript, summarize_detection
from .documents import DOCUMENTS, HALLUCINATED_KEY, LAYERS_LINE, materialize
from .faults import CONTENT_FAULTS, FAULTS, Fault, inject

PAPER_CONDITIONS = ("po_slot", "patchwrite", "patchwrite_nocompile", "patchwrite_nogate")
CONDITIONS = (*PAPER_CONDITIONS, "po_slot_strict")
FORCED_FAIL = "\\errmessage{patchwrite-forced-fail}"
METRICS = ("accept", "compile_ok", "gate_ok", "cite_jaccard", "numeric_jaccard", "layers_preserved", "fault_fixed")


@dataclass(frozen=True)
class StressOptions:
    """What one stress run covers and how it compiles (picklable for worker processes)."""

    faults: tuple[str, ...] = FAULTS
    conditions: tuple[str, ...] = CONDITIONS
    build: str = "surrogate"
    engine: str | None = None
    cache_dir: str = ""
    timeout: float = 60.0
    trusted: bool = False  # the corpus is ours: `True` compiles without the OS sandbox (to measure its cost)


def _tokens(text: str) -> tuple[set[str], set[str]]:
    found = scan(text)
    numbers = {format(n.value.normalize(), "f") for n in found.numbers}
    return numbers, {c.key for c in found.citations}


def slot_rewrite(head: str) -> str:
    """Return the `po_slot` candidate: the section regenerated whole, the fault gone and 12 layers now 16."""
    return head.replace("12 layers", "16 layers")


def _candidate(condition: str, fault: Fault, head: str) -> Edit:
    if condition in ("po_slot", "po_slot_strict"):
        body = tuple(line.rstrip("\n").rstrip("\r") for line in split_lines(slot_rewrite(head)))
        return Edit(1, count_lines(fault.broken), body)
    oracle = fault.oracle_edit()
    if condition == "patchwrite_nocompile":
        return Edit(oracle.start, oracle.end, (FORCED_FAIL,))
    if condition == "patchwrite_nogate":
        last = oracle.body[-1]
        cited = f"See also~\\cite{{{HALLUCINATED_KEY}}}."
        body = (*oracle.body[:-1], cited if last.startswith("%") else f"{last} {cited}")
        return Edit(oracle.start, oracle.end, body)
    return oracle


def run_job(doc_id: str, fault_name: str, condition: str, options: StressOptions, work: Path) -> dict[str, Any]:
    """Return the metrics of one job, run in a fresh directory under `work`."""
    doc = DOCUMENTS[doc_id]
    head = doc.head(options.build)
    fault = inject(head, fault_name)
    root = materialize(doc, work / doc_id / fault_name / condition, options.build, fault.broken)
    compile_gate = CompileGate(root, engine=options.engine, timeout=options.timeout, resolve=False,
                               cache_dir=options.cache_dir or None, use_cache=bool(options.cache_dir),
                               trusted=options.trusted)  # fmt: skip
    strict = EvidenceConfig(numbers="all") if condition == "po_slot_strict" else EvidenceConfig()
    evidence_gate = EvidenceGate(root, strict)
    gates: list[Gate] = []
    if condition != "po_slot":
        gates.append(compile_gate)
    if condition in ("po_slot_strict", "patchwrite", "patchwrite_nocompile"):
        gates.append(evidence_gate)
    edit = _candidate(condition, fault, head)
    started = time.perf_counter()
    result = try_patch(root, edit, gates, max_span=10**6 if condition.startswith("po_slot") else 40)
    candidate = apply_edit(fault.broken, edit)
    context = PatchContext(root, fault.broken)
    if compile_gate in gates:
        compile_ok = result.stage not in ("parse", "compile")
    else:
        compile_ok = compile_gate.check(candidate, context).ok
    if evidence_gate in gates:
        gate_ok: bool | None = None if result.stage in ("parse", "compile") else result.stage != "evidence"
    else:
        gate_ok = evidence_gate.check(candidate, context).ok
    seconds = time.perf_counter() - started
    committed = root.read_text(encoding="utf-8")
    if result.accepted:
        (head_numbers, head_cites), (numbers, cites) = _tokens(head), _tokens(committed)
        cite_j, num_j = jaccard(head_cites, cites), jaccard(head_numbers, numbers)
        layers = LAYERS_LINE in committed
    else:
        cite_j = num_j = 1.0  # a rejected job committed nothing
        layers = True
    return {
        "doc": doc_id,
        "language": doc.language,
        "fault": fault_name,
        "fault_class": fault.fault_class,
        "condition": condition,
        "accept": result.accepted,
        "stage": result.stage,
        "reason": result.reason,
        "compile_ok": compile_ok,
        "gate_ok": gate_ok,
        "cite_jaccard": cite_j,
        "numeric_jaccard": num_j,
        "layers_preserved": layers,
        "fault_fixed": fault.fixed(committed),
        "seconds": seconds,
    }


def run_manuscript(doc_id: str, options: StressOptions) -> list[dict[str, Any]]:
    """Return every job of one manuscript, run one after another so identical candidates hit the cache."""
    with tempfile.TemporaryDirectory(prefix="patchwrite-stress-") as tmp:
        return [
            envfaults.retry_once(lambda: run_job(doc_id, fault, condition, options, Path(tmp)))  # noqa: B023
            for fault in options.faults
            for condition in options.conditions
        ]


def _mean(values: Iterable[float | bool | None]) -> float | None:
    present = [float(v) for v in values if v is not None]
    return round(sum(present) / len(present), 4) if present else None


def summarize(jobs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Return the per-condition cells of `summary.json` (docs/json.md) for some jobs."""
    cells: dict[str, dict[str, Any]] = {}
    for condition in dict.fromkeys(j["condition"] for j in jobs):
        mine = [j for j in jobs if j["condition"] == condition]
        cell: dict[str, Any] = {"n": len(mine)}
        for metric in METRICS:
            cell[metric] = _mean(j[metric] for j in mine)
        cell["mean_seconds"] = round(sum(j["seconds"] for j in mine) / len(mine), 4)
        cells[condition] = cell
    return cells


def slices(jobs: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, dict[str, Any]]]]:
    """Return the same cells per fault, per fault class and per language."""
    out: dict[str, dict[str, dict[str, dict[str, Any]]]] = {}
    for key in ("fault", "fault_class", "language"):
        values = dict.fromkeys(j[key] for j in jobs)
        out[key] = {value: summarize([j for j in jobs if j[key] == value]) for value in values}
    return out


def run_stress(
    doc_ids: list[str],
    options: StressOptions,
    out: Path,
    workers: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Run the stress test, write summary.json, slices.json and jobs.jsonl into `out`; return the summary."""
    out.mkdir(parents=True, exist_ok=True)
    workers = workers or os.cpu_count() or 1
    started = time.perf_counter()
    results: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory(prefix="patchwrite-cache-") as cache:
        options = StressOptions(**{**options.__dict__, "cache_dir": options.cache_dir or cache})
        detected: dict[str, dict[str, tuple[bool, bool]]] = {}
        with ProcessPoolExecutor(max_workers=workers) as pool:
            futures = {pool.submit(run_manuscript, doc_id, options): doc_id for doc_id in doc_ids}
            # the content faults checked by the pool rule and by bindings of the clean HEAD (summary `detection`)
            detecting = {
                pool.submit(detect_manuscript, doc_id, options.build, options.engine, options.timeout,
                            options.cache_dir, options.trusted): doc_id
                for doc_id in doc_ids
            } if any(f in CONTENT_FAULTS for f in options.faults) else {}  # fmt: skip
            for done, future in enumerate(as_completed(futures), start=1):
                doc_id = futures[future]
                results[doc_id] = future.result()
                if progress:
                    elapsed = time.perf_counter() - started
                    progress(f"[{done}/{len(doc_ids)}] {doc_id}: {len(results[doc_id])} jobs ({elapsed:.1f} s)")
            for found in as_completed(detecting):
                detected[detecting[found]] = found.result()
    jobs = [job for doc_id in doc_ids for job in results[doc_id]]
    summary = {
        "n_jobs": len(jobs),
        "conditions": summarize(jobs),
        "wall_seconds": round(time.perf_counter() - started, 3),
    }
    if detected:
        summary["detection"] = summarize_detection({d: detected[d] for d in doc_ids if d in detected})
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    (out / "slices.json").write_text(json.dumps(slices(jobs), indent=2) + "\n")
    with open(out / "jobs.jsonl", "w") as handle:
        for job in jobs:
            handle.write(json.dumps(job) + "\n")
    return summary


def format_table(summary: dict[str, Any]) -> str:
    """Return the summary as the paper's Table 2."""
    head = (
        f"{'condition':22} {'n':>4} {'accept':>7} {'compile':>8} {'gate':>6} {'cite J':>7} {'num J':>7} {'layers':>7}"
    )
    rows = [head]
    for name, cell in summary["conditions"].items():
        gate = "n/a" if cell["gate_ok"] is None else f"{cell['gate_ok']:.2f}"
        rows.append(
            f"{name:22} {cell['n']:4} {cell['accept']:7.2f} {cell['compile_ok']:8.2f} {gate:>6} "
            f"{cell['cite_jaccard']:7.4f} {cell['numeric_jaccard']:7.4f} {cell['layers_preserved']:7.2f}"
        )
    return "\n".join(rows)


def print_progress(message: str) -> None:
    """Write one progress line to stderr."""
    print(message, file=sys.stderr, flush=True)
