"""Benchmark: how much of one settled pdflatex run is the preamble, and what a HEAD preamble format would save.

    python bench/bench_preamble.py [ROOT ...] [--runs 6] [--json OUT]

For the example paper and each ROOT (a real paper's main .tex; its directory is copied to a scratch directory
and settled there: pdflatex, bibtex, pdflatex, pdflatex, as a cold check does), it times, alternating, with
`/usr/bin/time`-like accounting (the child's user + system CPU seconds from `os.wait4`, and its wall time):

- `full`: one more run of the settled document (what a warm candidate's run costs);
- `start`: pdflatex loading its format and ending at once (`\\csname @@end\\endcsname`);
- `preamble`: a run that ends right after `\\begin{document}` (`\\AddToHook{begindocument/end}` ends the job,
  after the `.aux` is read; no page is shipped, so no font map is read);
- `format`: the full run from a format dumped after the document's own preamble (`pdflatex -ini
  "&pdflatex" mylatexformat.ltx main.tex`, built once beforehand), and whether that run's errors equal the
  full run's (`same_errors`; a class that needs its preamble at run time fails with the format).

It prints the medians and `preamble share` = (preamble - start) / full, `format/full` (CPU and wall). Bare
pdflatex on our own scratch copies of public papers: a measurement, not a check (no verdict is read).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
EXAMPLE = HERE.parent / "examples" / "paper" / "main.tex"
BATCH = ["pdflatex", "-interaction=nonstopmode", "-jobname=main"]
MODES = {
    "full": [*BATCH, "main"],
    "start": [*BATCH, "\\csname @@end\\endcsname"],
    "preamble": [*BATCH, "\\AddToHook{begindocument/end}{\\csname @@end\\endcsname}\\input{main}"],
    "format": [*BATCH, "-fmt=pwfmt", "main"],
}


def _timed(argv: list[str], cwd: Path) -> tuple[float, float, int]:
    """Return (CPU seconds, wall seconds, exit status) of one run."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_utime + usage.ru_stime, time.perf_counter() - started, proc.returncode


def _errors(work: Path) -> list[str]:
    log = (work / "main.log").read_text(errors="replace")
    return [line for line in log.splitlines() if line.startswith("!")]


def measure(root: Path, runs: int) -> dict[str, object]:
    """Return the medians of each mode for the document at `root` (settled in a scratch copy)."""
    with tempfile.TemporaryDirectory(prefix="bench-preamble-") as tmp:
        work = Path(tmp) / "paper"
        shutil.copytree(root.parent, work, ignore=shutil.ignore_patterns("*.aux", "*.bbl", "*.log", "*.pdf"))
        if root.name != "main.tex":
            shutil.copyfile(root, work / "main.tex")
        for argv in (MODES["full"], ["bibtex", "main"], MODES["full"], MODES["full"]):
            _timed(argv, work)
        settled = _errors(work)
        _timed(["pdflatex", "-ini", "-interaction=nonstopmode", "-jobname=pwfmt", "&pdflatex", "mylatexformat.ltx",
                "main.tex"], work)  # fmt: skip
        times: dict[str, list[tuple[float, float]]] = {mode: [] for mode in MODES}
        same = True
        for _ in range(runs):
            for mode, argv in MODES.items():
                cpu, wall, _status = _timed(argv, work)
                times[mode].append((cpu, wall))
                if mode == "format":
                    same = same and _errors(work) == settled
        med = {mode: (statistics.median(c for c, _ in got), statistics.median(w for _, w in got))
               for mode, got in times.items()}  # fmt: skip
    full_cpu, full_wall = med["full"]
    return {
        "cpu_s": {mode: round(c, 3) for mode, (c, _) in med.items()},
        "wall_s": {mode: round(w, 3) for mode, (_, w) in med.items()},
        "preamble_share_cpu": round((med["preamble"][0] - med["start"][0]) / full_cpu, 3),
        "format_over_full_cpu": round(med["format"][0] / full_cpu, 3),
        "format_over_full_wall": round(med["format"][1] / full_wall, 3),
        "same_errors": same,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("roots", nargs="*", type=Path, help="real papers' main .tex files")
    parser.add_argument("--runs", type=int, default=6, help="runs of each mode, alternating")
    parser.add_argument("--json", type=Path, default=None, help="write the figures to this file")
    args = parser.parse_args()
    figures = {}
    for root in [EXAMPLE, *args.roots]:
        name = "example" if root == EXAMPLE else root.resolve().parent.parent.name or root.parent.name
        found = figures[name] = measure(root.resolve(), args.runs)
        cpu = found["cpu_s"]
        print(f"{name}: CPU full {cpu['full']:.3f} s, start {cpu['start']:.3f}, preamble {cpu['preamble']:.3f}, "
              f"format {cpu['format']:.3f}; preamble share {found['preamble_share_cpu']:.2f}; format/full CPU "
              f"{found['format_over_full_cpu']:.2f}, wall {found['format_over_full_wall']:.2f}; same errors with "
              f"the format: {found['same_errors']}", flush=True)  # fmt: skip
    if args.json:
        load = os.getloadavg()
        args.json.write_text(json.dumps({"runs": args.runs, "load": [round(x, 1) for x in load],
                                         "documents": figures}, indent=2) + "\n")  # fmt: skip


if __name__ == "__main__":
    main()
