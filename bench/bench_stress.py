"""Benchmark: the full 768-job oracle stress run against 768 bare pdflatex runs, measured in one run.

    python bench/bench_stress.py [-j 2] [--repeat 9]

Prints the wall time of the run, 768 x the median bare `pdflatex -interaction=nonstopmode`
of one corpus manuscript, and their ratio (the issue's target: at or under 0.6 on two cores).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from pytest_patchwrite.corpus import DOCUMENTS, materialize
from pytest_patchwrite.corpus.stress import PAPER_CONDITIONS, StressOptions, run_stress


def bare_pdflatex(repeat: int) -> float:
    times = []
    with tempfile.TemporaryDirectory() as tmp:
        root = materialize(DOCUMENTS["en_vision_01"], Path(tmp))
        for _ in range(repeat):
            for stale in Path(tmp).glob("main.*"):
                if stale.suffix != ".tex":
                    stale.unlink()
            started = time.perf_counter()
            subprocess.run(["pdflatex", "-interaction=nonstopmode", root.name], cwd=tmp,
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, check=False)  # fmt: skip
            times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("-j", "--jobs", type=int, default=None)
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    bare = bare_pdflatex(args.repeat)
    with tempfile.TemporaryDirectory() as out:
        started = time.perf_counter()
        summary = run_stress(list(DOCUMENTS), StressOptions(conditions=PAPER_CONDITIONS), Path(out), args.jobs)
        wall = time.perf_counter() - started
    n = summary["n_jobs"]
    print(f"median bare pdflatex of a corpus manuscript: {bare:.3f} s")
    print(f"{n} x that:                                  {n * bare:.1f} s")
    print(f"full stress run ({n} jobs):                 {wall:.1f} s  ({wall / n * 1000:.1f} ms per job)")
    print(f"ratio:                                      {wall / (n * bare):.3f}")


if __name__ == "__main__":
    main()
