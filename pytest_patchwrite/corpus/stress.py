"""The oracle stress test of the paper's Table 2: 24 manuscripts x 8 faults x the conditions."""

from __future__ import annotations

import json
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from ..edit import Edit, apply_edit, count_lines, split_lines
from ..files import envfaults
from ..flows.batch import LOCAL, Done, Job, drop_scratch, in_order, raise_first, run_batch, scratch
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
    worker_cache: str = ""  # a cluster run's id: each worker keeps the run's verdicts in a scratch cache of its own
    # summary `detection`: each content fault checked cold by the pool rule and by bindings (4 full compiles per
    # manuscript; the run takes 1.5-1.9 times as long): opt-in (`patchwrite stress --detection`), not in Table 2
    detection: bool = False


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


def stress_job(doc_id: str, fault_name: str, condition: str, options: dict[str, Any]) -> dict[str, Any]:
    """Return one job's row (a batch job: plain data in, plain data out, on whichever machine runs it)."""
    chosen = _on_this_machine(StressOptions(**options))
    with tempfile.TemporaryDirectory(prefix="patchwrite-stress-") as tmp:
        return envfaults.retry_once(lambda: run_job(doc_id, fault_name, condition, chosen, Path(tmp)))


def detection_job(doc_id: str, options: dict[str, Any]) -> dict[str, tuple[bool, bool]]:
    """Return one manuscript's `detection` cells (a batch job, as `stress_job`: an environment fault is retried once,
    a second one stops the run with exit 2)."""
    chosen = _on_this_machine(StressOptions(**options))
    return envfaults.retry_once(lambda: detect_manuscript(doc_id, chosen.build, chosen.engine, chosen.timeout,
                                                          chosen.cache_dir, chosen.trusted))  # fmt: skip


def _on_this_machine(options: StressOptions) -> StressOptions:
    """Return the options with the verdict cache of the machine running the job (a cluster run's scratch)."""
    if not options.worker_cache:
        return options
    return replace(options, cache_dir=str(scratch(options.worker_cache)))


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
    cluster: str | None = None,
) -> dict[str, Any]:
    """Run the stress test (locally, or on the Dask scheduler at `cluster`), write summary.json, slices.json and
    jobs.jsonl into `out`; return the summary."""
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="patchwrite-cache-") as cache:
        if cluster:  # each worker keeps this run's verdicts in a scratch cache of its own
            options = replace(options, cache_dir="", worker_cache=uuid.uuid4().hex)
        else:
            options = replace(options, cache_dir=options.cache_dir or cache)
        plain = asdict(options)
        table = [
            Job(f"{doc_id}/{fault}/{condition}", stress_job, (doc_id, fault, condition, plain))
            for doc_id in doc_ids
            for fault in options.faults
            for condition in options.conditions
        ]
        # the content faults checked by the pool rule and by bindings of the clean HEAD (summary `detection`)
        detecting = [Job(f"detect/{doc_id}", detection_job, (doc_id, plain)) for doc_id in doc_ids]
        if not options.detection or not any(f in CONTENT_FAULTS for f in options.faults):
            detecting = []
        counted = _progress_of(len(table), started, progress)
        done = run_batch([*table, *detecting], cluster=cluster, processes=workers, on_done=counted,
                         teardown=(drop_scratch, (options.worker_cache,)) if cluster else None)  # fmt: skip
    answers = in_order([*table, *detecting], done)
    raise_first(answers, cluster)
    jobs = [{**d.value, "worker": d.worker} for d in answers[: len(table)]]
    found = answers[len(table) :]
    detected = {job.key.removeprefix("detect/"): d.value for job, d in zip(detecting, found, strict=True)}
    summary = {
        "n_jobs": len(jobs),
        "conditions": summarize(jobs),
        "wall_seconds": round(time.perf_counter() - started, 3),
    }
    if detected:
        summary["detection"] = summarize_detection(detected)
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    (out / "slices.json").write_text(json.dumps(slices(jobs), indent=2) + "\n")
    with open(out / "jobs.jsonl", "w") as handle:
        for job in jobs:
            handle.write(json.dumps(job) + "\n")
    return summary


def _progress_of(
    total: int, started: float, progress: Callable[[str], None] | None
) -> Callable[[Done, int, int], None]:
    """Return the batch's `on_done`: one line per finished table job, counted across every worker."""
    count = 0

    def arrived(done: Done, _count: int, _total: int) -> None:
        nonlocal count
        if done.key.startswith("detect/"):
            return
        count += 1
        if progress:
            elapsed = time.perf_counter() - started
            where = "" if done.worker == LOCAL else f" on {done.worker}"
            verdict = "environment error" if done.error else ("accepted" if done.value["accept"] else "rejected")
            progress(f"[{count}/{total}] {done.key}{where}: {verdict} ({elapsed:.1f} s)")

    return arrived


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
