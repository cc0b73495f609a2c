"""Benchmark: bindings against the pool rule, one run.

    python bench/bench_bindings.py [--real NAME=ROOT:LOG[,LOG...] ...] [--sample 60] [--rows 1000000]
                                   [--handcheck bench/results/bind_handcheck.json] [--json OUT]

Papers: the example paper, the 24 corpus manuscripts (clean HEADs) and the real papers given
with --real (a root .tex in an unpacked repository and the result files it reports, relative to
the root's directory; the magic comment is added to a scratch copy). For each paper:

- numbers bound uniquely / by context / ambiguously / derived, and unattested (`patchwrite bind`);
- discrimination: a single-digit change of a bound number (its last digit +1, mod 10) and a swap of
  two bound numbers of one table or sentence with different printed values, each applied to a
  scratch copy and checked by the number lock with the bindings file and by the pool rule (no file);
  a change is caught when the lock reports an error it did not report on the unchanged paper;
- the hand check: a JSON list of {file, line, token, at, person} rows (`person`: the locator a
  person reading the paper and the log picked, `null` when no entry is right) compared with the binder;
- `bind` time on a manuscript beside a CSV log of --rows rows.

Prints one table and the totals; --json writes every figure. No assertion: targets are in the note.
"""

from __future__ import annotations

import argparse
import json
import os
import posixpath
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from pytest_patchwrite.corpus.documents import DOCUMENTS, materialize  # noqa: E402
from pytest_patchwrite.flows.bind import bind_root  # noqa: E402
from pytest_patchwrite.gates.evidence import EvidenceConfig, evaluate  # noqa: E402
from pytest_patchwrite.snapshot.manuscript import load_manuscript  # noqa: E402

EXAMPLE = REPO / "examples" / "paper"


def _errors(root: Path, overrides: dict[Path, str], bindings: str | None, config: EvidenceConfig) -> set[tuple]:
    manuscript = load_manuscript(root, overrides, boundary=config.boundary(root))
    report = evaluate(manuscript, config, bindings_text=bindings, bindings_from_disk=False)
    return {(v.kind, v.file, v.line, v.token) for v in report.numbers or [] if v.severity == "error"}


def _digit_change(token: str) -> str | None:
    digits = [i for i, c in enumerate(token) if c.isdigit()]
    if not digits:
        return None
    i = digits[-1]
    return token[:i] + str((int(token[i]) + 1) % 10) + token[i + 1 :]


def measure(name: str, root: Path, sample: int, rng: random.Random) -> dict[str, Any]:
    """Return the counts and discrimination figures of one paper."""
    config = EvidenceConfig(trusted=True)
    started = time.perf_counter()
    outcome = bind_root(root, config)
    seconds = time.perf_counter() - started
    counts = outcome.reconciled.result.counts()
    bindings = outcome.new_text
    bound = [b for b in outcome.reconciled.result.bound]
    texts = {p: p.read_text(encoding="utf-8") for p in {b.occurrence.file for b in bound}}
    base_bound = _errors(root, {}, bindings, config)
    base_pool = _errors(root, {}, None, config)
    changes = rng.sample(bound, min(sample, len(bound)))
    caught = {"bindings": 0, "pool": 0}
    tried = 0
    for b in changes:
        occ = b.occurrence
        new = _digit_change(occ.token)
        if new is None:
            continue
        text = texts[occ.file]
        mutated = text[: occ.number.start] + new + text[occ.number.end :]
        tried += 1
        caught["bindings"] += bool(_errors(root, {occ.file: mutated}, bindings, config) - base_bound)
        caught["pool"] += bool(_errors(root, {occ.file: mutated}, None, config) - base_pool)
    groups: dict[tuple, list] = {}
    for b in bound:
        groups.setdefault((b.occurrence.file, b.occurrence.context.group), []).append(b)
    pairs = [(a, c) for members in groups.values() for i, a in enumerate(members) for c in members[i + 1 :]
             if a.occurrence.number.value != c.occurrence.number.value]  # fmt: skip
    pairs = rng.sample(pairs, min(sample, len(pairs)))
    swapped = {"bindings": 0, "pool": 0}
    for a, c in pairs:
        first, second = sorted((a.occurrence, c.occurrence), key=lambda o: o.number.start)
        text = texts[first.file]
        mutated = (text[: first.number.start] + second.token + text[first.number.end : second.number.start]
                   + first.token + text[second.number.end :])  # fmt: skip
        swapped["bindings"] += bool(_errors(root, {first.file: mutated}, bindings, config) - base_bound)
        swapped["pool"] += bool(_errors(root, {first.file: mutated}, None, config) - base_pool)
    return {
        "paper": name,
        "counts": counts,
        "bind_seconds": round(seconds, 3),
        "digit_changes": tried,
        "digit_caught": caught,
        "swaps": len(pairs),
        "swap_caught": swapped,
        "outcome": outcome,
    }


def with_logs(source: Path, root: str, logs: list[str], scratch: Path) -> Path:
    """Copy a paper into scratch with `% !patchwrite log = ...` added to its root (its bindings file left out).

    `logs` are relative to the paper's folder, as its labels write every path; the comment names them relative to
    the root's directory (`../results/*.csv` for a root in `paper/`), and the copy is made a git work tree, as the
    paper's repository is, so that a log above the root's directory lies inside the manuscript's repository.
    """
    target = scratch
    shutil.copytree(source, target, ignore=shutil.ignore_patterns(".git", "*.pdf", "*.png", "*.bindings.json"))
    path = target / root
    base = posixpath.dirname(root)
    if base:
        logs = [posixpath.relpath(log.strip(), base) for log in logs]
        subprocess.run(["git", "init", "-q", str(target)], check=True)
    path.write_text(f"% !patchwrite log = {', '.join(logs)}\n" + path.read_text(encoding="utf-8"), encoding="utf-8")
    return path


def big_log_paper(rows: int, scratch: Path) -> Path:
    """Write a small paper beside a CSV log of `rows` rows under scratch/biglog; return its root."""
    directory = scratch / "biglog"
    directory.mkdir()
    rng = random.Random(3)
    with open(directory / "per_image.csv", "w") as handle:
        handle.write("image,score,label\n")
        for i in range(rows):
            handle.write(f"img_{i:07d},{rng.random():.4f},{i % 10}\n")
    (directory / "results.json").write_text(json.dumps({"test": {"accuracy": 0.914}, "baseline": {"accuracy": 0.682}}))
    body = "Test accuracy was 91.4\\% against 68.2\\% for the baseline; per-image scores are in the log.\n"
    (directory / "main.tex").write_text("% !patchwrite log = results.json, per_image.csv\n\\documentclass{article}\n"
                                        f"\\begin{{document}}\n{body}\\end{{document}}\n")  # fmt: skip
    return directory / "main.tex"


def big_log_seconds(rows: int, scratch: Path) -> tuple[float, float]:
    """Return the wall and CPU seconds `bind` takes on a small paper beside a CSV log of `rows` rows."""
    root = big_log_paper(rows, scratch)
    started, cpu = time.perf_counter(), time.process_time()
    bind_root(root, EvidenceConfig(trusted=True))
    return time.perf_counter() - started, time.process_time() - cpu


def handcheck(path: Path, outcomes: dict[str, Any]) -> dict[str, Any]:
    """Return how often the binder picked the entry the person picked."""
    rows = json.loads(path.read_text())
    agree = 0
    for row in rows:
        outcome = outcomes[row["paper"]]
        picked = None
        for b in outcome.reconciled.result.bound:
            occ = b.occurrence
            if occ.file.name == Path(row["file"]).name and occ.number.line == row["line"] and occ.token == row["token"]:
                picked = b.best.entry.at if b.best.transform != "derived" else "derived"
        agree += picked == row["person"]
    return {"n": len(rows), "agree": agree, "share": round(agree / len(rows), 4) if rows else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--real", action="append", default=[], metavar="NAME=DIR/ROOT:LOG[,LOG]")
    parser.add_argument("--sample", type=int, default=60, help="changes and swaps tried per paper")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--handcheck", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--big-log-only", action="store_true", help="measure only the bind time with a big log")
    args = parser.parse_args()
    if args.big_log_only:
        with tempfile.TemporaryDirectory(prefix="bench-bind-") as tmp:
            wall, cpu = big_log_seconds(args.rows, Path(tmp))
        print(
            f"bind with a {args.rows:,}-row CSV log: {wall:.2f} s wall, {cpu:.2f} s CPU "
            f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; target <= 10 s)"
        )
        return
    rng = random.Random(11)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="bench-bind-") as tmp:
        scratch = Path(tmp)
        shutil.copytree(EXAMPLE, scratch / "example")
        rows.append(measure("example", scratch / "example" / "main.tex", args.sample, rng))
        corpus = []
        for doc in DOCUMENTS.values():
            corpus.append(measure(f"corpus/{doc.id}", materialize(doc, scratch / "corpus" / doc.id), args.sample, rng))
        rows.extend(corpus)
        for spec in args.real:
            name, _, rest = spec.partition("=")
            where, _, logs = rest.partition(":")
            source = Path(where)
            directory, root = source.parent, source.name
            path = with_logs(directory, root, logs.split(","), scratch / "real" / name)
            rows.append(measure(name, path, args.sample, rng))
        outcomes = {r["paper"]: r.pop("outcome") for r in rows}
        hand = handcheck(args.handcheck, outcomes) if args.handcheck else None
        seconds = big_log_seconds(args.rows, scratch) if args.rows else None
    print(f"{'paper':34} {'nums':>5} {'uniq':>5} {'ctx':>5} {'amb':>5} {'der':>5} {'unatt':>5}  "
          f"{'digit b/pool':>14} {'swap b/pool':>13}")  # fmt: skip
    for r in rows:
        c = r["counts"]
        d, s = r["digit_caught"], r["swap_caught"]
        print(f"{r['paper'][:34]:34} {c['numbers']:5} {c['unique']:5} {c['context']:5} {c['ambiguous']:5} "
              f"{c['derived']:5} {c['unattested']:5}  {d['bindings']:>4}/{d['pool']:<3}of{r['digit_changes']:<4} "
              f"{s['bindings']:>3}/{s['pool']:<3}of{r['swaps']:<3}")  # fmt: skip
    total = {k: sum(r[k] for r in rows) for k in ("digit_changes", "swaps")}
    for k in ("digit_caught", "swap_caught"):
        total[k] = {m: sum(r[k][m] for r in rows) for m in ("bindings", "pool")}
    counts = {k: sum(r["counts"][k] for r in rows) for k in rows[0]["counts"]}
    share = {
        "digit_bindings": round(total["digit_caught"]["bindings"] / max(1, total["digit_changes"]), 4),
        "digit_pool": round(total["digit_caught"]["pool"] / max(1, total["digit_changes"]), 4),
        "swap_bindings": round(total["swap_caught"]["bindings"] / max(1, total["swaps"]), 4),
        "swap_pool": round(total["swap_caught"]["pool"] / max(1, total["swaps"]), 4),
    }
    print(f"numbers: {counts}")
    print(f"single-digit changes caught: bindings {share['digit_bindings']}, pool {share['digit_pool']} "
          f"(of {total['digit_changes']}; target >= 0.99)")  # fmt: skip
    print(f"swaps caught: bindings {share['swap_bindings']}, pool {share['swap_pool']} "
          f"(of {total['swaps']}; target >= 0.95)")  # fmt: skip
    if hand:
        share_hand = hand["share"]
        print(f"binder = person on {hand['agree']} of {hand['n']} hand-checked numbers ({share_hand}; target >= 0.9)")
    if seconds is not None:
        load = os.getloadavg()[0]
        print(
            f"bind with a {args.rows:,}-row CSV log: {seconds[0]:.2f} s wall, {seconds[1]:.2f} s CPU "
            f"(load average {load:.1f} on {os.cpu_count()} cores; target <= 10 s)"
        )
    if args.json:
        out = {"papers": rows, "counts": counts, "share": share, "handcheck": hand, "big_log_seconds": seconds}
        args.json.write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
