"""Benchmark: the full 768-job oracle stress run against 768 bare pdflatex runs, measured in one run.

    python bench/bench_stress.py [-j 2] [--repeat 9] [--sandbox-overhead] [--detection] [--runs 1] [--json OUT]

Prints the wall time of the run, 768 x the median bare `pdflatex -interaction=nonstopmode`
of one corpus manuscript, and their ratio (the target: at or under 0.2 on two cores). The bare runs are
sampled half before and half after the stress run, so a load that changes meanwhile weighs on both sides.
`--runs N` repeats the whole measurement N times and prints the median ratio; `--json OUT` writes the figures.
`--detection` also times the same run with the opt-in `detection` pass (`patchwrite stress --detection`,
what the default run did before), right after, and prints that wall and its ratio.
`--sandbox-overhead` also runs the stress run without the OS sandbox (trusted) right after, and prints
the ratio of the two walls.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from pytest_patchwrite.corpus import DOCUMENTS, materialize
from pytest_patchwrite.corpus.stress import PAPER_CONDITIONS, StressOptions, run_stress


def bare_pdflatex(repeat: int) -> list[float]:
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
    return times


def stress_wall(jobs: int | None, trusted: bool, detection: bool = False) -> tuple[float, int]:
    """Return (wall seconds, jobs) of one full stress run, with or without the OS sandbox (and the detection pass)."""
    options = StressOptions(conditions=PAPER_CONDITIONS, trusted=trusted, detection=detection)
    with tempfile.TemporaryDirectory() as out:
        started = time.perf_counter()
        summary = run_stress(list(DOCUMENTS), options, Path(out), jobs)
        return time.perf_counter() - started, int(summary["n_jobs"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("-j", "--jobs", type=int, default=None)
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--sandbox-overhead", action="store_true", help="also run without the sandbox; print both")
    parser.add_argument("--detection", action="store_true", help="also time the run with the detection pass")
    parser.add_argument("--runs", type=int, default=1, help="repeat the whole measurement; report the median ratio")
    parser.add_argument("--json", type=Path, default=None, help="write the figures to this file")
    args = parser.parse_args()
    figures = []
    for _ in range(args.runs):
        before = bare_pdflatex((args.repeat + 1) // 2)
        wall, n = stress_wall(args.jobs, trusted=False)
        detected = stress_wall(args.jobs, trusted=False, detection=True)[0] if args.detection else None
        bare = statistics.median(before + bare_pdflatex(args.repeat // 2))
        print(f"median bare pdflatex of a corpus manuscript: {bare:.3f} s")
        print(f"{n} x that:                                  {n * bare:.1f} s")
        print(f"full stress run ({n} jobs):                 {wall:.1f} s  ({wall / n * 1000:.1f} ms per job)")
        print(f"ratio:                                      {wall / (n * bare):.3f}", flush=True)
        ratio = round(wall / (n * bare), 3)
        figures.append({"bare_s": round(bare, 4), "jobs": n, "wall_s": round(wall, 2), "ratio": ratio})
        if detected is not None:
            print(f"same run with the detection pass:          {detected:.1f} s  (ratio {detected / (n * bare):.3f})")
            figures[-1] |= {"detection_wall_s": round(detected, 2), "detection_ratio": round(detected / (n * bare), 3)}
        if args.sandbox_overhead:
            unconfined, _ = stress_wall(args.jobs, trusted=True)
            print(f"same run without the OS sandbox:            {unconfined:.1f} s")
            print(f"sandbox overhead (sandboxed / unconfined):  {wall / unconfined:.3f}")
            figures[-1]["unconfined_wall_s"] = round(unconfined, 2)
    median = statistics.median(f["ratio"] for f in figures)
    print(f"median ratio over {len(figures)} run(s): {median:.3f}")
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"median_ratio": median, "runs": figures}, indent=2) + "\n")


if __name__ == "__main__":
    main()
