"""Benchmark: the evidence gate on large inputs (time and peak memory, each case in a fresh process).

    python bench/bench_inputs.py [--rows 1000000] [--bib-mb 20] [--reply-mb 10]

Cases: parsing a reply of REPLY_MB megabytes (commentary then one edit; one line of spaces then
a bare edit); loading a CSV log of ROWS rows; loading a .bib of BIB_MB megabytes; the evidence gate
(`try_patch` with `EvidenceGate`, no compile) on a manuscript declaring both; a reply of
REPLY_MB megabytes (commentary, then one edit) through the same gate; a reply that is one
line of REPLY_MB megabytes of spaces. Prints seconds and peak RSS; no assertion.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MANUSCRIPT = """% !patchwrite log = train.csv
\\documentclass{article}
\\begin{document}
Accuracy was 91.4\\% \\cite{key7}.
The loss fell to 0.2345 after 12 epochs \\citep{key123}.
\\bibliography{refs}
\\end{document}
"""


def make_inputs(directory: Path, rows: int, bib_mb: float, reply_mb: float) -> None:
    """Write train.csv, refs.bib, main.tex and the two replies into `directory`."""
    rng = random.Random(13)
    with open(directory / "train.csv", "w") as handle:
        handle.write("step,epoch,loss,accuracy,lr\n")
        for step in range(rows):
            handle.write(f"{step},{step // 1000},{rng.random():.6f},{rng.random():.4f},{3e-4 * rng.random():.3e}\n")
        handle.write("999999999,0,0.5,0.914,0.0003\n")
    entry = (
        "@article{{key{0},\n  title = {{A study of things number {0}}},\n  author = {{Doe, Jane and Roe, Richard}},\n"
        "  journal = {{Journal of Results}},\n  year = {{2020}},\n  volume = {{{1}}},\n  pages = {{1--10}},\n}}\n\n"
    )
    with open(directory / "refs.bib", "w") as handle:
        written, i = 0, 0
        while written < bib_mb * 1024 * 1024:
            written += handle.write(entry.format(i, i % 90))
            i += 1
    (directory / "main.tex").write_text(MANUSCRIPT)
    prose = "I looked at the numbers and the citations in the paper carefully.\n"
    commentary = prose * int(reply_mb * 1024 * 1024 / len(prose))
    (directory / "reply.txt").write_text(commentary + "```EDIT 4 4\nAccuracy was 91.4\\% \\cite{key42}.\n```\n")
    (directory / "spaces.txt").write_text(" " * int(reply_mb * 1024 * 1024) + "\nEDIT 4 4\nAccuracy was 91.4\\%.\n")


def run_case(case: str, directory: Path) -> dict[str, float | str | int]:
    """Run one case in this process and return its figures."""
    from pytest_patchwrite.flows.transaction import try_patch
    from pytest_patchwrite.gates.evidence import EvidenceConfig, EvidenceGate
    from pytest_patchwrite.numbers.logread import load_logs
    from pytest_patchwrite.snapshot.bib import load_bibliography

    root = directory / "main.tex"
    started = time.perf_counter()
    extra: dict[str, float | str | int] = {}
    if case == "csv_log":
        log = load_logs(["train.csv"], directory)
        extra = {"values": len(log.index), "bytes": (directory / "train.csv").stat().st_size}
    elif case == "bib":
        bibliography = load_bibliography([directory / "refs.bib"])
        extra = {"keys": len(bibliography.keys), "bytes": (directory / "refs.bib").stat().st_size}
    elif case in ("gate", "reply", "spaces"):
        source = {"gate": None, "reply": "reply.txt", "spaces": "spaces.txt"}[case]
        edit = "EDIT 4 4\nAccuracy was 91.4\\% \\cite{key42}.\n" if source is None else (directory / source).read_text()
        before = root.read_bytes()
        result = try_patch(root, edit, [EvidenceGate(root, EvidenceConfig())])
        root.write_bytes(before)
        extra = {"accepted": int(result.accepted), "reason": str(result.reason), "reply_bytes": len(edit)}
    elif case in ("parse_reply", "parse_spaces"):
        from pytest_patchwrite.edit import parse_edit

        text = (directory / ("reply.txt" if case == "parse_reply" else "spaces.txt")).read_text()
        started = time.perf_counter()
        edit = parse_edit(text, 7)
        extra = {"span": f"{edit.start}-{edit.end}", "reply_bytes": len(text)}
    else:
        raise SystemExit(f"unknown case {case}")
    seconds = time.perf_counter() - started
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"case": case, "seconds": round(seconds, 3), "peak_rss_mb": round(peak_mb, 1), **extra}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--bib-mb", type=float, default=20.0)
    parser.add_argument("--reply-mb", type=float, default=10.0)
    parser.add_argument("--case", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--dir", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.case:
        print(json.dumps(run_case(args.case, Path(args.dir))))
        return
    with tempfile.TemporaryDirectory(prefix="bench-inputs-") as tmp:
        directory = Path(tmp)
        make_inputs(directory, args.rows, args.bib_mb, args.reply_mb)
        for case in ("parse_reply", "parse_spaces", "csv_log", "bib", "gate", "reply", "spaces"):
            # a fresh process per case: its peak RSS is that case's alone
            out = subprocess.run(
                [sys.executable, __file__, "--case", case, "--dir", str(directory)],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            print(out.strip(), flush=True)


if __name__ == "__main__":
    main()
