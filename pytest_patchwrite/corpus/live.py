"""The live-model stress test (the paper's Tables 3 and 3b): a real model proposes each repair."""

from __future__ import annotations

import json
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..edit import DEFAULT_MAX_SPAN
from ..errors import EnvironmentFault
from ..files import envfaults
from ..files.inputs import load_json, read_text
from ..flows.batch import LOCAL, Done, Job, in_order, raise_first, run_batch
from ..flows.transaction import try_patch
from ..gates.compile import CompileGate
from ..gates.evidence import EvidenceGate
from ..model import Gate
from ..proposers.base import ProposalRequest, Proposer, ProposerError
from ..proposers.prompt import SYSTEM_PROMPT_VERSION
from .documents import DOCUMENTS, LAYERS_LINE, materialize
from .faults import inject

CAUSES = ("parse", "compile", "evidence", "proposer")


@dataclass(frozen=True)
class LiveOptions:
    """Which build, engine and span the live jobs use."""

    build: str = "surrogate"
    engine: str | None = None
    timeout: float = 60.0
    max_span: int = DEFAULT_MAX_SPAN


def request_for(
    doc_id: str, fault_name: str, build: str = "surrogate", max_span: int = DEFAULT_MAX_SPAN
) -> tuple[Any, ProposalRequest]:
    """Return the fault and the request a model gets for one corpus job (numbered broken source, log, note)."""
    doc = DOCUMENTS[doc_id]
    fault = inject(doc.head(build), fault_name)
    log = json.dumps(doc.results_log(), indent=2)
    request = ProposalRequest.for_text(fault.broken, log, fault.note, max_span)
    return fault, request


def run_live_job(proposer: Proposer, doc_id: str, fault_name: str, options: LiveOptions, work: Path) -> dict[str, Any]:
    """Return one job's record: the raw reply, where it was stopped, and the paper's metrics."""
    doc = DOCUMENTS[doc_id]
    fault, request = request_for(doc_id, fault_name, options.build, options.max_span)
    root = materialize(doc, work / doc_id / fault_name, options.build, fault.broken)
    record: dict[str, Any] = {
        "doc": doc_id,
        "language": doc.language,
        "fault": fault_name,
        "fault_class": fault.fault_class,
    }
    started = time.perf_counter()
    try:
        proposal = proposer.propose(request)
    except ProposerError as exc:
        record.update(raw=None, error=str(exc), stage="proposer", reason="proposer_error", latency=0.0)
        record.update(
            parse_ok=False, compile_ok=False, gate_ok=False, accept=False, fault_fixed=None, layers_preserved=None
        )
        record["seconds"] = time.perf_counter() - started
        return record
    gates: list[Gate] = [
        CompileGate(root, engine=options.engine, timeout=options.timeout, resolve=False, use_cache=False),
        EvidenceGate(root),
    ]
    result = envfaults.retry_once(lambda: try_patch(root, proposal.raw, gates, max_span=options.max_span))
    committed = root.read_text(encoding="utf-8")
    record.update(
        raw=proposal.raw,
        model=proposal.model,
        latency=proposal.seconds,
        stage=result.stage,
        reason=result.reason,
        span=list(result.span) if result.span else None,
        parse_ok=result.stage != "parse",
        compile_ok=result.stage not in ("parse", "compile"),
        gate_ok=result.accepted,
        accept=result.accepted,
        fault_fixed=fault.fixed(committed) if result.accepted else None,
        layers_preserved=(LAYERS_LINE in committed) if result.accepted else None,
        seconds=time.perf_counter() - started,
    )
    return record


def _rate(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def summarize_live(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Return the paper's live-table metrics for some job records."""
    n = len(records)
    parsed = [r for r in records if r["parse_ok"]]
    compiled = [r for r in parsed if r["compile_ok"]]
    accepted = [r for r in records if r["accept"]]
    causes = Counter(r["stage"] for r in records if not r["accept"])
    reasons = Counter(r["reason"] for r in records if r["stage"] == "parse")
    return {
        "n": n,
        "parse_ok": _rate(len(parsed), n),
        "compile_ok_of_parsed": _rate(len(compiled), len(parsed)),
        "gate_ok_of_compiled": _rate(sum(r["gate_ok"] for r in compiled), len(compiled)),
        "accept": _rate(len(accepted), n),
        "fallback": _rate(n - len(accepted), n),
        "fallback_by_cause": {cause: _rate(causes.get(cause, 0), n) for cause in CAUSES},
        "parse_failure_reasons": dict(sorted(reasons.items())),
        "fault_fixed_of_accepted": _rate(sum(bool(r["fault_fixed"]) for r in accepted), len(accepted)),
        "layers_preserved_of_accepted": _rate(sum(bool(r["layers_preserved"]) for r in accepted), len(accepted)),
        "mean_latency": round(sum(r["latency"] for r in records) / n, 4) if n else None,
        "mean_job_seconds": round(sum(r["seconds"] for r in records) / n, 4) if n else None,
    }


_proposers: dict[str, Proposer] = {}  # one per proposer spec in a worker process (a model loads once)


def live_job(spec: dict[str, Any], doc_id: str, fault_name: str, options: dict[str, Any]) -> dict[str, Any]:
    """Return one live job's record, its proposer built from `spec` on the machine that runs it (a batch job)."""
    from ..proposers import make_proposer

    key = json.dumps(spec, sort_keys=True)
    if key not in _proposers:
        try:
            _proposers[key] = make_proposer(spec["kind"], **spec["options"])
        except ProposerError as exc:
            raise EnvironmentFault(
                spec["kind"],
                f"the proposer cannot start here ({exc})",
                "install the proposer's extra on this machine",
                reason="proposer_missing",
            ) from None
    with tempfile.TemporaryDirectory(prefix="patchwrite-live-") as tmp:
        return run_live_job(_proposers[key], doc_id, fault_name, LiveOptions(**options), Path(tmp))


def _journal(journal: Path) -> dict[tuple[str, str], dict[str, Any]]:
    done: dict[tuple[str, str], dict[str, Any]] = {}
    if journal.exists():
        for number, line in enumerate(read_text(journal, "log").splitlines(), start=1):
            if line.strip():
                record = load_json(line, journal, number)
                done[(record["doc"], record["fault"])] = record
    return done


def run_live(
    proposer: Proposer | dict[str, Any],
    jobs: list[tuple[str, str]],
    out: Path,
    options: LiveOptions,
    settings: dict[str, Any],
    progress: Callable[[str], None] | None = None,
    cluster: str | None = None,
) -> dict[str, Any]:
    """Run the jobs (resuming from out/jobs.jsonl), write llm_edit_summary.json and llm_edit_slices.json.

    On a cluster `proposer` is its spec (`{"kind": ..., "options": {...}}`), built on each worker."""
    out.mkdir(parents=True, exist_ok=True)
    journal = out / "jobs.jsonl"
    done = _journal(journal)
    started = time.perf_counter()
    todo = [job for job in jobs if job not in done]
    with tempfile.TemporaryDirectory(prefix="patchwrite-live-") as tmp, open(journal, "a") as handle:

        def arrived(answer: Done, count: int, total: int) -> None:
            if answer.error is not None:
                return  # raised below, in the jobs' order; never a row
            record = {**answer.value, "worker": answer.worker}
            handle.write(json.dumps(record) + "\n")  # each job's row once, as it arrives
            handle.flush()
            done[(record["doc"], record["fault"])] = record
            if progress:
                verdict = "accepted" if record["accept"] else f"fallback ({record['stage']}: {record['reason']})"
                where = "" if answer.worker == LOCAL else f" on {answer.worker}"
                progress(f"[{count}/{total}] {answer.key}{where}: {verdict} in {record['seconds']:.1f} s")

        if cluster:
            plain = asdict(options)
            batch = [Job(f"{d}-{f}", live_job, (proposer, d, f, plain)) for d, f in todo]
        else:
            batch = [Job(f"{d}-{f}", run_live_job, (proposer, d, f, options, Path(tmp))) for d, f in todo]
        answers = run_batch(batch, cluster=cluster, inline=not cluster, on_done=arrived)
    raise_first(in_order(batch, answers), cluster)
    records = [done[job] for job in jobs]
    if cluster:  # the journal in the jobs' order, as a local run writes it
        journal.write_text("".join(json.dumps(done[job]) + "\n" for job in dict.fromkeys([*jobs, *done])))
    summary = {
        **settings,
        "prompt_version": SYSTEM_PROMPT_VERSION,
        **summarize_live(records),
        "wall_seconds_this_run": round(time.perf_counter() - started, 2),
    }
    (out / "llm_edit_summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    faults = dict.fromkeys(r["fault"] for r in records)
    slices = {"fault": {f: summarize_live([r for r in records if r["fault"] == f]) for f in faults}}
    (out / "llm_edit_slices.json").write_text(json.dumps(slices, indent=2) + "\n")
    return summary
