"""A writing agent that edits a manuscript only through `patchwrite mcp`, driven by the official MCP SDK client.

    python examples/agent/agent.py                       # one corpus job, the bundled local model
    python examples/agent/agent.py --doc en_nlp_02 --fault bad_number
    python examples/agent/agent.py --base-url http://127.0.0.1:8080/v1 --model qwen2.5-7b   # any OpenAI-compatible
    python examples/agent/agent.py --jobs 24 --max-seconds 1800 --out agent-loop.json      # one job per document

Each job writes one of the fault corpus's broken manuscripts (`patchwrite inject`'s
faults) into a temporary directory, starts `patchwrite mcp DIR` as a subprocess and runs
the loop an agent runs: read the numbered lines (and their revision), ask the model for
one EDIT, call `apply_edit`, and on a rejection tell the model why and try again (at most
`--retries` more times). After an accepted edit it calls `check` to confirm that the
manuscript on disk passes every gate. The model never writes a file itself.

Needs `pip install 'pytest-patchwrite[mcp,local]'` (or only `[mcp]` with `--base-url`).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

from pytest_patchwrite.corpus.documents import DOCUMENTS, materialize
from pytest_patchwrite.corpus.faults import FAULTS, inject
from pytest_patchwrite.proposers import ProposalRequest, make_proposer
from pytest_patchwrite.proposers.base import Proposer, ProposerError

SERVER = [sys.executable, "-c", "import sys; from pytest_patchwrite.cli import main; sys.exit(main(sys.argv[1:]))"]


def _result(call: Any) -> dict[str, Any]:
    if call.is_error:
        raise RuntimeError(call.content[0].text)
    return dict(call.structured_content)


def _feedback(result: dict[str, Any]) -> str:
    """Return what the model is told about a rejected edit: the stage, the reason and the first violations."""
    found = "; ".join(
        f"line {v['line']}: {v['kind']} {v['token']} {v['message']}".strip() for v in result["violations"][:3]
    )
    return f"Your previous edit was rejected at the {result['stage']} stage ({result['reason']}): {found}."


async def repair(client: ClientSession, proposer: Proposer, note: str, retries: int) -> dict[str, Any]:
    """Return one job's record: every attempt's verdict, and whether an edit was accepted and passes `check`."""
    (manuscript,) = _result(await client.call_tool("list_manuscripts", {}))["manuscripts"]
    root = manuscript["root"]
    numbered_log = _result(await client.call_tool("read_numbered", {"path": "results.json"}))["text"]
    log = re.sub(r"(?m)^ *\d+ \| ", "", numbered_log)  # the model gets the log's own text
    attempts: list[dict[str, Any]] = []
    feedback = ""
    for _ in range(1 + retries):
        view = _result(await client.call_tool("read_numbered", {"path": root}))
        request = ProposalRequest(view["text"], log, f"{note} {feedback}".strip(), view["total_lines"])
        try:
            proposal = proposer.propose(request)
        except ProposerError as exc:
            attempts.append({"stage": "proposer", "reason": str(exc), "accepted": False})
            break
        args = {"path": root, "edit": proposal.raw, "revision": view["revision"]}
        call = await client.call_tool("apply_edit", args)
        if call.is_error:  # e.g. an empty reply: a tool error, not a verdict; the model is told and tries again
            attempts.append({"accepted": False, "stage": "input", "reason": call.content[0].text, "span": None})
            feedback = f"Your previous reply was refused: {call.content[0].text}."
            continue
        result = dict(call.structured_content or {})
        attempts.append({key: result[key] for key in ("accepted", "stage", "reason", "span")}
                        | {"raw": proposal.raw, "model_seconds": round(proposal.seconds, 2)})  # fmt: skip
        if result["accepted"]:
            checked = _result(await client.call_tool("check", {"path": root}))
            return {"accepted": True, "check_ok": checked["ok"], "attempts": attempts}
        feedback = _feedback(result)
    return {"accepted": False, "check_ok": None, "attempts": attempts}


async def run_job(doc_id: str, fault_name: str, proposer: Proposer, retries: int, work: Path) -> dict[str, Any]:
    """Return the record of one corpus job repaired through the server."""
    fault = inject(DOCUMENTS[doc_id].head(), fault_name)
    directory = work / f"{doc_id}-{fault_name}"
    root = materialize(DOCUMENTS[doc_id], directory, text=fault.broken)
    env = {k: os.environ[k] for k in ("PYTHONPATH", "XDG_CACHE_HOME", "PATCHWRITE_LLAMA_THREADS") if k in os.environ}
    params = StdioServerParameters(command=SERVER[0], args=[*SERVER[1:], "mcp", str(directory)], env=env)
    started = time.perf_counter()
    async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        record = await repair(client, proposer, fault.note, retries)
    committed = root.read_text(encoding="utf-8")
    record.update(doc=doc_id, fault=fault_name, seconds=round(time.perf_counter() - started, 2))
    record["unchanged"] = committed == fault.broken
    record["fault_fixed"] = fault.fixed(committed) if record["accepted"] else None
    return record


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Return the loop's rates: parse (per attempt), accept and fault fixed (per job), and the gate check."""
    attempts = [a for r in records for a in r["attempts"] if a["stage"] != "proposer"]
    accepted = [r for r in records if r["accepted"]]
    return {
        "jobs": len(records),
        "attempts": len(attempts),
        "parse_ok": round(sum(a["stage"] not in ("parse", "input") for a in attempts) / max(1, len(attempts)), 3),
        "accept": round(len(accepted) / max(1, len(records)), 3),
        "accepted_first_try": sum(r["attempts"][0]["accepted"] for r in accepted),
        "fault_fixed_of_accepted": round(sum(bool(r["fault_fixed"]) for r in accepted) / max(1, len(accepted)), 3),
        "accepted_failing_a_gate": sum(r["check_ok"] is False for r in accepted),
        "rejected_but_changed": sum(not r["accepted"] and not r["unchanged"] for r in records),
        "mean_job_seconds": round(sum(r["seconds"] for r in records) / max(1, len(records)), 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--doc", default="en_vision_01", choices=sorted(DOCUMENTS))
    parser.add_argument("--fault", default="fake_cite", choices=FAULTS)
    parser.add_argument("--jobs", type=int, default=None, help="run N jobs, one per document, faults in turn")
    parser.add_argument("--retries", type=int, default=2, help="attempts after the first rejected one")
    parser.add_argument("--max-seconds", type=float, default=1800.0, help="stop starting jobs after this long")
    parser.add_argument("--base-url", default=None, help="an OpenAI-compatible server instead of the local model")
    parser.add_argument("--model", default=None, help="the model name (OpenAI-compatible) or a GGUF path (local)")
    parser.add_argument("--out", default=None, help="write the records and the summary as JSON here")
    args = parser.parse_args()
    if args.base_url:
        proposer = make_proposer("openai", base_url=args.base_url, model=args.model)
    else:
        proposer = make_proposer("local", model=args.model)
    docs = sorted(DOCUMENTS)
    jobs = [(docs[i], FAULTS[i % len(FAULTS)]) for i in range(min(args.jobs, len(docs)))] if args.jobs else [
        (args.doc, args.fault)
    ]  # fmt: skip
    records: list[dict[str, Any]] = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="patchwrite-agent-") as tmp:
        for doc_id, fault_name in jobs:
            if time.perf_counter() - started > args.max_seconds:
                print(f"stopping: {args.max_seconds:g} s wall-time bound reached", file=sys.stderr)
                break
            record = anyio.run(run_job, doc_id, fault_name, proposer, args.retries, Path(tmp))
            records.append(record)
            last = record["attempts"][-1] if record["attempts"] else {}
            verdict = "accepted" if record["accepted"] else f"rejected ({last.get('stage')}: {last.get('reason')})"
            print(f"{doc_id} {fault_name}: {verdict} after {len(record['attempts'])} attempt(s), "
                  f"fault fixed {record['fault_fixed']}, {record['seconds']} s", file=sys.stderr)  # fmt: skip
            if args.out:  # after every job: a long loop cut short keeps what it did
                Path(args.out).write_text(json.dumps({"summary": summarize(records), "records": records}, indent=2))
    print(json.dumps(summarize(records), indent=2))


if __name__ == "__main__":
    main()
