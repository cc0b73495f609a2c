"""`patchwrite rate ...`: the autoraters on the command line (exit 0 ok, 1 under a threshold, 2 bad input)."""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import shown
from ..autoraters.cache import default_dir
from ..errors import InputError
from ..files.inputs import load_json, read_json, read_text
from .common import EXIT_FAILED, EXIT_OK, EXIT_USAGE

# the autoraters import rapidfuzz, pylatexenc, bibtexparser and jsonschema (about a second): only `rate` pays it
if TYPE_CHECKING:
    from ..autoraters import citation_metrics as cf1
    from ..autoraters.references import ReferenceList
    from ..autoraters.sxs import Verdict

MODES = ("skill", "paperorchestra")

#: unreadable verdicts listed in the text output (all of them are in --json)
MAX_LISTED_ERRORS = 20


def _manuscript(name: str) -> ReferenceList:
    from ..autoraters.references import load_references
    from ..snapshot.manuscript import load_manuscript

    return load_references(load_manuscript(Path(name)))  # read once: the references come from the snapshot


def _emit(args: argparse.Namespace, data: dict[str, Any], text: str) -> None:
    # strict JSON: every input was read without NaN or Infinity, so nothing non-finite reaches here; the text holds
    # the manuscript's and its .bib's words (titles, keys) and a judge's reply: printed escaped, as everything else
    print(json.dumps(data, indent=2, allow_nan=False) if args.json else shown.listing(text))


def cmd_refs(args: argparse.Namespace) -> int:
    """Print the numbered reference list a judge sees."""
    refs = _manuscript(args.file)
    lines = [r.line() for r in refs.references]
    notes = [f"# {len(refs.unresolved)} cited key(s) not found: {', '.join(r.key for r in refs.unresolved)}"]
    notes += [f"# bibliography {name} not found beside the manuscript nor by kpsewhich" for name in refs.missing_bibs]
    _emit(args, refs.to_json(), "\n".join(lines + (notes if refs.unresolved else notes[1:])))
    return EXIT_OK


def _partition(value: str | None, refs: ReferenceList) -> cf1.Partition | None:
    from ..autoraters.citation_metrics import parse_partition

    if value is None:
        return None
    return parse_partition(read_json(Path(value)), refs.references, value)


def _f1_text(result: cf1.CitationF1) -> str:
    def block(name: str, b: cf1.Block | None) -> str:
        if b is None:
            return f"{name:8} -"
        undefined = "" if b.defined else "  (undefined: an empty side)"
        return (f"{name:8} P {b.precision:.3f}  R {b.recall:.3f}  F1 {b.f1:.3f}  "
                f"(GT {b.n_gt}, generated {b.n_gen}, both {b.n_intersection}){undefined}")  # fmt: skip

    lines = [f"mode {result.mode}"]
    if result.mode == "skill":
        lines += [block("P0", result.p0), block("P1", result.p1)]
    lines.append(block("overall", result.overall))
    if result.mode == "paperorchestra" and result.partitioned:
        lines.append(f"P0 recall {_fmt(result.p0_recall)}  P1 recall {_fmt(result.p1_recall)}")
    if not result.partitioned:
        lines.append("no partitions: only the overall block, over every resolved reference")
    for side, counts in result.counts.items():
        lines.append(f"{side}: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    lines += [f"unmatched GT {r.num}. {r.title or r.key}" for r in result.unmatched_gt]
    lines += [f"unmatched generated {r.num}. {r.title or r.key}" for r in result.unmatched_gen]
    return "\n".join(lines)


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _one_f1(gt: str, gen: str, gt_part: str | None, gen_part: str | None, args: argparse.Namespace) -> cf1.CitationF1:
    from ..autoraters.citation_metrics import citation_f1

    gt_refs, gen_refs = _manuscript(gt), _manuscript(gen)
    gt_partition, gen_partition = _partition(gt_part, gt_refs), _partition(gen_part, gen_refs)
    if getattr(args, "judge", None):
        from ..autoraters.judges import label_references, make_judge

        # the judge labels whichever side the mode needs and no file partitions
        judge = make_judge(args.judge, cache_dir=_cache_dir(args))
        if gt_partition is None:
            gt_partition = label_references(judge, gt_refs).partition
        if args.mode == "skill" and gen_partition is None:
            gen_partition = label_references(judge, gen_refs).partition
    return citation_f1(gt_refs.references, gen_refs.references, gt_partition, gen_partition, args.mode)


def _cache_dir(args: argparse.Namespace) -> Path | None:
    if getattr(args, "no_cache", False):
        return None
    return Path(args.cache_dir) if args.cache_dir else default_dir()


def cmd_citation_f1(args: argparse.Namespace) -> int:
    """Compare a generated paper's references with a ground-truth paper's."""
    if args.pairs:
        return _pairs(args)
    if not (args.gt and args.gen):
        raise InputError("rate citation-f1", "give --gt and --gen, or --pairs FILE.csv")
    result = _one_f1(args.gt, args.gen, args.gt_partition, args.gen_partition, args)
    _emit(args, result.to_json(), _f1_text(result))
    return EXIT_FAILED if args.fail_under is not None and result.overall.f1 < args.fail_under else EXIT_OK


def _pairs(args: argparse.Namespace) -> int:
    path = Path(args.pairs)
    base = path.parent
    reader = csv.DictReader(read_text(path).splitlines())
    try:
        rows = list(reader)
    except csv.Error as exc:  # a field past csv's size limit, a NUL byte
        raise InputError(path, f"not a readable CSV ({exc})", line=reader.reader.line_num) from None
    if not rows or not {"gt", "gen"} <= set(rows[0]):
        raise InputError(path, "expected a CSV with a header naming columns gt and gen (optional gt_partition, "
                         "gen_partition)")  # fmt: skip
    from ..autoraters.citation_metrics import macro_average

    results, papers = [], []
    for line, row in enumerate(rows, start=2):
        if not (row.get("gt") or "").strip() or not (row.get("gen") or "").strip():
            raise InputError(f"{path}:{line}", "empty gt or gen")

        def rel(value: str | None) -> str | None:
            return str(base / value.strip()) if value and value.strip() else None

        result = _one_f1(rel(row["gt"]) or "", rel(row["gen"]) or "", rel(row.get("gt_partition")),
                         rel(row.get("gen_partition")), args)  # fmt: skip
        results.append(result)
        papers.append({"gt": row["gt"], "gen": row["gen"], **result.to_json()})
    macro = {"mode": args.mode, **macro_average(results), "papers": papers}
    overall = macro["overall"]["f1"] if macro.get("overall") else 0.0
    text = "\n".join([f"{p['gt']} vs {p['gen']}: overall F1 {p['overall']['f1']:.3f}" for p in papers]
                     + [f"macro-average over {len(papers)} paper(s): overall F1 {overall:.3f}"])  # fmt: skip
    _emit(args, macro, text)
    return EXIT_FAILED if args.fail_under is not None and overall < args.fail_under else EXIT_OK


def _verdict_rows(path: Path) -> list[Verdict]:
    from ..autoraters.sxs import LINE_FORMAT, Verdict

    # one line, one record: a line that cannot be read is that record's error, never the whole batch's
    rows = []
    for line, raw in enumerate(read_text(path).splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            record = load_json(raw, path, line, finite=True)
        except InputError as exc:
            rows.append(Verdict(None, None, None, line, exc.problem))
            continue
        if not isinstance(record, dict) or "pair" not in record:
            rows.append(Verdict(None, None, None, line, f"expected {LINE_FORMAT}"))
            continue
        rows.append(Verdict(record["pair"], record.get("call1"), record.get("call2"), line))
    return rows


def _verdict_text(result: dict[str, Any], path: str) -> str:
    errors = [p for p in result["pairs"] if "error" in p]
    lines = [f"{path}:{p['line']}: {p['error']}" if p.get("line") else f"pair {p['pair']!r}: {p['error']}"
             for p in errors[:MAX_LISTED_ERRORS]]  # fmt: skip
    if len(errors) > MAX_LISTED_ERRORS:
        lines.append(f"... and {len(errors) - MAX_LISTED_ERRORS} more (--json lists every one)")
    text = (
        f"{result['n']} pair(s), {result['n_errors']} unreadable; win {_fmt(result['win_rate'])}, "
        f"tie {_fmt(result['tie_rate'])}, loss {_fmt(result['loss_rate'])}; win with ties as half "
        f"{_fmt(result['win_rate_half_ties'])}; orders disagree {_fmt(result['position_inconsistency'])}"
    )
    if result["interval"]:
        text += f"; 95% interval of the win rate [{result['interval'][0]:.3f}, {result['interval'][1]:.3f}]"
    return "\n".join([*lines, text])


def cmd_sxs(args: argparse.Namespace) -> int:
    """Judge two papers side by side twice (order swapped), or aggregate recorded verdicts."""
    if args.verdicts:
        from ..autoraters.sxs import batch

        if args.papers:
            raise InputError("rate sxs", "--verdicts aggregates recorded verdicts; give no papers with it")
        result = batch(_verdict_rows(Path(args.verdicts)))
        _emit(args, result, _verdict_text(result, args.verdicts))
        failed = args.fail_under is not None and (result["win_rate_half_ties"] or 0.0) < args.fail_under
        return EXIT_FAILED if failed or (args.fail_on_error and result["n_errors"]) else EXIT_OK
    fail_on = [v.strip() for v in (args.fail_on or "").split(",") if v.strip()]
    if any(v not in ("win", "tie", "loss") for v in fail_on):
        raise InputError("--fail-on", f"{args.fail_on!r}: use outcomes win, tie or loss, comma-separated")
    if len(args.papers) != 2 or not args.judge:
        raise InputError("rate sxs", "give two papers A.tex B.tex and --judge SPEC (or --verdicts FILE.jsonl)")
    from ..autoraters.judges import make_judge, run_sxs

    for name in args.papers:
        read_text(Path(name))
    judge = make_judge(args.judge, cache_dir=_cache_dir(args))
    data = run_sxs(judge, Path(args.papers[0]), Path(args.papers[1]), args.aspect).to_json()
    lines = [f"call {i + 1} ({' vs '.join(c['order'])}): {c.get('winner') or 'ERROR ' + str(c.get('error'))}"
             for i, c in enumerate(data["calls"])]  # fmt: skip
    lines.append(f"outcome for A ({args.papers[0]}): {data['outcome']} (5-class {data['category_5pt']}, "
                 f"3-class {data['category_3pt']})")  # fmt: skip
    _emit(args, data, "\n".join(lines))
    if data["outcome"] is None:
        unreached = [c for c in data["calls"] if str(c.get("error") or "").startswith("no reply")]
        if unreached:  # the judge was never heard: the machine's or the network's fault, not the papers'
            print(shown.line(f"patchwrite: environment error: {args.judge}: {unreached[0]['error']}"), file=sys.stderr)
            return EXIT_USAGE
        return EXIT_FAILED
    return EXIT_FAILED if data["outcome"] in fail_on else EXIT_OK


def _avg(args: argparse.Namespace) -> float:
    from ..autoraters.litreview import VENUE_AVERAGES

    value = str(args.avg_citations).strip().lower()
    if value in VENUE_AVERAGES:
        return VENUE_AVERAGES[value]
    try:
        avg = float(value)
    except ValueError:
        raise InputError("--avg-citations", f"{args.avg_citations!r} is not a number nor one of "
                         f"{', '.join(VENUE_AVERAGES)}") from None  # fmt: skip
    if avg <= 0:
        raise InputError("--avg-citations", "must be positive")
    return avg


def cmd_litreview(args: argparse.Namespace) -> int:
    """Validate a literature-review score (or have a judge produce one, then validate it)."""
    from ..autoraters.litreview import validate

    avg = _avg(args)
    refs = _manuscript(args.file)
    count = refs.unique_works()
    if args.score:
        score = read_json(Path(args.score))
        raw = None
    elif args.judge:
        from ..autoraters.judges import make_judge, score_litreview

        reply = score_litreview(make_judge(args.judge, cache_dir=_cache_dir(args)), Path(args.file), count, avg)
        score, raw = reply.data, reply.to_json()
    else:
        raise InputError("rate litreview", "give --score FILE (a judge's JSON) or --judge SPEC")
    report = validate(score, count, avg)
    report.call = raw
    result = report.to_json()
    lines = [f"{'valid' if result['valid'] else 'INVALID'}: overall {result['overall_score']}, recomputed "
             f"{result['recomputed']['expected']} (base {result['recomputed']['base']}, deviation "
             f"{result['recomputed']['deviation']}); {count} unique cited works, "
             f"{result['citations']['ratio_to_avg']:.2f} of the venue average {avg:g}"]  # fmt: skip
    lines += [f"error: {e}" for e in result["errors"]]
    lines += [f"{v['severity']}: {v['rule']} {v['axis']} {v['score']} > {v['limit']}: {v['why']}"
              for v in result["cap_violations"]]  # fmt: skip
    _emit(args, result, "\n".join(lines))
    overall = result["overall_score"]
    under = args.fail_under is not None and (overall is None or overall < args.fail_under)
    return EXIT_FAILED if under or not result["valid"] else EXIT_OK


def cmd_halt(args: argparse.Namespace) -> int:
    """Accept, revert or halt a revision by the two score files."""
    from ..autoraters.halt import decide

    if args.plateau_streak < 1:
        raise InputError("--plateau-streak", "must be at least 1")
    result = decide(read_json(Path(args.prev)), read_json(Path(args.curr)), args.streak, args.plateau_streak,
                    args.plateau_delta, (args.prev, args.curr))  # fmt: skip
    text = f"{result['decision']}: overall {result['delta']:+g}, axis deltas sum {result['axis_delta_sum']:+g}"
    _emit(args, result, text)
    return EXIT_OK if result["decision"].startswith("accept") else EXIT_FAILED


def _judge_options(parser: argparse.ArgumentParser, required: bool = False) -> None:
    parser.add_argument(
        "--judge",
        default=None,
        required=required,
        metavar="SPEC",
        help="local, openai:MODEL@URL, or openai:MODEL (URL from $PATCHWRITE_OPENAI_BASE_URL)",
    )
    parser.add_argument("--cache-dir", default=None, help="reply cache (default $XDG_CACHE_HOME/patchwrite/judge)")
    parser.add_argument("--no-cache", action="store_true", help="call the judge even when a reply is cached")
    parser.add_argument("--json", action="store_true")  # fmt: skip


def register(sub: Any) -> None:
    """Add `patchwrite rate` and its subcommands to the main parser's subparsers."""
    rate = sub.add_parser("rate", help="autoraters: citation F1, side-by-side, literature review, halt rule")
    commands = rate.add_subparsers(dest="rate_command", required=True, parser_class=type(rate))

    refs = commands.add_parser("refs", help="print the numbered reference list a judge sees")
    refs.add_argument("file")
    refs.add_argument("--json", action="store_true")
    refs.set_defaults(func=cmd_refs)

    f1 = commands.add_parser("citation-f1", help="Citation F1 of a generated paper against a ground-truth paper")
    f1.add_argument("--gt", default=None)
    f1.add_argument("--gen", default=None)
    f1.add_argument("--gt-partition", default=None, help='JSON {"1": "P0", ...} keyed by `rate refs` numbers')
    f1.add_argument("--gen-partition", default=None)
    f1.add_argument("--mode", choices=MODES, default="skill")
    f1.add_argument("--pairs", default=None, help="CSV (gt, gen, optional gt_partition, gen_partition): "
                    "macro-average")  # fmt: skip
    f1.add_argument("--fail-under", type=float, default=None, help="exit 1 when the overall F1 is below this")
    _judge_options(f1)
    f1.set_defaults(func=cmd_citation_f1)

    sxs = commands.add_parser("sxs", help="side-by-side judgment of A against B, twice with the order swapped")
    sxs.add_argument("papers", nargs="*", metavar="PAPER")
    sxs.add_argument("--aspect", choices=("paper", "litreview"), default="paper")
    sxs.add_argument("--verdicts", default=None, help="aggregate recorded verdicts (JSONL), no judge")
    sxs.add_argument("--fail-on", default=None, help="comma-separated outcomes that exit 1 (e.g. loss)")
    sxs.add_argument("--fail-under", type=float, default=None, help="--verdicts: exit 1 under this win rate "
                     "(ties as half)")  # fmt: skip
    sxs.add_argument("--fail-on-error", action="store_true", help="--verdicts: exit 1 on any unreadable verdict")
    _judge_options(sxs)
    sxs.set_defaults(func=cmd_sxs)

    lit = commands.add_parser("litreview", help="literature-review score (0-100): validate or judge")
    lit.add_argument("file")
    lit.add_argument("--avg-citations", required=True, help="the venue's average cited works (or cvpr2025, iclr2025)")
    lit.add_argument("--score", default=None, help="validate this judge JSON instead of calling a judge")
    lit.add_argument("--fail-under", type=float, default=None)
    _judge_options(lit)
    lit.set_defaults(func=cmd_litreview)

    halt = commands.add_parser("halt", help="accept, revert or halt a revision by two score files")
    halt.add_argument("prev")
    halt.add_argument("curr")
    halt.add_argument("--streak", type=int, default=0, help="accepted steps in a row so far that gained < delta")
    halt.add_argument("--plateau-streak", type=int, default=3)
    halt.add_argument("--plateau-delta", type=float, default=1.0)
    halt.add_argument("--json", action="store_true")
    halt.set_defaults(func=cmd_halt)
