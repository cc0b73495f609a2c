"""The `patchwrite` console script. Exit codes: 0 pass, 1 checks failed or edit rejected, 2 usage or input
error (one line naming the file and the problem), 3 internal error (`--debug` shows the traceback)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path

from . import __version__
from .edit import DEFAULT_MAX_SPAN, number_lines
from .errors import EnvironmentFault, InputError, PatchwriteError
from .gates.compile import EngineMissing
from .inputs import parse_seconds, read_bytes, read_stream, read_text
from .model import WARNING, Gate, display_path, printed_lines
from .proposers.base import ProposerError
from .transaction import edit_target, try_patch

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3
REPORT_HINT = "this is a bug in patchwrite; please report it with the command that triggered it"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _seconds(text: str) -> float:
    try:
        return parse_seconds(text)
    except InputError as exc:
        raise argparse.ArgumentTypeError(exc.problem) from None


def _read_edit(source: str) -> str:
    if source == "-":
        name = "<stdin>"
        data = read_stream(sys.stdin.buffer, name, "edit")
    else:
        name = source
        data = read_bytes(Path(source), "edit")
    # undecodable bytes become lone surrogates: the parser rejects them in a body (invalid_text), with the line
    text = data.decode("utf-8", "surrogateescape")
    if not text.strip():
        raise InputError(name, "the edit is empty; expected an `EDIT N M` block or a `DELETE N M` line")
    return text


def _gates(args: argparse.Namespace, path: Path) -> list[Gate]:
    from .gates import default_gates

    return default_gates(
        path,
        compile_gate=not args.no_compile_gate,
        evidence_gate=not args.no_evidence_gate,
        engine=args.engine,
        timeout=args.timeout,
        trusted=args.trusted_input,
    )


def cmd_number(args: argparse.Namespace) -> int:
    """Print the numbered view of FILE."""
    sys.stdout.write(number_lines(read_text(Path(args.file))))
    return EXIT_OK


def cmd_apply(args: argparse.Namespace) -> int:
    """Apply one edit to FILE behind the gates."""
    path = Path(args.file)
    edit_target(path, replace_read_only=args.replace_read_only)  # a clear error before any gate is built
    edit_text = _read_edit(args.edit)
    gates = _gates(args, path)
    try:
        result = try_patch(path, edit_text, gates, max_span=args.max_span, replace_read_only=args.replace_read_only)
    except EnvironmentFault as exc:
        if not args.json:
            raise
        print(json.dumps(_fault_json(exc), indent=2))
        print(f"patchwrite: environment error: {_one_line(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        print(json.dumps(result.to_json(Path.cwd()), indent=2))
        return EXIT_OK if result.accepted else EXIT_FAILED
    if result.accepted:
        lo, hi = result.span or (0, 0)
        print(f"{path}: accepted {result.edit.verb if result.edit else 'EDIT'} {lo} {hi} ({result.seconds:.2f} s)")
    else:
        print(f"{path}: rejected at {result.stage} ({result.reason})")
        for violation in result.violations:
            print(violation.format(Path.cwd()) if violation.line else f"{path}: {violation.kind}: {violation.message}")
    for check, why in result.skipped.items():
        print(f"{path}: {check} not checked: {why}")
    return EXIT_OK if result.accepted else EXIT_FAILED


def _fault_json(exc: EnvironmentFault) -> dict[str, object]:
    """Return the `apply --json` object of a transaction an environment fault stopped (no verdict)."""
    return {"accepted": False, "stage": exc.stage, "reason": exc.reason, "span": None, "violations": [],
            "skipped": {}, "error": exc.to_json()}  # fmt: skip


def cmd_check(args: argparse.Namespace) -> int:
    """Run every gate on each root manuscript."""
    from .check import CheckOptions, check_manuscript
    from .manuscript import find_root, is_root

    if args.max_runs < 1:
        raise InputError("--max-runs", f"{args.max_runs}: at least one engine run is needed")
    options = CheckOptions(
        engine=args.engine,
        timeout=args.timeout or 60.0,
        max_runs=args.max_runs,
        use_cache=not args.no_cache,
        warnings_fail=args.strict,
        trusted=args.trusted_input,
    )
    out, failed, found, rejected = [], False, [], 0
    roots: dict[Path, Path] = {}  # resolved -> as shown; a section file stands for the root that inputs it
    for name in args.files:
        path = Path(name)
        root = path
        if not is_root(read_text(path)):
            root = find_root(path)
            if root == path.resolve():
                raise InputError(path, "not a root manuscript (no \\documentclass) and no root nearby \\inputs it")
            relative = Path(os.path.relpath(root))
            root = relative if not str(relative).startswith("..") else root
        roots.setdefault(root.resolve(), root)
    for path in roots.values():
        try:
            results = check_manuscript(path, options)
        except EnvironmentFault as exc:
            if not args.json:
                raise
            out.append({"path": str(path), "gates": {}, "error": exc.to_json()})
            print(json.dumps({"manuscripts": out}, indent=2))
            print(f"patchwrite: environment error: {_one_line(str(exc))}", file=sys.stderr)
            return EXIT_USAGE
        failed |= not all(r.ok for r in results.values())
        found += [v for r in results.values() for v in r.violations]
        rejected += int(results["compile"].details.get("cache_rejected", 0))
        out.append({"path": str(path), "gates": {k: r.to_json(Path.cwd()) for k, r in results.items()}})
        if not args.json:
            for gate, result in results.items():
                warned = sum(v.severity == WARNING for v in result.violations)
                status = ("ok" if result.ok else "FAILED") + (f" ({warned} warning(s))" if warned else "")
                if "skipped" in result.details:
                    status = f"skipped ({result.details['skipped']})"
                extra = ""
                if gate == "compile":
                    cached = ", cached" if result.details.get("cached") else ""
                    extra = f" ({result.details['engine']}, {result.details['seconds']:.2f} s{cached})"
                if result.details.get("pdf_note"):
                    extra = f" (PDF text not read: {result.details['pdf_note']}; the source rules decided)"
                print(f"{path}::{gate} {status}{extra}")
                for line in printed_lines(result.violations, Path.cwd(), "--json"):
                    print(f"  {line}")
    if args.json:
        print(json.dumps({"manuscripts": out, "cache_rejected": rejected}, indent=2))
    elif rejected:
        print(f"cache entries rejected: {rejected} (their HMAC did not verify; ignored)", file=sys.stderr)
    _write_sarif(args.sarif, found)
    return EXIT_FAILED if failed else EXIT_OK


def _write_sarif(target: str | None, violations: list) -> None:
    from .sarif import write_sarif

    if target and not write_sarif(Path(target), violations):
        raise InputError(target, "cannot write the SARIF file there")


def cmd_clean(args: argparse.Namespace) -> int:
    """Remove temp files and sandbox directories left by killed patchwrite processes."""
    from .tempfiles import sweep_temp_root, sweep_tree

    top = Path(args.dir)
    if not top.is_dir():
        raise InputError(top, "not a directory")
    removed = sweep_tree(top) + sweep_temp_root()
    for path in removed:
        print(f"removed {path}")
    print(f"{len(removed)} stale temp file(s) or sandbox(es) removed")
    return EXIT_OK


def cmd_inject(args: argparse.Namespace) -> int:
    """Inject one of the eight faults into FILE's manuscript: a site in FILE, else in any file it reads."""
    from .check import CheckOptions
    from .corpus import FaultNotApplicable
    from .corpus.verify import inject_verified, refuse_used_tree, write_tree

    path = Path(args.file)
    read_text(path)
    if args.out_tree:
        refuse_used_tree(Path(args.out_tree))  # before the compiles, not after
    options = CheckOptions(engine=args.engine, timeout=args.timeout or 60.0)
    try:
        verified = inject_verified(path, args.fault, options)
    except FaultNotApplicable as exc:
        raise InputError(path, str(exc)) from None
    fault, site = verified.fault, verified.path or path
    written = []
    if args.out_tree:
        written.append(str(write_tree(verified, Path(args.out_tree))))
    if args.output != "-":
        Path(args.output).write_text(fault.broken, encoding="utf-8", newline="")
        written.append(args.output)
    elif not args.out_tree:
        sys.stdout.write(fault.broken)
    where = display_path(str(site), Path.cwd())
    print(f"{where}:{fault.line}: {fault.name} ({fault.fault_class}): {fault.note}", file=sys.stderr)
    for skipped in verified.rejected:
        print(f"  skipped a site that does not break the document: {skipped}", file=sys.stderr)
    print(f"  verified: {verified.outcome}", file=sys.stderr)
    for out in written:
        print(f"  written to {out}", file=sys.stderr)
    return EXIT_OK


def _csv(value: str | None, allowed: tuple[str, ...], what: str) -> tuple[str, ...]:
    if not value:
        return allowed
    chosen = tuple(v.strip() for v in value.split(",") if v.strip())
    unknown = [v for v in chosen if v not in allowed]
    if unknown:
        raise InputError(f"--{what}", f"unknown {what} {', '.join(unknown)}; choose from {', '.join(allowed)}")
    return chosen


def cmd_stress(args: argparse.Namespace) -> int:
    """Run the oracle stress test and write summary.json, slices.json and jobs.jsonl."""
    from .corpus import BUILDS, FAULTS, select
    from .corpus.stress import CONDITIONS, StressOptions, format_table, print_progress, run_stress

    if args.build not in BUILDS:
        raise InputError("--build", f"unknown build {args.build}; use {' or '.join(BUILDS)}")
    try:
        docs = select(args.corpus, args.docs.split(",") if args.docs else None)
    except ValueError as exc:
        raise InputError("--corpus/--docs", str(exc)) from None
    options = StressOptions(
        faults=_csv(args.faults, FAULTS, "faults"),
        conditions=_csv(args.conditions, CONDITIONS, "conditions"),
        build=args.build,
        engine=args.engine,
        timeout=args.timeout or 60.0,
    )
    progress = print_progress if sys.stderr.isatty() or args.progress else None
    summary = run_stress([d.id for d in docs], options, Path(args.out), args.jobs, progress)
    print(format_table(summary))
    written = f"{args.out}/summary.json, slices.json, jobs.jsonl"
    print(f"{summary['n_jobs']} jobs in {summary['wall_seconds']:.1f} s; wrote {written}")
    return EXIT_OK


def cmd_diff(args: argparse.Namespace) -> int:
    """Report what the working tree's manuscript moved against a git revision."""
    from .gates.evidence import EvidenceConfig
    from .manuscript import find_root
    from .prdiff import GitBase, diff_manuscript, format_change

    root = find_root(Path(args.file))
    base = GitBase.open(root.parent, args.base)
    report = diff_manuscript(root, base, EvidenceConfig(), args.max_hunk)
    _write_sarif(args.sarif, report.result().violations)
    if args.json:
        print(json.dumps({"path": str(root), "base": args.base, **report.result().to_json(Path.cwd())}, indent=2))
        return EXIT_OK if report.result().ok else EXIT_FAILED
    cwd = Path.cwd()
    if report.new_manuscript:
        print(f"{root}: new in this change (not in {args.base}); every token counts as added")
    for change in report.changes:
        print(format_change(change, cwd))
    for failure in report.failures:
        print(failure.format(cwd))
    ok = report.result().ok
    print(f"{root}::diff {'ok' if ok else 'FAILED'} against {args.base}: {len(report.changes)} token change(s), "
          f"numeric Jaccard {report.numeric_jaccard:.4f}, cite Jaccard {report.cite_jaccard:.4f}")  # fmt: skip
    return EXIT_OK if ok else EXIT_FAILED


def _proposer(args: argparse.Namespace):  # noqa: ANN202 - a Proposer
    from .proposers import make_proposer

    if args.proposer == "local":
        return make_proposer("local", model=args.model, grammar=not args.no_grammar, max_tokens=args.max_tokens)
    return make_proposer(
        "openai",
        base_url=args.base_url,
        model=args.model,
        timeout=args.request_timeout,
        max_tokens=args.max_tokens or 512,
    )


def cmd_propose(args: argparse.Namespace) -> int:
    """Ask a model for one EDIT that repairs FILE as the note describes."""
    from .proposers import ProposalRequest

    path = Path(args.file)
    text = read_text(path)
    log = read_text(Path(args.log), kind="log") if args.log else ""
    request = ProposalRequest.for_text(text, log, args.note, args.max_span)
    proposal = _proposer(args).propose(request)
    print(proposal.raw)
    print(f"# {proposal.model}, {proposal.seconds:.2f} s", file=sys.stderr)
    if not args.apply:
        return EXIT_OK
    result = try_patch(path, proposal.raw, _gates(args, path), max_span=args.max_span)
    verdict = "accepted" if result.accepted else f"rejected at {result.stage} ({result.reason})"
    print(f"{path}: {verdict}", file=sys.stderr)
    return EXIT_OK if result.accepted else EXIT_FAILED


def cmd_live_stress(args: argparse.Namespace) -> int:
    """Run a model over the corpus jobs and write the live table."""
    from .corpus import FAULTS, select
    from .corpus.live import LiveOptions, run_live
    from .corpus.stress import print_progress

    try:
        docs = select(args.corpus, args.docs.split(",") if args.docs else None)
    except ValueError as exc:
        raise InputError("--corpus/--docs", str(exc)) from None
    faults = _csv(args.faults, FAULTS, "faults")
    jobs = [(d.id, f) for d in docs for f in faults][: args.limit]
    proposer = _proposer(args)
    model_path = getattr(proposer, "model_path", None)
    settings = {
        "proposer": args.proposer,
        "model": model_path.name if model_path is not None else getattr(proposer, "model", args.model),
        "grammar": not args.no_grammar if args.proposer == "local" else None,
        "max_tokens": args.max_tokens,
    }
    progress = print_progress if sys.stderr.isatty() or args.progress else None
    summary = run_live(proposer, jobs, Path(args.out), LiveOptions(build=args.build), settings, progress)
    print(json.dumps(summary, indent=2))
    return EXIT_OK


def cmd_mcp(args: argparse.Namespace) -> int:
    """Serve DIR's manuscripts to an MCP client over stdio (gated edits only)."""
    from .mcpserver import run

    return run(Path(args.dir))


def _add_proposer_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--proposer", choices=("local", "openai"), default="local")
    parser.add_argument("--model", default=None, help="GGUF path (local) or model name (openai)")
    parser.add_argument("--no-grammar", action="store_true", help="local: decode freely, without the EDIT grammar")
    parser.add_argument("--base-url", default=None, help="openai: server URL (default $PATCHWRITE_OPENAI_BASE_URL)")
    parser.add_argument("--request-timeout", type=_seconds, default=60.0, help="openai: seconds per request")
    parser.add_argument(
        "--max-tokens",
        type=int,
        default=None,
        help="longest reply (default: local 812, enough for the grammar's longest body; openai 512)",
    )


_TRUSTED_HELP = (
    "the manuscript's author is trusted: run TeX without the OS sandbox and read files outside its tree "
    "(never for a pull request from a stranger)"
)


_SARIF_HELP = "also write every violation to FILE as SARIF 2.1.0 (for GitHub code scanning)"


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of every subcommand."""
    parser = _Parser(prog="patchwrite", description="Bounded, gated edits of LaTeX manuscripts.")
    parser.add_argument("--debug", action="store_true", help="show the traceback of an internal error")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    number = sub.add_parser("number", help="print FILE numbered as a proposer sees it")
    number.add_argument("file")
    number.set_defaults(func=cmd_number)

    apply = sub.add_parser("apply", help="apply one EDIT/DELETE to FILE if every gate passes")
    apply.add_argument("file")
    apply.add_argument("edit", nargs="?", default="-", help="file holding the edit, or - for stdin (default)")
    apply.add_argument("--max-span", type=int, default=DEFAULT_MAX_SPAN)
    apply.add_argument("--no-compile-gate", action="store_true")
    apply.add_argument("--no-evidence-gate", action="store_true")
    apply.add_argument("--engine", choices=("pdflatex", "xelatex", "lualatex"), default=None)
    apply.add_argument("--timeout", type=_seconds, default=None)
    apply.add_argument("--json", action="store_true", help="print the result as one JSON object")
    apply.add_argument(
        "--replace-read-only", action="store_true", help="commit to a read-only FILE (it stays read-only)"
    )
    apply.add_argument("--trusted-input", action="store_true", help=_TRUSTED_HELP)
    apply.set_defaults(func=cmd_apply)
    check = sub.add_parser("check", help="run every gate on each root manuscript")
    check.add_argument("files", nargs="+", metavar="FILE")
    check.add_argument("--engine", choices=("pdflatex", "xelatex", "lualatex"), default=None)
    check.add_argument(
        "--timeout", type=_seconds, default=None, help="seconds before the engine is killed (default 60)"
    )
    check.add_argument("--no-cache", action="store_true", help="compile even when a verdict is cached")
    check.add_argument("--max-runs", type=int, default=5, help="most engine runs per compile (default 5)")
    check.add_argument("--strict", action="store_true", help="warnings (e.g. a repeated bib entry) fail too")
    check.add_argument("--json", action="store_true")
    check.add_argument("--trusted-input", action="store_true", help=_TRUSTED_HELP)
    check.add_argument("--sarif", metavar="FILE", default=None, help=_SARIF_HELP)
    check.set_defaults(func=cmd_check)

    clean = sub.add_parser("clean", help="remove temp files and sandboxes left by killed patchwrite processes")
    clean.add_argument("dir", nargs="?", default=".", help="directory to sweep, with its subdirectories (default .)")
    clean.set_defaults(func=cmd_clean)

    inject = sub.add_parser("inject", help="inject one of the paper's eight faults into FILE")
    inject.add_argument("file")
    inject.add_argument("--fault", required=True, help="fake_cite, bad_number, todo, swapped_acc, broken_math, "
                        "unmatched_brace, unclosed_env or undefined_cmd")  # fmt: skip
    inject.add_argument(
        "-o",
        "--output",
        default="-",
        help="where to write the broken text of the file holding the fault (default: stdout)",
    )
    inject.add_argument(
        "--out-tree",
        default=None,
        metavar="DIR",
        help="write the faulted manuscript as a copy of its whole directory into DIR (new or empty)",
    )
    inject.add_argument("--engine", choices=("pdflatex", "xelatex", "lualatex"), default=None)
    inject.add_argument("--timeout", type=_seconds, default=None, help="seconds per verification compile")
    inject.set_defaults(func=cmd_inject)

    stress = sub.add_parser("stress", help="rerun the paper's oracle stress test (Table 2)")
    stress.add_argument("--out", required=True, help="directory for summary.json, slices.json and jobs.jsonl")
    stress.add_argument("-j", "--jobs", type=int, default=None, help="worker processes (default: all cores)")
    stress.add_argument("--engine", choices=("pdflatex", "xelatex", "lualatex"), default=None)
    stress.add_argument("--faults", default=None, help="comma-separated subset of the eight faults")
    stress.add_argument("--conditions", default=None, help="comma-separated subset of the conditions")
    stress.add_argument("--corpus", default=None, help="en, zh or en,zh (default: all 24 manuscripts)")
    stress.add_argument("--docs", default=None, help="comma-separated manuscript ids")
    stress.add_argument("--build", default="surrogate", help="surrogate (the paper's, pdflatex) or ctex (xelatex)")
    stress.add_argument("--timeout", type=_seconds, default=None)
    stress.add_argument("--progress", action="store_true", help="print progress even when stderr is not a terminal")
    stress.set_defaults(func=cmd_stress)

    diff = sub.add_parser("diff", help="what a change moved against a git revision")
    diff.add_argument("file")
    diff.add_argument("--base", required=True, help="git revision to compare against (e.g. origin/main)")
    diff.add_argument("--max-hunk", type=int, default=None, help="fail hunks longer than this many lines")
    diff.add_argument("--json", action="store_true")
    diff.add_argument("--sarif", metavar="FILE", default=None, help=_SARIF_HELP)
    diff.set_defaults(func=cmd_diff)

    propose = sub.add_parser("propose", help="ask a model for one EDIT repairing FILE")
    propose.add_argument("file")
    propose.add_argument("--note", required=True, help="what is wrong (not the fix)")
    propose.add_argument("--log", default=None, help="the experimental log to show the model")
    propose.add_argument("--apply", action="store_true", help="run the proposal through the gates and commit it")
    propose.add_argument("--max-span", type=int, default=DEFAULT_MAX_SPAN)
    propose.add_argument("--no-compile-gate", action="store_true")
    propose.add_argument("--no-evidence-gate", action="store_true")
    propose.add_argument("--engine", choices=("pdflatex", "xelatex", "lualatex"), default=None)
    propose.add_argument("--timeout", type=_seconds, default=None)
    _add_proposer_options(propose)
    propose.set_defaults(func=cmd_propose)

    live = sub.add_parser("live-stress", help="a model proposes every corpus repair (the paper's live table)")
    live.add_argument("--out", required=True)
    live.add_argument("--faults", default=None)
    live.add_argument("--corpus", default=None)
    live.add_argument("--docs", default=None)
    live.add_argument("--limit", type=int, default=None, help="run only the first N jobs")
    live.add_argument("--build", default="surrogate")
    live.add_argument("--progress", action="store_true")
    _add_proposer_options(live)
    live.set_defaults(func=cmd_live_stress)

    mcp = sub.add_parser("mcp", help="an MCP server (stdio) whose only write is a gated, bounded edit")
    mcp.add_argument("dir", nargs="?", default=".", help="directory whose files the tools may touch (default .)")
    mcp.set_defaults(func=cmd_mcp)

    from .autoraters.cli import add_rate_parser
    from .explain import add_explain_parser

    add_rate_parser(sub)
    add_explain_parser(sub)
    for command in sub.choices.values():  # `patchwrite apply --debug ...` as well as `patchwrite --debug apply ...`
        command.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line and return its exit code (0 pass, 1 rejected/failed, 2 input error, 3 internal error)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except EnvironmentFault as exc:
        print(f"patchwrite: environment error: {_one_line(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    except (PatchwriteError, ProposerError, EngineMissing) as exc:
        print(f"patchwrite: error: {_one_line(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # the reader went away (`patchwrite number x | head`); nothing left to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_FAILED
    except Exception as exc:  # noqa: BLE001 - the one place that turns a bug into exit 3
        if args.debug:
            traceback.print_exc()
        else:
            print(f"patchwrite: internal error: {type(exc).__name__}: {_one_line(str(exc))}", file=sys.stderr)
            print(f"patchwrite: {REPORT_HINT}; --debug shows the traceback", file=sys.stderr)
        return EXIT_INTERNAL


def _one_line(message: str) -> str:
    first = message.strip().splitlines()[0] if message.strip() else ""
    return first if len(first) <= 500 else first[:500] + "..."


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
