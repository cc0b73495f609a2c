"""`patchwrite propose FILE --note ...`: a model proposes one EDIT (optionally applied behind the gates).

The model sees the source as it is (`ProposalRequest.numbered`: tabs, control characters and all,
so that its edit can reproduce a line exactly); what it answers is printed through
`shown.listing` (a reply is the manuscript's text and a prompt-injected model's), and `--apply`
judges the reply as it came, never the printed copy.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .. import shown
from ..edit import DEFAULT_MAX_SPAN
from ..files.inputs import read_text
from ..flows.transaction import try_patch
from .common import EXIT_FAILED, EXIT_OK, add_engine_option, gates_for, seconds


def register(sub: Any) -> None:
    """Add the `propose` subcommand."""
    parser = sub.add_parser("propose", help="ask a model for one EDIT repairing FILE")
    parser.add_argument("file")
    parser.add_argument("--note", required=True, help="what is wrong (not the fix)")
    parser.add_argument("--log", default=None, help="the experimental log to show the model")
    parser.add_argument("--apply", action="store_true", help="run the proposal through the gates and commit it")
    parser.add_argument("--max-span", type=int, default=DEFAULT_MAX_SPAN)
    parser.add_argument("--no-compile-gate", action="store_true")
    parser.add_argument("--no-evidence-gate", action="store_true")
    add_engine_option(parser)
    parser.add_argument("--timeout", type=seconds, default=None)
    add_proposer_options(parser)
    parser.set_defaults(func=run)


def add_proposer_options(parser: argparse.ArgumentParser) -> None:
    """Add the options that choose and configure the proposer (`propose`, `live-stress`)."""
    parser.add_argument("--proposer", choices=("local", "openai"), default="local")
    parser.add_argument("--model", default=None, help="GGUF path (local) or model name (openai)")
    parser.add_argument("--no-grammar", action="store_true", help="local: decode freely, without the EDIT grammar")
    parser.add_argument("--base-url", default=None, help="openai: server URL (default $PATCHWRITE_OPENAI_BASE_URL)")
    parser.add_argument("--request-timeout", type=seconds, default=60.0, help="openai: seconds per request")
    parser.add_argument(
        "--max-tokens",
        type=int,
        default=None,
        help="longest reply (default: local 812, enough for the grammar's longest body; openai 512)",
    )


def proposer_spec(args: argparse.Namespace) -> dict[str, Any]:
    """Return the proposer the options name as plain data: `{"kind": ..., "options": {...}}` (`make_proposer`'s
    arguments; what a cluster's worker builds its proposer from)."""
    import os

    if args.proposer == "local":
        options = {"model": args.model, "grammar": not args.no_grammar, "max_tokens": args.max_tokens}
        return {"kind": "local", "options": options}
    base_url = args.base_url or os.environ.get("PATCHWRITE_OPENAI_BASE_URL")  # the client's choice, for every worker
    options = {"base_url": base_url, "model": args.model, "timeout": args.request_timeout,
               "max_tokens": args.max_tokens or 512}  # fmt: skip
    return {"kind": "openai", "options": options}


def proposer_from(args: argparse.Namespace):  # noqa: ANN201 - a Proposer
    """Return the proposer the options name."""
    from ..proposers import make_proposer

    spec = proposer_spec(args)
    return make_proposer(spec["kind"], **spec["options"])


def run(args: argparse.Namespace) -> int:
    """Ask a model for one EDIT that repairs FILE as the note describes; return the exit code."""
    from ..proposers import ProposalRequest

    path = Path(args.file)
    text = read_text(path)
    log = read_text(Path(args.log), kind="log") if args.log else ""
    request = ProposalRequest.for_text(text, log, args.note, args.max_span)
    proposal = proposer_from(args).propose(request)
    print(shown.listing(proposal.raw))
    escaped = shown.escaped_in(proposal.raw)
    if escaped:
        print(f"patchwrite: note: the reply holds characters printed as escapes ({', '.join(escaped)}); "
              "--apply judges the reply as it came", file=sys.stderr)  # fmt: skip
    print(shown.line(f"# {proposal.model}, {proposal.seconds:.2f} s"), file=sys.stderr)
    if not args.apply:
        return EXIT_OK
    result = try_patch(path, proposal.raw, gates_for(args, path), max_span=args.max_span)
    verdict = "accepted" if result.accepted else f"rejected at {result.stage} ({result.reason})"
    print(shown.line(f"{path}: {verdict}"), file=sys.stderr)
    return EXIT_OK if result.accepted else EXIT_FAILED
